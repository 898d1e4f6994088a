"""A recording stand-in for DockerHost, for probes whose images cannot run here.

It sits *below* the real ProbeContext and Runner: probes run their real code paths (option
files, `--xml` parsing, client errors, readiness waits, checks, backends, the QEMU_CPU
retry), and only the engine is replaced. Every container spec, file and exec is recorded;
execs are answered by handlers that a test registers, with canned outputs taken from the
images' real formats (each test cites its source). An exec nobody answers fails the test.

`FakeHost`, its `FakeHostImages` and `FakeImages` are held to the seam the real engine
meets (app/probe_api/seams.py): by mypy where `rig()` builds the run context, and by
tests/unit/test_seams.py, parameter for parameter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import httpx

from ecoready.domain.errors import ImageUnavailable
from ecoready.domain.events import Event
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import Category, Component, Profile
from ecoready.domain.specs import ContainerSpec, ContainerState, ExecResult, ImageFile, SweepResult
from ecoready.engine.discovery import EngineAddress
from ecoready.engine.engine_kinds import DOCKER_ENGINE
from ecoready.engine.identity import EngineIdentity
from ecoready.engine.owners import OwnerInfo
from ecoready.matrix.document import Matrix
from ecoready.plan.cells import CellPlan, Plan, budgets_for
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.run_context import RunContext
from ecoready.probe_api.secrets import Secrets
from ecoready.registry.client import RegistryClient
from ecoready.run.runner import load_probe


@dataclass
class FakeContainer:
    id: str
    spec: ContainerSpec
    files: dict[str, bytes] = field(default_factory=dict)
    running: bool = True
    exit_code: int | None = None
    log: list[str] = field(default_factory=list)
    client: str = "/usr/bin/mysql"  # what `command -v mariadb || command -v mysql` finds
    health: str = ""  # Docker's healthcheck status ("" = no healthcheck)

    @property
    def role(self) -> str:
        return self.spec.labels.get("ecoready.role", "")

    @property
    def env(self) -> Mapping[str, str]:
        return self.spec.env


@dataclass(frozen=True)
class Sql:
    """One client call made through ProbeContext.sql, as the fake server sees it."""

    via: FakeContainer
    host: str
    port: int
    user: str
    password: str  # from the option file the context wrote
    statement: str
    script: str | None  # the file's content when the statement is `source <file>`


class SqlFailure(Exception):
    """Raise from a SQL handler: the client prints `ERROR code (state) at line 1: message`."""

    def __init__(self, code: int, state: str, message: str) -> None:
        super().__init__(message)
        self.code, self.state, self.message = code, state, message


Rows = list[dict[str, Any]]
SqlHandler = Callable[[Sql], "Rows | list[Rows] | None"]
ExecHandler = Callable[[FakeContainer, list[str]], "ExecResult | None"]


def xml_resultsets(results: list[Rows]) -> str:
    """`mysql --xml` output (MySQL Reference Manual, mysql client options, `--xml`): one
    `<resultset>` per statement, `<field name=...>` per column, NULL as xsi:nil."""
    out = ['<?xml version="1.0"?>', ""]
    for rows in results:
        out.append('<resultset statement="..." xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">')
        for row in rows:
            out.append("  <row>")
            for name, value in row.items():
                if value is None:
                    out.append(f'\t<field name={quoteattr(name)} xsi:nil="true" />')
                else:
                    out.append(f"\t<field name={quoteattr(name)}>{escape(str(value))}</field>")
            out.append("  </row>")
        out.append("</resultset>")
    return "\n".join(out) + "\n"


def ok(stdout: str = "", stderr: str = "") -> ExecResult:
    return ExecResult(0, stdout, stderr, 0.01)


def failed(code: int, stderr: str, stdout: str = "") -> ExecResult:
    return ExecResult(code, stdout, stderr, 0.01)


def resultsets(answer: Rows | list[Rows]) -> list[Rows]:
    """A handler's answer as result sets: its rows are one, or it gave a list of them."""
    sets = [rows for rows in answer if isinstance(rows, list)]
    return sets or [[row for row in answer if isinstance(row, dict)]]


