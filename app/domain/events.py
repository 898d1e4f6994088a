"""What the runner tells the world. Events are plain frozen data; `state.reduce` folds them
into the report, and the TUI and the headless progress both consume the same stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ecoready.domain.blame import Blame, Trouble
from ecoready.domain.cpus import Target
from ecoready.domain.images import ImageInfo, RegistryStatus
from ecoready.domain.model import (
    AuditResult,
    BenchResult,
    Check,
    ComponentOrigin,
    HostFacts,
    Outcome,
    PlatformFitness,
    Profile,
    Stage,
    Status,
    TagSearch,
    Verification,
)
from ecoready.domain.packaging import Packaging
from ecoready.domain.parity import ArchParity, Facts


@dataclass(frozen=True)
class CellPlanned:
    cell_id: str
    component: str
    name: str
    category: str
    arch: str
    host: str
    emulated: bool
    verification: Verification | None = None  # its probe kind's (app/matrix/kinds.py)
    # the bench stage's expected seconds (0: no bench); benches run one at a time per host,
    # so the time left counts them one after the other
    bench_s: float = 0.0
    # what its other stages are expected to take (`plan.schedule.expected_seconds`: the last
    # run's seconds, else its kind's), for the time left (`plan/eta.py`); 0: not known
    expected_s: float = 0.0
    probe: str = ""  # its probe kind: the time left learns from finished cells of the same kind


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    at: str
    matrix: str
    profile: Profile
    arches: tuple[str, ...]
    cells: tuple[CellPlanned, ...]
    hosts: tuple[HostFacts, ...] = ()
    origins: tuple[ComponentOrigin, ...] = ()  # each component's image (and arch pin, with where it is written)
    title: str = ""  # the matrix's `title`
    targets: tuple[Target, ...] = ()  # the target CPUs the matrix names
    matrix_content: str = ""  # sha256:<hex> of the matrix's text (Matrix.content)
    matrix_place: str = ""  # sha256:<hex> of its file's resolved path (Matrix.place)


@dataclass(frozen=True)
class CellStarted:
    cell_id: str
    at: str


@dataclass(frozen=True)
class CellQueued:
    """The cell waits for its turn (a CPU slot, or a pull): nothing of it runs until its
    next StageStarted. A cell is queued from its CellStarted to its first StageStarted too."""

    cell_id: str


@dataclass(frozen=True)
class StageStarted:
    cell_id: str
    stage: Stage


@dataclass(frozen=True)
class CheckReported:
    cell_id: str
    stage: Stage
    check: Check


@dataclass(frozen=True)
class ImageResolved:
    cell_id: str
    image: ImageInfo


@dataclass(frozen=True)
class StageFinished:
    cell_id: str
    stage: Stage
    outcome: Outcome
    seconds: float
    detail: str = ""  # the human line, without its cause's label (blame.said adds it)
    blame: Blame | None = None  # why it did not pass (None when it passed)


@dataclass(frozen=True)
class BenchReported:
    cell_id: str
    bench: BenchResult


@dataclass(frozen=True)
class PackagingReported:
    """A driver row's package for the cell's arch: from its registry, then from the install."""

    cell_id: str
    packaging: Packaging


@dataclass(frozen=True)
class AuditReported:
    """The build audit of a cell's image; sent again when the platform fitness it is
    crossed with arrives later (the findings change, the programs read do not)."""

    cell_id: str
    audit: AuditResult


@dataclass(frozen=True)
class FactsGathered:
    """Facts of a cell for parity, whole (the reducer keeps their fingerprint; the run's
    parity stage keeps them until the cells of the component are compared)."""

    cell_id: str
    facts: tuple[Facts, ...]


@dataclass(frozen=True)
class ParityCompared:
    """A component's cells compared across arches, once all of them finished: arch -> how
    its cell compares with the reference arch's (a cell of an arch not named has none)."""

    component: str
    by_arch: Mapping[str, ArchParity]


@dataclass(frozen=True)
class CellLog:
    """The last lines of the cell's main container log (already redacted)."""

    cell_id: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class CellFinished:
    cell_id: str
    at: str
    seconds: float
    # Set only when the status does not follow from the stages (e.g. cancelled, no host).
    status: Status | None = None
    detail: str = ""


@dataclass(frozen=True)
class RunNote:
    """A run-wide fact worth a line in the report (e.g. a registry that did not answer);
    `about`: the trouble many cells share that it says, for the views to say it once."""

    text: str
    about: Trouble | None = None


@dataclass(frozen=True)
class RegistryObserved:
    """What a registry was like when last asked: requests, rate limit, the last failure."""

    status: RegistryStatus


@dataclass(frozen=True)
class PlatformObserved:
    """What a container of one arch on one host saw (platform fitness), once per pair."""

    platform: PlatformFitness


@dataclass(frozen=True)
class HostLost:
    """A host stopped answering mid-run: its remaining cells end as `error`."""

    host: str
    reason: str


@dataclass(frozen=True)
class TagsSearched:
    """The tag list of a missing cell's repository, searched for its arch."""

    cell_id: str
    search: TagSearch


@dataclass(frozen=True)
class RunFinished:
    at: str
    interrupted: bool = False


Event = (
    RunStarted
    | CellStarted
    | CellQueued
    | StageStarted
    | CheckReported
    | ImageResolved
    | StageFinished
    | BenchReported
    | PackagingReported
    | AuditReported
    | FactsGathered
    | ParityCompared
    | CellLog
    | CellFinished
    | RunNote
    | RegistryObserved
    | PlatformObserved
    | HostLost
    | TagsSearched
    | RunFinished
)
