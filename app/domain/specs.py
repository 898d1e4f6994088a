"""Plain data passed between the probe context and docker_host (neither imports the other's
internals): what container to create, what an exec returned, what a sweep removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

LABEL_RUN = "ecoready.run"
LABEL_OWNER = "ecoready.owner"  # "<hostname>:<pid>"
LABEL_OWNER_START = "ecoready.owner-start"  # the owner's process start time (pid reuse guard)
LABEL_CELL = "ecoready.cell"  # "<component>/<arch>"
LABEL_CREATED = "ecoready.created"  # ISO-8601 UTC
LABEL_ROLE = "ecoready.role"


@dataclass(frozen=True)
class SecretFile:
    """A file put into the container before it starts (mode 0444 inside a 0755 dir)."""

    path: str
    content: bytes
    mode: int = 0o444


@dataclass(frozen=True)
class ContainerSpec:
    image: str  # an image id or reference already present on the host
    name: str
    labels: Mapping[str, str]
    network: str | None = None
    aliases: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    files: tuple[SecretFile, ...] = ()
    # Files below this directory (and files put there later) reach the container through
    # a read-only bind mount of a host directory when the engine shares our files
    # (app/engine/filedrop.py); the rest, or all on other engines, through the archive API.
    files_dir: str | None = None
    user: str | None = None
    mem_limit: str = "2g"
    pids_limit: int = 4096
    cpuset_cpus: str | None = None
    nano_cpus: int | None = None  # a CPU quota in billionths of a CPU (None: none); a row's `cpus`
    # None = publish nothing. Otherwise container port -> host port on 127.0.0.1 (0: any).
    publish: Mapping[int, int] | None = None
    tmpfs: Mapping[str, str] = field(default_factory=dict)
    volumes: Mapping[str, str] = field(default_factory=dict)  # volume name -> mount path
    # Docker's healthcheck: the test (["CMD", ...] / ["CMD-SHELL", "..."]; empty: the image's
    # own HEALTHCHECK, if any) and how often it runs (None: as the image says).
    healthcheck: tuple[str, ...] = ()
    health_interval: float | None = None


def nano_cpus(cpus: float | None) -> int | None:
    """A share of CPUs (a row's `cpus`) as the engine's quota, NanoCpus; None: no quota."""
    return None if cpus is None else round(cpus * 1e9)


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def last_line(self) -> str:
        for text in (self.stderr, self.stdout):
            lines = [ln for ln in text.strip().splitlines() if ln.strip()]
            if lines:
                return lines[-1].strip()
        return f"exit code {self.exit_code}"


@dataclass(frozen=True)
class ContainerState:
    running: bool
    paused: bool
    exit_code: int | None
    oom_killed: bool
    error: str
    status: str
    pid: int = 0  # the init process on this machine's kernel; 0 when unknown or remote
    health: str = ""  # Docker's healthcheck status: starting, healthy, unhealthy; "" = none
    created: str = ""  # the engine's RFC 3339 creation time, to the nanosecond


@dataclass(frozen=True)
class RunningContainer:
    """A container running on an engine, as `ecoready init --from-host` reads it (never one
    of ecoready's own). Environment values may hold secrets: they are read to find database
    hosts, never written out."""

    name: str
    image: str  # the reference it was started from, as the engine keeps it
    arch: str = ""  # its image's architecture
    env: Mapping[str, str] = field(default_factory=dict)  # what it was started with, not its image's
    labels: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()  # when it was started with another than its image's own
    healthcheck: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()  # exposed TCP ports


@dataclass(frozen=True)
class SweepResult:
    containers: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return len(self.containers) + len(self.networks) + len(self.volumes)

    def __add__(self, other: SweepResult) -> SweepResult:
        return SweepResult(
            self.containers + other.containers, self.networks + other.networks, self.volumes + other.volumes
        )


@dataclass(frozen=True)
class ImageFile:
    """A regular file read from an image (links followed inside it): where it was found,
    its size, and its bytes (empty when it was larger than the reader would take); or, with
    a `note`, what is at the path instead of a regular file."""

    asked: str  # the path asked for
    path: str  # where it is once links are followed
    size: int
    data: bytes = b""
    note: str = ""  # not a regular file: what is there ("a symlink loop", "a directory", "a device")

    @property
    def complete(self) -> bool:
        return len(self.data) == self.size