_PASSWORD = re.compile(r'password="((?:[^"\\]|\\.)*)"')


class FakeHost:
    """The DockerHost surface ProbeContext and Runner use, recorded and scripted."""

    def __init__(self) -> None:
        self.name = "fake"
        # an engine on another kernel: nothing of this machine's is read for it
        self.identity = EngineIdentity(
            address=EngineAddress("unix:///fake.sock", "a test's fake", DOCKER_ENGINE),
            kind=DOCKER_ENGINE,
            product="a fake engine",
            same_kernel=False,
            engine_id="fake",
        )
        self.containers: dict[str, FakeContainer] = {}
        self.started: list[FakeContainer] = []  # in start order, removed ones included
        self.execs: list[tuple[str, list[str]]] = []  # (role, argv)
        self.exec_users: list[tuple[str, list[str], str]] = []  # (role, argv, user) of every exec
        self.exec_envs: list[dict[str, str]] = []  # the environment given to every exec, in order
        self.sql_log: list[Sql] = []
        self.sql_handlers: list[SqlHandler] = []
        self.exec_handlers: list[ExecHandler] = []
        self.unresolvable: set[str] = set()  # names `getent hosts` does not find in any container
        self.on_run: list[Callable[[FakeContainer], None]] = []
        self.networks: list[str] = []
        self.removed: list[str] = []
        self.images = FakeHostImages()
        self._ids = itertools.count(1)

    # -- scripting --------------------------------------------------------------------
    def sql(self, handler: SqlHandler) -> SqlHandler:
        self.sql_handlers.append(handler)
        return handler

    def execs_to(self, handler: ExecHandler) -> ExecHandler:
        self.exec_handlers.append(handler)
        return handler

    def by_role(self, role: str) -> FakeContainer:
        matches = [c for c in self.started if c.role == role]
        assert matches, f"no container with role {role!r} (roles: {[c.role for c in self.started]})"
        return matches[-1]

    def argvs(self, role: str) -> list[list[str]]:
        return [argv for r, argv in self.execs if r == role]

    # -- the DockerHost surface ---------------------------------------------------------
    async def create_network(self, name: str, labels: Mapping[str, str], *, internal: bool = True) -> str:
        assert internal, "cell networks are internal"
        self.networks.append(name)
        return f"net-{name}"

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> str:
        return name

    async def run(self, spec: ContainerSpec) -> str:
        assert spec.publish is None, "nothing is published on host ports"
        cid = f"c{next(self._ids)}"
        container = FakeContainer(cid, spec, {f.path: f.content for f in spec.files})
        self.containers[cid] = container
        self.started.append(container)
        for hook in self.on_run:
            hook(container)
        return cid

    async def state(self, container_id: str) -> ContainerState:
        c = self.containers[container_id]
        return ContainerState(c.running, False, None if c.running else c.exit_code, False, "", "", health=c.health)

    async def logs(self, container_id: str, tail: int = 40, *, max_line: int = 500) -> list[str]:
        return self.containers[container_id].log[-tail:] if container_id in self.containers else []

    async def put_files(self, container_id: str, files: Iterable[Any]) -> None:
        for f in files:
            self.containers[container_id].files[f.path] = f.content

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
        container = self.containers[container_id]
        command = list(argv)
        self.execs.append((container.role, command))
        self.exec_users.append((container.role, command, user))
        self.exec_envs.append(dict(env or {}))
        if not container.running:
            return failed(1, f"Error response from daemon: container {container_id} is not running")
        if command[:2] == ["sh", "-c"] and command[2] == "command -v mariadb || command -v mysql":
            return ok(container.client + "\n") if container.client else failed(1, "")
        if command[0] == container.client and len(command) > 1 and command[1].startswith("--defaults-extra-file="):
            return self._client_call(container, command)  # other tools take option files too
        for handler in self.exec_handlers:
            result = handler(container, command)
            if result is not None:
                return result
        if command[:2] == ["getent", "hosts"] and len(command) == 3:  # an installer's look at its DNS
            return failed(2, "") if command[2] in self.unresolvable else ok(f"192.0.2.10 {command[2]}\n")
        raise AssertionError(f"unexpected exec in {container.role}: {command}")

    def _client_call(self, via: FakeContainer, argv: list[str]) -> ExecResult:
        cnf = via.files[argv[1].split("=", 1)[1]].decode()
        match = _PASSWORD.search(cnf)
        user = re.search(r'user="([^"]*)"', cnf)
        statement = argv[argv.index("-e") + 1]
        script = None
        if statement.startswith("source "):
            script = via.files[statement.split(" ", 1)[1]].decode()
        call = Sql(
            via=via,
            host=argv[argv.index("-h") + 1],
            port=int(argv[argv.index("-P") + 1]),
            user=user.group(1) if user else "",
            password=match.group(1) if match else "",
            statement=statement,
            script=script,
        )
        self.sql_log.append(call)
        for handler in self.sql_handlers:
            try:
                answer = handler(call)
            except SqlFailure as exc:
                return failed(1, f"ERROR {exc.code} ({exc.state}) at line 1: {exc.message}\n")
            if answer is not None:
                return ok(xml_resultsets(resultsets(answer)))
        raise AssertionError(f"no SQL handler for {call.host}:{call.port} {statement!r}")

    async def remove_container(self, container_id: str) -> bool:
        self.removed.append(container_id)
        return self.containers.pop(container_id, None) is not None

    async def remove_network(self, network_id: str) -> bool:
        return True

    async def remove_volume(self, name: str) -> bool:
        return True

    async def stop(self, container_id: str, timeout: int = 10) -> None:
        self.containers[container_id].running = False

    async def start(self, container_id: str) -> None:
        self.containers[container_id].running = True

    async def ping(self, timeout: float = 5.0) -> bool:
        return True

    async def labelled(
        self, label_filter: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """Nothing is listed by label: no other run is on this engine, and a sweep leaves nothing."""
        return [], [], []

    async def sweep(
        self,
        *,
        run_id: str | None = None,
        dead_owners: bool = False,
        everything: bool = False,
        me: OwnerInfo | None = None,
    ) -> SweepResult:
        return SweepResult()


class FakeHostImages:
    """The engine's images (`FakeHost.images`): those committed here (installs), by
    `repository:tag`; an image's environment is empty and the files it holds are those of
    `readable` (path -> bytes, in every image: none unless a test puts some there)."""

    def __init__(self) -> None:
        self.committed: dict[str, tuple[str, dict[str, str]]] = {}  # reference -> (image id, labels)
        self.readable: dict[str, bytes] = {}
        self.read: list[tuple[str, str]] = []  # (image, path) of every file asked for

    async def image_labels(self, reference: str) -> dict[str, str] | None:
        found = self.committed.get(reference)
        return None if found is None else dict(found[1])

    async def image_id(self, reference: str) -> str:
        return self.committed[reference][0]

    async def commit(
        self,
        container_id: str,
        repository: str,
        tag: str,
        labels: Mapping[str, str],
        *,
        timeout: float = 600.0,
    ) -> str:
        image_id = f"img:{repository}:{tag}"
        self.committed[f"{repository}:{tag}"] = (image_id, dict(labels))
        return image_id

    async def image_env(self, image: str) -> list[str]:
        return []

    async def read_files(
        self,
        image: str,
        choices: Sequence[Sequence[str]],
        *,
        labels: Mapping[str, str],
        max_bytes: int,
        timeout: float,
    ) -> list[ImageFile | None]:
        found: list[ImageFile | None] = []
        for paths in choices:
            self.read.extend((image, path) for path in paths)
            path = next((path for path in paths if path in self.readable), "")
            data = self.readable.get(path, b"")
            found.append(ImageFile(path, path, len(data), data if len(data) <= max_bytes else b"") if path else None)
        return found


class FakeImages:
    """Every image is 'published' unless listed in `missing`; records what was asked. Its
    registry knows no repository: the tag search of a missing image finds no tags."""

    def __init__(self, missing: Iterable[str] = ()) -> None:
        self.asked: list[tuple[str, str]] = []
        self.missing = set(missing)
        self.registry = RegistryClient(cache=False, transport=httpx.MockTransport(lambda _: httpx.Response(404)))
        self.unchecked: dict[str, tuple[int, str]] = {}

    async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo:
        self.asked.append((reference, arch))
        if reference in self.missing:
            raise ImageUnavailable(f"the index publishes amd64 only ({reference})")
        return ImageInfo(reference, arch, digest="sha256:" + "0" * 64, found_as="index", image_id=f"img:{reference}")


def component(
    cid: str,
    probe: str,
    image: str,
    *,
    category: Category = Category.SERVER,
    backend: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Component:
    return Component(cid, cid, category, probe, image, backend=backend, options=dict(options or {}))


@dataclass
class Rig:
    host: FakeHost
    images: FakeImages
    events: list[Event]
    run: RunContext

    def checks(self) -> dict[str, Any]:
        from ecoready.domain.events import CheckReported

        return {e.check.name: e.check for e in self.events if isinstance(e, CheckReported)}


def rig(missing: Iterable[str] = (), *, parity: bool = False) -> Rig:
    """`parity`: the probes gather parity's facts (their own tests ask for it; the others
    keep their command sequences without the facts' statement and exec)."""
    host = FakeHost()
    images = FakeImages(missing)
    events: list[Event] = []
    run = RunContext(
        run_id="f" * 32,
        host=host,
        owner=OwnerInfo("test", 1, ""),
        secrets=Secrets(),
        images=images,
        emit=events.append,
        emulation_factor=6.0,
        load_probe=load_probe,
        parity=parity,
    )
    return Rig(host, images, events, run)


def cell(comp: Component, backend: Component | None = None, *, arch: str = "amd64", emulated: bool = False) -> CellPlan:
    return CellPlan(
        id=f"{comp.id}/{arch}",
        component=comp,
        arch=arch,
        host="fake",
        emulated=emulated,
        budgets=budgets_for(comp, emulated),
        backend=backend,
    )


def context(r: Rig, comp: Component, backend: Component | None = None, **kwargs: Any) -> ProbeContext:
    return ProbeContext(cell(comp, backend, **kwargs), r.run)


def plan(cells: list[CellPlan]) -> Plan:
    comps = tuple({c.component.id: c.component for c in cells}.values())
    matrix = Matrix(path="fake.toml", title="fake", arches=("amd64", "arm64"), profile=Profile.SMOKE, components=comps)
    return Plan(matrix=matrix, profile=Profile.SMOKE, arches=("amd64", "arm64"), cells=tuple(cells))


BACKEND_HOSTNAME = "4f2a9c1be07d"  # what @@hostname is in a container: its short id


def backend_server(host: FakeHost, *, hostname: str = BACKEND_HOSTNAME) -> SqlHandler:
    """Answers what probes ask their backend server as root over 127.0.0.1:3306: the
    readiness ping, @@hostname, and account scripts (the count of distinct users)."""

    def handle(call: Sql) -> Rows | None:
        if call.via.role != "backend-server" or (call.host, call.port) != ("127.0.0.1", 3306):
            return None
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == "SELECT @@hostname AS host":
            return [{"host": hostname}]
        if call.script is not None and "CREATE USER" in call.script:
            users = set(re.findall(r"CREATE USER IF NOT EXISTS '([^']+)'", call.script))
            return [{"accounts": len(users)}]
        return None

    return host.sql(handle)
