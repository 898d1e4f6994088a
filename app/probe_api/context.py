"""ProbeContext: everything a probe may ask for, and nothing more.

Containers (labelled, on the cell's private network, secrets as files), exec with a
deadline, SQL through a client binary, readiness waits that notice a dead container,
named checks, and the backend server of the cell. Everything a context creates is
removed by `close()`, which the runner awaits in `finally`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ecoready.domain.errors import (
    BackendFailed,
    CheckFailed,
    DeadlineExceeded,
    EcoreadyError,
    EmulatorTooOld,
    EngineError,
    ImageUnavailable,
    InfraError,
    LicenceRequired,
    Skip,
    SqlError,
    StageFailed,
)
from ecoready.domain.events import BenchReported, CheckReported
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import BenchResult, Check, HostFacts, Outcome, Stage
from ecoready.domain.packaging import Packaging
from ecoready.domain.specs import (
    ContainerSpec,
    ContainerState,
    ExecResult,
    SecretFile,
    nano_cpus,
)
from ecoready.domain.text import one_line
from ecoready.engine.platform import emulated_cpu_env
from ecoready.engine.procnet import until_listening
from ecoready.probe_api.exits import classify_exit, emulator_refusal, stopped_failure
from ecoready.probe_api.handles import Container, Endpoint
from ecoready.probe_api.refusals import start_refused
from ecoready.probe_api.resources import CellResources
from ecoready.probe_api.run_context import RunContext, resource_labels
from ecoready.probe_api.secrets import Secret
from ecoready.probe_api.sql import Row, SqlTarget, client_command, option_file, parse_error, parse_xml

if TYPE_CHECKING:
    from ecoready.matrix.bench_settings import BenchSettings
    from ecoready.plan.cells import CellPlan

SECRETS_DIR = "/run/ecoready"
CLIENT_FILES = f"{SECRETS_DIR}/client-"  # option files of sql(), by user and password
DEFAULT_EXEC_TIMEOUT = 60.0


class ProbeContext:
    def __init__(
        self, cell: CellPlan, run: RunContext, *, parent: ProbeContext | None = None, role_prefix: str = ""
    ) -> None:
        self.cell = cell
        self.run = run
        self.stage: Stage = Stage.START
        self.waiting_for = ""  # what a readiness wait last saw, for timeout details
        self.main: Container | None = None  # the container whose log tail the report shows
        self.spent = 0.0  # seconds in stages (the runner adds each stage's time)
        self.failed_checks: list[str] = []
        self.timed_out_checks: list[str] = []
        self._parent = parent
        self._role_prefix = role_prefix
        self._resources: CellResources = parent._resources if parent else CellResources()
        self._network: str | None = parent._network if parent else None
        self._network_lock: asyncio.Lock = parent._network_lock if parent else asyncio.Lock()
        self._option_files: set[tuple[str, str]] = set()
        self._backend: Endpoint | None = None
        # Environment added to every container of the cell, backends included (one dict
        # shared with child contexts): the CPU model emulated for the arch, which the
        # runner's retry replaces with QEMU_CPU=max.
        self.extra_env: dict[str, str] = parent.extra_env if parent else {}
        if parent is None and cell.emulated:
            self.extra_env.update(emulated_cpu_env(cell.arch))
        self.packaging: Packaging | None = None  # a driver row's (probe_api/install_cache.py)

    # -- facts -----------------------------------------------------------------------
    @property
    def arch(self) -> str:
        return self.cell.arch

    @property
    def emulated(self) -> bool:
        return self.cell.emulated

    @property
    def options(self) -> Mapping[str, Any]:
        return self.cell.component.options

    @property
    def image_ref(self) -> str:
        return self.cell.component.image

    @property
    def host_facts(self) -> HostFacts | None:
        """What the engine this cell runs on turned out to be (CPUs, arch, prices)."""
        return self.run.hosts.get(self.cell.host)

    @property
    def bench_settings(self) -> BenchSettings | None:
        """The cell's bench stage settings (None: the plan runs no bench for this cell)."""
        return self.cell.bench

    def cpuset(self, side: str) -> str | None:
        """CPUs for one side of a benchmarked cell: "server" (the component and its backend)
        or "client" (sysbench). Disjoint halves of the host's CPUs when it has two or more,
        so the load generator never steals the server's CPU; None (no pinning) otherwise
        and for cells that run no bench."""
        facts = self.host_facts
        cpus = facts.cpus if facts else 0
        if self.cell.bench is None or cpus < 2:
            return None
        server = (cpus + 1) // 2
        first, last = (0, server - 1) if side == "server" else (server, cpus - 1)
        return str(first) if first == last else f"{first}-{last}"

    def scaled(self, seconds: float) -> float:
        """A native duration scaled for emulation."""
        return seconds * (self.run.emulation_factor if self.emulated else 1.0)

    def secret(self, name: str) -> Secret:
        return self.run.secrets.new(f"{self.cell.id}:{name}")

    def known_secret(self, name: str, value: str) -> Secret:
        """A secret the matrix gave (e.g. a password option), registered with the run so it
        is redacted like the generated ones."""
        return self.run.secrets.add(f"{self.cell.id}:{name}", value)

    def redact(self, text: str) -> str:
        return self.run.secrets.redact(text)

    # -- resources -------------------------------------------------------------------
    def labels(self, role: str) -> dict[str, str]:
        return resource_labels(self.run, self.cell.id, role)

    def _name(self, role: str) -> str:
        safe = self.cell.id.replace("/", "-").replace(".", "-")
        return f"ecoready-{self.run.run_id[:8]}-{safe}-{role}"[:120]

    async def network(self) -> str:
        """The cell's private network (internal: no way out, nothing published)."""
        async with self._network_lock:
            if self._network is None:
                name = self._name("net")
                self._network = await self.run.host.create_network(name, self.labels("network"), internal=True)
                self._resources.networks.append(self._network)
                if self._parent is not None:
                    self._parent._network = self._network
            return self._network

    async def image(self, reference: str | None = None) -> str:
        """Local image id of `reference` (default: this component's image) for the cell's
        arch, resolved in its registry and pulled once per host."""
        info = await self.run.images.ensure(reference or self.image_ref, self.arch)
        return info.image_id

    async def image_info(self, reference: str | None = None) -> ImageInfo:
        """Registry facts (digests) of an image for the cell's arch; pulled once per host."""
        return await self.run.images.ensure(reference or self.image_ref, self.arch)

    async def volume(self, role: str) -> str:
        name = self._name(f"{self._role_prefix}{role}")
        await self.run.host.create_volume(name, self.labels(role))
        self._resources.volumes.append(name)
        return name

    async def start_container(
        self,
        role: str,
        *,
        image: str | None = None,
        env: Mapping[str, str] | None = None,
        files: Mapping[str, bytes | Secret] | None = None,
        command: Sequence[str] | None = None,
        entrypoint: Sequence[str] | None = None,
        user: str | None = None,
        mem_limit: str = "2g",
        volumes: Mapping[str, str] | None = None,
        cpuset_cpus: str | None = None,
        tool: bool = False,
        image_id: str | None = None,
        healthcheck: Sequence[str] = (),
        health_interval: float | None = None,
    ) -> Container:
        """Start a labelled container of the cell's arch on the cell network.

        `files` maps container paths to content; a Secret becomes a 0444 file, so a
        password reaches the container only as `*_FILE`, never in its environment.
        `tool`: the image is one of ecoready's tools (e.g. sysbench), not the component:
        when it is not available for the arch, that is an infrastructure error; the row's
        `cpus` quota holds every other container (a backend's: its own row's).
        `image_id`: a local image (e.g. from `install`) instead of a registry reference.
        `healthcheck`: Docker's test (empty: the image's own), run every `health_interval`
        seconds (`state().health`). A refused start is blamed in `refusals.start_refused`.
        """
        role = f"{self._role_prefix}{role}"
        try:
            image_id = image_id or await self.image(image)
        except EcoreadyError as exc:
            if not tool or isinstance(exc, (InfraError, DeadlineExceeded)):
                raise
            raise InfraError(f"the {role} tool image {image} is not usable for {self.arch}: {exc}") from None
        network = await self.network()
        alias = role
        spec = ContainerSpec(
            image=image_id,
            name=self._name(role),
            labels=self.labels(role),
            network=network,
            aliases=(alias,),
            env={**(env or {}), **self.extra_env},
            command=tuple(command) if command is not None else None,
            entrypoint=tuple(entrypoint) if entrypoint is not None else None,
            files=tuple(
                SecretFile(path, v.reveal().encode() if isinstance(v, Secret) else v)
                for path, v in (files or {}).items()
            ),
            files_dir=SECRETS_DIR,
            user=user,
            mem_limit=mem_limit,
            cpuset_cpus=cpuset_cpus,
            nano_cpus=None if tool else nano_cpus(self.cell.component.cpus),
            volumes=dict(volumes or {}),
            healthcheck=tuple(healthcheck),
            health_interval=health_interval,
        )
        try:
            container_id = await self.run.host.run(spec)
        except EngineError as exc:
            raise start_refused(self.cell.component, self.arch, role, image or self.image_ref, str(exc)) from None
        container = Container(container_id, spec.name, alias, role, image or self.image_ref, image_id)
        self._option_files.update((container_id, path) for path in files or {} if path.startswith(CLIENT_FILES))
        self._resources.containers.append(container)
        if self.main is None:
            self.main = container
        return container

    async def remove(self, container: Container) -> None:
        await self.run.host.remove_container(container.id)
        if container in self._resources.containers:
            self._resources.containers.remove(container)
        if self.main is container:
            self.main = None  # the next container started is the one the report shows

    async def stop(self, container: Container, timeout: int = 10) -> None:
        await self.run.host.stop(container.id, timeout)

    async def restart(self, container: Container) -> None:
        await self.run.host.start(container.id)

    async def reset(self) -> None:
        """Remove everything and forget it, so the probe can start again from scratch
        (the runner's retry with QEMU_CPU=max)."""
        await self.close()
        self._network = None
        self._option_files.clear()
        self._backend = None
        self.main = None
        self.waiting_for = ""

    async def close(self) -> list[str]:
        """Remove every container, network and volume this cell created; one line for each
        the engine would not remove (probe_api/resources.py)."""
        return await self._resources.remove_all(self.run.host)

    # -- exec, logs, files --------------------------------------------------------------
    async def exec(
        self,
        container: Container,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        user: str = "",
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        limit = timeout if timeout is not None else self.scaled(DEFAULT_EXEC_TIMEOUT)
        result = await self.run.host.exec(container.id, argv, timeout=limit, user=user, env=env)
        if self.emulated and not result.ok:
            refused = emulator_refusal(f"`{argv[0]}`", result.stderr + result.stdout, result.exit_code, self._qemu_cpu)
            if refused is not None:
                raise refused
        return ExecResult(result.exit_code, self.redact(result.stdout), self.redact(result.stderr), result.seconds)

    async def put_files(self, container: Container, files: Mapping[str, bytes | Secret]) -> None:
        await self.run.host.put_files(
            container.id,
            tuple(SecretFile(path, v.reveal().encode() if isinstance(v, Secret) else v) for path, v in files.items()),
        )

    async def logs(self, container: Container | None = None, tail: int = 40) -> list[str]:
        target = container or self.main
        if target is None:
            return []
        return [self.redact(line) for line in await self.run.host.logs(target.id, tail)]

    async def state(self, container: Container) -> ContainerState:
        return await self.run.host.state(container.id)

    async def why_stopped(self, container: Container) -> str:
        state = await self.state(container)
        return classify_exit(state, await self.logs(container, 60), emulated=self.emulated)

    async def stopped_error(self, container: Container) -> StageFailed | LicenceRequired:
        """The failure to raise for a container that stopped (`exits.stopped_failure`)."""
        lines = await self.logs(container, 60)
        state = await self.state(container)
        main = container is self.main
        return stopped_failure(state, lines, container.role, main=main, emulated=self.emulated, qemu_cpu=self._qemu_cpu)

    @property
    def _qemu_cpu(self) -> str:
        """The CPU the emulator runs as (`narrow_cpu_refusal`: a wider core is tried next)."""
        return self.extra_env.get("QEMU_CPU", "") if self.emulated else ""

    # -- SQL ---------------------------------------------------------------------------
    async def _client(self, via: Container) -> str:
        if via.image_id not in self.run.client_paths:
            found = await self.exec(
                via, ["sh", "-c", "command -v mariadb || command -v mysql"], timeout=self.scaled(30)
            )
            path = found.stdout.strip().splitlines()[0] if found.ok and found.stdout.strip() else ""
            if not path:
                raise StageFailed(f"no mariadb or mysql client in {via.role}'s image")
            self.run.client_paths[via.image_id] = path
        return self.run.client_paths[via.image_id]

    def client_option_file(self, user: str, password: Secret | None) -> dict[str, bytes]:
        """The client option file `sql()` uses for this user, as `files` for
        `start_container`: there from the start, it need not be copied in later (each copy
        costs the engine about as much CPU as an exec)."""
        cnf = f"{CLIENT_FILES}{user}-{'nopw' if password is None else password.name.split(':')[-1]}.cnf"
        return {cnf: option_file(user, password.reveal() if password else "")}

    async def sql(
        self,
        via: Container,
        target: SqlTarget,
        password: Secret | None,
        statement: str,
        *,
        timeout: float | None = None,
    ) -> list[Row]:
        """Run `statement` with the client in `via` against `target` over TCP; the rows of
        the last result set. Raises SqlError when the server or client refuses it."""
        results = await self.sql_results(via, target, password, statement, timeout=timeout)
        return results[-1] if results else []

    async def sql_results(
        self,
        via: Container,
        target: SqlTarget,
        password: Secret | None,
        statement: str,
        *,
        timeout: float | None = None,
    ) -> list[list[Row]]:
        """Like `sql`, every result set of the statements in order (statements that return
        none, such as INSERT, add none): several steps in one client run, one exec."""
        client = await self._client(via)
        ((cnf, content),) = self.client_option_file(target.user, password).items()
        key = (via.id, cnf)
        if key not in self._option_files:
            await self.put_files(via, {cnf: content})
            self._option_files.add(key)
        argv = client_command(client, cnf, target, statement)
        result = await self.exec(via, argv, timeout=timeout if timeout is not None else self.scaled(60))
        if not result.ok:
            raise parse_error(result.stderr or result.stdout, self.redact(statement))
        try:
            return parse_xml(result.stdout)
        except Exception as exc:
            raise SqlError(f"unreadable client output: {exc}", statement=statement) from None

    # -- waiting and checks ---------------------------------------------------------
    async def wait_ready(
        self,
        container: Container,
        attempt: Callable[[], Awaitable[object]],
        *,
        what: str,
        port: int | None = None,
        port_of: Container | None = None,
    ) -> float:
        """Poll `attempt` until it succeeds; seconds waited. Fails at once (StageFailed)
        when the container stops; the runner's stage budget bounds the whole wait.

        `port`: the attempt needs a TCP listener on this port of `port_of` (default
        `container`). While /proc shows nothing listening there, no attempt can succeed, so
        none is run: each is an exec, which costs far more than the look (engine/procnet.py).
        """
        started = time.monotonic()
        delay = 0.2
        while True:
            state = await self.state(container)
            if not state.running:
                raise await self.stopped_error(container)
            if state.paused:
                self.waiting_for = f"waiting for {what}; the container is paused"
            else:
                if port is not None:
                    target = port_of or container
                    pid = state.pid if target is container else (await self.state(target)).pid
                    waiting = f"waiting for {what}; nothing listens on port {port} in {target.role} yet"
                    await until_listening(pid, target.id, port, partial(setattr, self, "waiting_for", waiting))
                try:
                    await attempt()
                    self.waiting_for = ""
                    return time.monotonic() - started
                except EmulatorTooOld:
                    raise  # waiting longer cannot help; the runner retries with QEMU_CPU=max
                except (SqlError, CheckFailed, StageFailed, DeadlineExceeded, InfraError) as exc:
                    if isinstance(exc, InfraError) and not await self.run.host.ping():
                        raise
                    self.waiting_for = f"waiting for {what}; last: {one_line(self.redact(str(exc)), 160)}"
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 2.0)

    async def check(self, name: str, fn: Callable[[], Awaitable[str | None]]) -> bool:
        """Run one named check; report pass/fail/timeout with its detail. Infrastructure
        errors propagate (they end the stage as `error`, not the check as failed)."""
        started = time.monotonic()
        outcome, detail = Outcome.PASS, ""
        try:
            detail = (await fn()) or ""
        except (CheckFailed, StageFailed, SqlError) as exc:
            outcome, detail = Outcome.FAIL, str(exc)
        except DeadlineExceeded as exc:
            outcome, detail = Outcome.TIMEOUT, str(exc)
        except InfraError:
            raise
        except EcoreadyError as exc:  # Skip: the check does not apply here ("not applicable: ...")
            outcome, detail = Outcome.SKIP if isinstance(exc, Skip) else Outcome.ERROR, str(exc)
        seconds = time.monotonic() - started
        if outcome is Outcome.FAIL or outcome is Outcome.ERROR:
            self.failed_checks.append(name)
        elif outcome is Outcome.TIMEOUT:
            self.timed_out_checks.append(name)
        self.run.emit(
            CheckReported(
                self.cell.id, self.stage, Check(name, outcome, one_line(self.redact(detail), 300), round(seconds, 3))
            )
        )
        return outcome is Outcome.PASS

    def report_bench(self, result: BenchResult) -> None:
        """Publish the cell's benchmark numbers (again, as they grow)."""
        self.run.emit(BenchReported(self.cell.id, result))

    # -- backends ---------------------------------------------------------------------
    async def backend(self) -> Endpoint:
        """Start (once) the cell's backend server on this cell's network and arch."""
        if self._backend is not None:
            return self._backend
        component = self.cell.backend
        if component is None:
            raise StageFailed(f"{self.cell.component.id} has no backend configured")
        child_cell = replace(self.cell, component=component, backend=None)
        child = ProbeContext(child_cell, self.run, parent=self, role_prefix="backend-")
        child.main = self.main  # the component's own container stays the one shown
        probe = self.run.load_probe(component.probe)(child)
        try:
            await probe.start()
        except EmulatorTooOld:
            raise  # the emulator, not the backend: the runner retries with QEMU_CPU=max
        except StageFailed as exc:
            behind = exc.blame(Stage.START).cause
            raise BackendFailed(f"did not start: {exc}", subject=component.id, behind=behind) from None
        except ImageUnavailable as exc:
            why = f"no usable image for {self.arch}: {exc}"
            raise BackendFailed(why, subject=component.id, behind=exc.cause) from None
        if probe.endpoint is None:
            raise BackendFailed(f"exposes no SQL endpoint (probe {component.probe})", subject=component.id)
        self._backend = probe.endpoint
        return probe.endpoint
