"""The lab builder's state and the steps every kind of build shares: its fields (the
engine, the log, the slots and costs of lab/schedule.py, the tasks shared by both arch
tracks), `docker build` of a prepared context with its log, and the helpers the bases,
builders and images use (labels of the lab's own containers, logged subprocesses, build
contexts assembled from files of other contexts, a builder's output unpacked safely).

The lab is split along its kinds of work, each a class on the one before: the bases
(lab/bases.py: debootstrap), the builders and generated contexts (lab/builders.py),
publishing (lab/publish.py), and the component images and the whole build (lab/build.py).
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import signal
import subprocess
import tarfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.domain.flight import Flights
from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_ROLE, LABEL_RUN
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.owners import this_owner
from ecoready.engine.platform import emulated_cpu_env, host_arch
from ecoready.lab.recipes import BUILD_TIMEOUT, LAB_DIR, RECIPE_LABEL, debian_mirror, source_path
from ecoready.lab.schedule import BuildBook, StepCost, build_slots

Log = Callable[[str], None]


@dataclass
class LabCore:
    host: DockerHost
    log: Log
    mirror: str = field(default_factory=debian_mirror)
    lab_dir: Path = LAB_DIR
    # generated build contexts, one per image: both arch tracks await the same one
    _contexts: Flights[str, Path] = field(default_factory=Flights.memo, init=False, repr=False)
    _base_locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    _builder_locks: dict[str, asyncio.Lock] = field(default_factory=dict, init=False, repr=False)
    # the machine's own tools per suite (lab/native_tools.py), laid out once per build
    _native: Flights[str, Path] = field(default_factory=Flights.memo, init=False, repr=False)
    # the component images of this build (their tags), one per image and arch
    _images: Flights[tuple[str, str], str] = field(default_factory=Flights.memo, init=False, repr=False)
    book: BuildBook = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.book = BuildBook(self.lab_dir, build_slots())

    def _cost(self, step: str, arch: str, started: float | None) -> None:
        """Record a step: `started` None when its image was current."""
        seconds = time.monotonic() - started if started is not None else 0.0
        self.book.record(StepCost(step, arch, seconds, arch != host_arch(), started is not None))

    async def _build(
        self, context: Path, tag: str, arch: str, buildargs: dict[str, str], recipe: str, logfile: Path
    ) -> None:
        """`docker build` for the arch, labelled with its recipe, its output in `logfile`
        (whose tail is shown when it fails)."""
        try:
            await self.host.images.build(
                str(context),
                tag,
                f"linux/{arch}",
                buildargs=buildargs,
                labels={RECIPE_LABEL: recipe},
                log=appender(logfile),
                timeout=BUILD_TIMEOUT[arch],
            )
        except Exception:
            self._log_tail(logfile)
            raise

    def _log_tail(self, logfile: Path) -> None:
        tail = logfile.read_text(errors="replace").splitlines()[-15:] if logfile.exists() else []
        self.log("\n".join(f"lab:   | {line}" for line in tail))

    def _logfile(self, name: str) -> Path:
        path = self.lab_dir / "logs" / f"{name}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        return path


def owner_labels(role: str) -> dict[str, str]:
    """Labels of the lab's own containers, like a run's: if we die before removing one, a
    sweep of dead owners (`ecoready cleanup`) finds it."""
    owner = this_owner()
    return {
        LABEL_RUN: f"lab-{uuid.uuid4().hex[:12]}",
        LABEL_OWNER: f"{owner.hostname}:{owner.pid}",
        LABEL_OWNER_START: owner.start,
        LABEL_ROLE: role,
    }


def extract_tar(archive: bytes, target: Path) -> None:
    """Unpack a tar of regular files and directories under `target`; refuse anything else
    (links, devices, absolute paths, `..`), whatever the Python version's own filters do."""
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = tar.getmembers()
        for member in members:
            parts = Path(member.name).parts
            if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
                raise EnvironmentProblem(f"refusing to unpack {member.name!r} from a builder's output")
            member.mode &= 0o755
        for member in members:
            dest = target.joinpath(*Path(member.name).parts)
            if member.isdir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                raise EnvironmentProblem(f"unreadable {member.name!r} in a builder's output")
            dest.write_bytes(source.read())
            dest.chmod(member.mode)


def _numeric_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uname = info.gname = ""
    return info


def appender(path: Path) -> Log:
    def write(text: str) -> None:
        with path.open("a", errors="replace") as handle:
            handle.write(text)

    return write


def emulation_env(arch: str) -> dict[str, str]:
    """The CPU a foreign arch's programs are emulated as (engine/platform.EMULATED_CPU): it
    changes how fast a step runs, not what it makes, so it is not part of any recipe."""
    return emulated_cpu_env(arch) if arch != host_arch() else {}


async def run_logged(
    cmd: Sequence[str], logfile: Path, *, timeout: float, what: str, env: dict[str, str] | None = None
) -> None:
    with logfile.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        try:
            async with asyncio.timeout(timeout):
                code = await proc.wait()
        except (TimeoutError, asyncio.CancelledError):
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
    if code != 0:
        tail = logfile.read_text(errors="replace").splitlines()[-5:]
        raise EnvironmentProblem(f"{what} failed (exit {code}): {' | '.join(tail)[-300:]}; log: {logfile}")


def assemble_context(
    source: Path,
    target: Path,
    files: tuple[tuple[str, str], ...],
    ignore: Callable[[str, list[str]], list[str]] | None = None,
) -> None:
    """`target` made a copy of the context `source` plus the files it copies in (each a
    path under containers/, which may lead out of it, e.g. to the smoke programs)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=ignore)
    for path, name in files:
        if (target / name).exists():
            raise EnvironmentProblem(f"{source}/{name} exists: it is copied in from containers/{path}")
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path(path), target / name)
