"""One Docker engine as ecoready uses it: labelled containers, networks and volumes
(each created in one call, removed whatever happens), exec with a deadline, logs, files,
and the sweeps that remove what runs left. Every SDK call goes through `Sdk` (a bounded
pool, a deadline, errors translated); images are `DockerHost.images`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from typing import Any

import docker.errors

from ecoready.domain.errors import DeadlineExceeded, EngineError
from ecoready.domain.model import HostFacts, TlsFiles, normalize_arch
from ecoready.domain.specs import (
    LABEL_RUN,
    ContainerSpec,
    ContainerState,
    ExecResult,
    RunningContainer,
    SweepResult,
)
from ecoready.domain.text import inert
from ecoready.engine import filedrop, podman
from ecoready.engine.aio import remove_when_made, to_the_end
from ecoready.engine.archive import files_tar
from ecoready.engine.discovery import EngineAddress
from ecoready.engine.engine_kinds import PODMAN, kind_of_engine
from ecoready.engine.filedrop import FileDrop
from ecoready.engine.identity import EngineIdentity, identify
from ecoready.engine.images import EngineImages
from ecoready.engine.owners import OwnerInfo, swept, this_owner
from ecoready.engine.running import running_containers
from ecoready.engine.sdk import CONNECT_TIMEOUT, CONTROL_TIMEOUT, Sdk

REMOVAL_WAIT = 30.0  # how long to wait for a removal someone else started
# Capabilities no database image needs; dropped from every container we start.
DROP_CAPS = ("NET_RAW", "MKNOD", "SYS_CHROOT", "AUDIT_WRITE", "SETFCAP", "SETPCAP")


class DockerHost:
    """One Docker engine. Create with `await DockerHost.connect(...)`."""

    def __init__(
        self, sdk: Sdk, identity: EngineIdentity, drop: filedrop.FileDrop | None = None, *, podman: bool = False
    ) -> None:
        self._sdk = sdk
        self.identity = identity
        self.name = sdk.name
        self.url = sdk.url
        # Podman behind the Docker API, as its /version says (not as its socket's path
        # suggests): containers get explicit resource limits, and its healthchecks are run
        # when due (engine/podman.py)
        self.podman = podman
        self.images = EngineImages(sdk, podman=self.podman)
        self.native_arch = ""
        # where container files are written for a bind mount; None: the archive API
        self.drop = drop
        self._dropped: dict[str, tuple[str, str]] = {}  # container id -> (name, files_dir)
        self._health_runs: dict[str, float] = {}  # Podman: container id -> when we last ran its check
        self._health_checks: set[asyncio.Future[None]] = set()  # Podman: those running

    @property
    def same_kernel(self) -> bool:
        """Whether the engine runs on this machine's kernel (engine/identity.py)."""
        return self.identity.same_kernel

    # -- lifecycle -------------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        name: str = "local",
        url: str = "",
        *,
        tls: TlsFiles | None = None,
        max_workers: int = 16,
        timeout: float = CONNECT_TIMEOUT,
    ) -> DockerHost:
        """Connect or raise EnvironmentProblem within `timeout` seconds (Sdk.connect), learn
        which engine answered, and on this machine's kernel whether container files can be
        bind-mounted."""

        def learn(client: docker.DockerClient, address: EngineAddress) -> tuple[EngineIdentity, FileDrop | None, bool]:
            version, info = client.version(), client.info()
            identity = identify(address, version, info)
            path = address.url.removeprefix("unix://")
            drop = FileDrop.for_engine(path) if identity.same_kernel else None
            return identity, drop, kind_of_engine(version, info) is PODMAN

        sdk, (identity, drop, is_podman) = await Sdk.connect(
            name, url, tls=tls, max_workers=max_workers, timeout=timeout, prepare=learn
        )
        return cls(sdk, identity, drop, podman=is_podman)

    async def close(self, timeout: float = 5.0) -> None:
        """Close the SDK clients (bounded) and remove this process's container files."""
        await self._sdk.close(timeout)
        if self.drop is not None:
            for name, _ in self._dropped.values():
                self.drop.remove(name)
            self.drop.tidy()

    def facts(self, emulated: Mapping[str, str]) -> HostFacts:
        """The engine's view, as it answered when connected (no call: /version and /info
        were read then); `emulated` comes from platform (local)."""
        identity = self.identity
        native = normalize_arch(identity.arch) or identity.arch
        self.native_arch = native
        return HostFacts(
            name=self.name,
            native_arch=native,
            emulated_arches=tuple(a for a in emulated if a != native),
            emulators={a: d for a, d in emulated.items() if a != native},
            docker_version=identity.version,
            api_version=identity.api_version,
            cpus=identity.cpus,
            memory_bytes=identity.memory_bytes,
            kernel=identity.kernel,
            engine=identity.said(),
            engine_kind=identity.kind.key,
        )

    async def ping(self, timeout: float = 5.0) -> bool:
        """Whether the engine answers a new connection now (see `Sdk.ping`)."""
        return await self._sdk.ping(timeout)

    # -- networks, volumes, containers ----------------------------------------------
    async def create_network(self, name: str, labels: Mapping[str, str], *, internal: bool = True) -> str:
        def work() -> str:
            net = self._sdk.control.networks.create(
                name, driver="bridge", internal=internal, labels=dict(labels), check_duplicate=True
            )
            return str(net.id)

        return await self._create(work, self.remove_network)

    async def _create(self, make: Callable[[], str], remove: Callable[[str], Awaitable[bool]]) -> str:
        """Run a create call; if the caller is cancelled while it is in flight (once or
        more), wait for the id it returns and remove that resource, so nothing is created
        that nobody knows of: the call ends in the engine even when its caller is gone.
        Shielded: cancelling the caller must not cancel `future` itself, or the id it
        returns could never be read, nor the resource removed."""
        future = self._sdk.submit(make)
        try:
            return await self._sdk.wait(asyncio.shield(future), CONTROL_TIMEOUT + 5)
        except DeadlineExceeded:
            future.cancel()  # a call still queued on the pool then never runs
            raise
        except asyncio.CancelledError:
            await to_the_end(remove_when_made(future, remove, CONTROL_TIMEOUT + 5))
            raise

    async def _remove_after(self, future: asyncio.Future[Any], container_id: str) -> None:
        """Remove a container once the call in flight on it (its start) has returned."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CONTROL_TIMEOUT + 5):
                await asyncio.shield(future)
        with contextlib.suppress(Exception):
            await self.remove_container(container_id)

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> str:
        def work() -> str:
            return str(self._sdk.control.volumes.create(name=name, labels=dict(labels)).name)

        return await self._create(work, self.remove_volume)

    async def run(self, spec: ContainerSpec) -> str:
        """Create (labelled), put its files, start; return the container id.

        A container that fails to start is removed here, so nothing is orphaned between
        create and start.
        """

        binds: dict[str, Mapping[str, str]] = {
            name: {"bind": path, "mode": "rw"} for name, path in spec.volumes.items()
        }
        archived = spec.files
        drop, files_dir = self.drop, spec.files_dir
        if drop is not None and files_dir is not None:
            dropped = tuple(f for f in spec.files if filedrop.below(f.path, files_dir))
            archived = tuple(f for f in spec.files if f not in dropped)
            binds[str(drop.create(spec.name, files_dir, dropped))] = {"bind": files_dir, "mode": "ro"}

        def create() -> str:
            host_config = self._sdk.control.api.create_host_config(
                network_mode=spec.network or "none",
                security_opt=["no-new-privileges"],
                cap_drop=list(DROP_CAPS),
                privileged=False,
                pids_limit=spec.pids_limit,
                mem_limit=spec.mem_limit,
                cpuset_cpus=spec.cpuset_cpus,
                nano_cpus=spec.nano_cpus,
                tmpfs=dict(spec.tmpfs) or None,
                binds=binds or None,
                port_bindings={p: ("127.0.0.1", h or None) for p, h in spec.publish.items()} if spec.publish else None,
                init=False,
                ulimits=podman.ulimits() if self.podman else None,
            )
            health = _healthcheck(spec)
            networking = None
            if spec.network:
                # the API takes {network name: endpoint config}; types-docker declares one config
                networking = self._sdk.control.api.create_networking_config(
                    {spec.network: self._sdk.control.api.create_endpoint_config(aliases=list(spec.aliases) or None)}  # type: ignore[arg-type]
                )
            created = self._sdk.control.api.create_container(
                image=spec.image,
                name=spec.name,
                labels=dict(spec.labels),
                environment=dict(spec.env),
                command=list(spec.command) if spec.command is not None else None,
                entrypoint=list(spec.entrypoint) if spec.entrypoint is not None else None,
                user=spec.user or "",
                host_config=host_config,
                networking_config=networking,
                ports=list(spec.publish) if spec.publish else None,
                healthcheck=health,
            )
            return str(created["Id"])

        try:
            container_id = await self._create(create, self.remove_container)
        except BaseException:
            if drop is not None and files_dir is not None:
                drop.remove(spec.name)
            raise
        if drop is not None and files_dir is not None:
            self._dropped[container_id] = (spec.name, files_dir)
        archive = files_tar(archived) if archived else None

        def start() -> None:
            if archive is not None:
                self._sdk.control.api.put_archive(container_id, "/", archive)
            self._sdk.control.api.start(container_id)

        started = self._sdk.submit(start)
        try:
            await self._sdk.wait(asyncio.shield(started), CONTROL_TIMEOUT + 5)  # shielded, as in `_create`
        except BaseException:
            # removed after the start returns (a removal racing it may leave it running)
            await to_the_end(self._remove_after(started, container_id))
            raise
        return container_id

    async def state(self, container_id: str) -> ContainerState:
        local = self.same_kernel

        def read() -> tuple[ContainerState, bool]:
            attrs = self._sdk.control.api.inspect_container(container_id)
            due = self.podman and podman.healthcheck_due(container_id, attrs, self._health_runs)
            st = attrs["State"]
            return ContainerState(
                running=bool(st.get("Running")),
                paused=bool(st.get("Paused")),
                exit_code=None if st.get("Running") else st.get("ExitCode"),
                oom_killed=bool(st.get("OOMKilled")),
                error=str(st.get("Error") or ""),
                status=str(st.get("Status") or ""),
                pid=int(st.get("Pid") or 0) if local else 0,
                health=str((st.get("Health") or {}).get("Status") or ""),
                created=str(attrs.get("Created") or ""),
            ), due

        state, due = await self._sdk.call(read)
        if due:
            self._start_healthcheck(container_id)
        return state

    def _start_healthcheck(self, container_id: str) -> None:
        """Podman's healthchecks may never run by themselves (engine/podman.py): run one on
        the pool without waiting for it (a check may take as long as its timeout); a later
        `state` shows its result. One that fails (the container went) changes nothing."""
        api = self._sdk.control.api
        future = self._sdk.submit(lambda: podman.run_healthcheck(api, container_id))
        self._health_checks.add(future)

        def done(finished: asyncio.Future[None]) -> None:
            self._health_checks.discard(finished)
            if not finished.cancelled():
                finished.exception()  # retrieved: it is of no consequence

        future.add_done_callback(done)

    async def running(self) -> list[RunningContainer]:
        """The containers running on this engine, ecoready's own left out (`ecoready init
        --from-host` maps them onto matrix rows)."""
        return await self._sdk.call(partial(running_containers, self._sdk.control.api), timeout=120)

    async def exec(
        self,
        container_id: str,
        argv: Iterable[str],
        *,
        timeout: float,
        user: str = "",
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult:
        """Run a command in a container; DeadlineExceeded after `timeout` seconds.

        docker-py's exec has no timeout: the deadline is asyncio's, and a command still
        running then is left to die with its container (the cell's cleanup removes it).
        """
        command = list(argv)

        def work() -> ExecResult:
            started = time.monotonic()
            exec_id = self._sdk.streams.api.exec_create(
                container_id, command, user=user, environment=dict(env or {}), workdir=workdir, stdout=True, stderr=True
            )["Id"]
            out, err = self._sdk.streams.api.exec_start(exec_id, demux=True)
            code = self._sdk.streams.api.exec_inspect(exec_id).get("ExitCode")
            return ExecResult(
                exit_code=-1 if code is None else int(code),
                stdout=(out or b"").decode("utf-8", "replace"),
                stderr=(err or b"").decode("utf-8", "replace"),
                seconds=time.monotonic() - started,
            )

        try:
            return await self._sdk.call(work, timeout=timeout)
        except DeadlineExceeded:
            raise DeadlineExceeded(f"`{command[0]}` did not finish within {timeout:.0f} s") from None

    async def logs(self, container_id: str, tail: int = 40, *, max_line: int = 500) -> list[str]:
        def read() -> list[str]:
            raw = self._sdk.streams.api.logs(container_id, stdout=True, stderr=True, tail=tail)
            return inert(raw.decode("utf-8", "replace"), max_line).splitlines()[-tail:]

        try:
            return await self._sdk.call(read, timeout=5)
        except Exception:
            return []

    async def put_files(self, container_id: str, files: Iterable[Any]) -> None:
        files = tuple(files)
        name, files_dir = self._dropped.get(container_id, ("", ""))
        if self.drop is not None and name and all(filedrop.below(f.path, files_dir) for f in files):
            self.drop.write(name, files_dir, files)  # the mount shows them: no engine call
            return
        archive = files_tar(files)
        await self._sdk.call(lambda: self._sdk.control.api.put_archive(container_id, "/", archive))

    async def stop(self, container_id: str, timeout: int = 10) -> None:
        await self._sdk.call(lambda: self._sdk.control.api.stop(container_id, timeout=timeout), timeout=timeout + 20)

    async def start(self, container_id: str) -> None:
        await self._sdk.call(lambda: self._sdk.control.api.start(container_id))

    # -- removal and sweeps ---------------------------------------------------------
    async def remove_container(self, container_id: str) -> bool:
        """Force-remove with its anonymous volumes; True when it existed. Returns only once
        the container is gone, also when another caller's removal was already under way:
        its network endpoint goes with it, so the network can be removed next."""

        def work() -> bool:
            try:
                self._sdk.control.api.remove_container(container_id, force=True, v=True)
                return True
            except docker.errors.NotFound:
                return False
            except docker.errors.APIError as exc:
                if "already in progress" not in str(exc):
                    raise
            deadline = time.monotonic() + REMOVAL_WAIT
            while time.monotonic() < deadline:
                try:
                    self._sdk.control.api.inspect_container(container_id)
                except docker.errors.NotFound:
                    break
                time.sleep(0.1)
            return True

        existed = await self._sdk.call(work, timeout=CONTROL_TIMEOUT + 20)
        self._health_runs.pop(container_id, None)
        name, _ = self._dropped.pop(container_id, ("", ""))
        if self.drop is not None and name:
            self.drop.remove(name)
        return existed

    async def remove_network(self, network_id: str) -> bool:
        """Remove a network; a moment after its last container went, the engine may still
        count an endpoint ("has active endpoints"), so that refusal is retried briefly."""

        def work() -> bool:
            for attempt in range(20):
                try:
                    self._sdk.control.api.remove_network(network_id)
                    return True
                except docker.errors.NotFound:
                    return False
                except docker.errors.APIError as exc:
                    if "active endpoints" not in str(exc) or attempt == 19:
                        raise
                    time.sleep(0.25)
            return False

        return await self._sdk.call(work, timeout=60)

    async def remove_volume(self, name: str) -> bool:
        def work() -> bool:
            try:
                self._sdk.control.api.remove_volume(name, force=True)
                return True
            except docker.errors.NotFound:
                return False

        return await self._sdk.call(work, timeout=60)

    async def labelled(
        self, label_filter: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """(containers, networks, volumes) carrying a label filter like `ecoready.run=X`."""

        def read() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
            filters = {"label": label_filter}
            containers = self._sdk.control.api.containers(all=True, filters=filters)
            networks = self._sdk.control.api.networks(filters=filters)
            volumes = self._sdk.control.api.volumes(filters=filters).get("Volumes") or []
            return containers, networks, volumes

        return await self._sdk.call(read)

    async def sweep(
        self,
        *,
        run_id: str | None = None,
        dead_owners: bool = False,
        everything: bool = False,
        me: OwnerInfo | None = None,
    ) -> SweepResult:
        """Remove ecoready's resources: those of `run_id`, those whose owner process is gone
        (`dead_owners`), or all of them (`everything`). Containers first, then networks
        and volumes (they cannot go while a container uses them)."""
        me = me or this_owner()
        containers, networks, volumes = await self.labelled(LABEL_RUN)

        doomed = partial(swept, run_id=run_id, dead_owners=dead_owners, everything=everything, me=me)

        # Each removal on its own: one that fails (e.g. a network a foreign container still
        # uses) must not stop the others; what failed stays listed for the next sweep.
        removed_c = [c["Id"] for c in containers if doomed(c.get("Labels"))]
        done = await asyncio.gather(*(self.remove_container(cid) for cid in removed_c), return_exceptions=True)
        removed_c = [cid for cid, ok in zip(removed_c, done, strict=True) if ok is True]
        removed_n = []
        for nid in (n["Id"] for n in networks if doomed(n.get("Labels"))):
            with contextlib.suppress(EngineError, DeadlineExceeded):
                if await self.remove_network(nid):
                    removed_n.append(nid)
        removed_v = []
        for name in (v["Name"] for v in volumes if doomed(v.get("Labels"))):
            with contextlib.suppress(EngineError, DeadlineExceeded):
                if await self.remove_volume(name):
                    removed_v.append(name)
        if self.drop is not None and (dead_owners or everything):
            self.drop.sweep(everything=everything)  # files of processes gone
        names = {c["Id"]: (c.get("Names") or [c["Id"][:12]])[0].lstrip("/") for c in containers}
        net_names = {n["Id"]: n.get("Name", n["Id"][:12]) for n in networks}
        return SweepResult(tuple(names[c] for c in removed_c), tuple(net_names[n] for n in removed_n), tuple(removed_v))


def _healthcheck(spec: ContainerSpec) -> dict[str, Any] | None:
    """Docker's healthcheck for the create call (durations in nanoseconds); an empty test
    keeps the image's own and changes only how often it runs."""
    if not spec.healthcheck and spec.health_interval is None:
        return None
    health: dict[str, Any] = {"test": list(spec.healthcheck)}
    if spec.health_interval is not None:
        health["interval"] = int(spec.health_interval * 1e9)
        health["start_period"] = 0
    return health
