"""Who is blamed, as data: how a cell's stages end and why.

The words of an ending (`Stage`, `Outcome`, a cell's `Status`), the reasons one can have
(`Cause`: one member per row of the "Who is blamed" table in docs/architecture.md), and
what each cause leads to, written once (`CAUSES`: the party blamed, so the stage's outcome,
the cell's status, and the label said before a detail). A stage that did not pass carries a
`Blame` (its cause, what is blamed, a fix when the one who saw it knows one) beside its
human detail, from the exception or the runner that ended it to every view: the status, the
verdict lines, reasons and remedies, the migration plan and JUnit's failure/error split read
the cause, never the detail's wording. Only the reader of old saved reports
(`report/legacy.py`) still reads wording, to give them a cause.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass


class Stage(str, enum.Enum):
    PACKAGING = "packaging"  # driver rows only: the driver as its package registry publishes it
    IMAGE = "image"
    AUDIT = "audit"  # the build audit: the image's main programs read, never run
    START = "start"
    SMOKE = "smoke"
    BENCH = "bench"


class Outcome(str, enum.Enum):
    """How a stage or a check ended."""

    PASS = "pass"  # noqa: S105 - an outcome, not a password
    FAIL = "fail"
    SKIP = "skip"
    TIMEOUT = "timeout"
    ERROR = "error"  # the tool or the infrastructure failed, not the component


class Status(str, enum.Enum):
    """A cell's status; pending/running only while a run is under way."""

    PENDING = "pending"
    RUNNING = "running"
    READY = "ready"
    PARTIAL = "partial"
    BROKEN = "broken"
    MISSING = "missing"
    TIMEOUT = "timeout"
    ERROR = "error"
    SKIPPED = "skipped"
    # it wants what only the user can give: a registry login, a licence key or a EULA's
    # acceptance (neither the component's fault, `broken`, nor the tool's, `error`)
    LOCKED = "locked"

    @property
    def finished(self) -> bool:
        return self not in (Status.PENDING, Status.RUNNING)


class Party(str, enum.Enum):
    """Who a cause blames."""

    COMPONENT = "component"  # its own fault: never said of the tool's trouble
    CLOCK = "clock"  # the stage ran over its budget
    TOOL = "tool"  # the tool or its infrastructure: never said of the component
    NOBODY = "nobody"  # the stage did not apply, or was left out
    USER = "user"  # it needs what only the user can give (a login, a licence key): said with what to provide


class Cause(str, enum.Enum):
    """Why a stage did not pass (the values are written in saved reports: keep them)."""

    # the component
    NOT_PUBLISHED = "not-published"  # no image (or driver package) for the arch, nor under a suffixed tag
    NO_SUCH_IMAGE = "no-such-image"  # the reference names no image at all
    MISLABELLED_IMAGE = "mislabelled-image"  # the index says the arch, the image's config another
    MISLABELLED_BINARY = "mislabelled-binary"  # a main program built for another arch (the build audit)
    NOT_FOR_THIS_CPU = "exec-format"  # exec format error: neither the CPU nor an emulator ran the binary
    DOES_NOT_START = "does-not-start"  # exits, crashes, OOM, an illegal instruction, the emulator crashed
    CHECK_FAILED = "check-failed"  # a smoke check failed
    BENCH_FAILED = "bench-failed"  # a benchmark run with errors, a server that refuses sysbench
    # the clock
    OVER_BUDGET = "over-budget"  # the stage's budget ran out (a paused container, a hang)
    # the tool or its infrastructure
    ENGINE_UNREACHABLE = "engine-unreachable"  # the cell's engine could not be reached
    HOST_LOST = "host-lost"  # the cell's engine stopped answering mid-run
    ENGINE_REFUSED = "engine-refused"  # the engine refused a call
    ENGINE_STUCK = "engine-stuck"  # the engine sent nothing back to a short call for its whole timeout
    REGISTRY = "registry"  # a registry unreachable, not answering, refusing us, rate-limiting us
    MIRROR_GAP = "mirror-gap"  # a registry mirror does not hold the image its upstream is asked for
    MIRROR_BEHIND = "mirror-behind"  # a mirror's copy lacks an arch its upstream publishes (or may: not confirmed)
    MIRROR_DOWN = "mirror-down"  # a registry mirror could not be asked (unreachable, hanging, refusing us)
    CREDENTIALS = "credentials"  # the registry credentials configured cannot be read
    PULL_STALLED = "pull-stalled"  # a pull made no progress
    BACKEND = "backend"  # the cell's backend could not be had (`behind` says why)
    TOOL_IMAGE = "tool-image"  # an image of ecoready's tools (sysbench) is unusable
    EMULATOR = "emulator"  # the emulator cannot run the image at all
    NO_HOST = "no-host"  # no host serves the cell's arch, natively or emulated
    MATRIX = "matrix"  # the matrix row asks its image for what it does not have
    INTERRUPTED = "interrupted"  # the run was stopped
    TOOL = "tool"  # the tool or its infrastructure failed; no more is known
    INTERNAL = "internal"  # a bug of ours (an exception nobody expected)
    # the user: what to provide (`Blame.fix` says what)
    NEEDS_LOGIN = "needs-login"  # the registry refused an anonymous pull: it wants a login not configured
    NEEDS_LICENCE = "needs-licence"  # the image stopped at start asking for a licence key or a EULA's acceptance
    # nobody
    NOT_APPLICABLE = "not-applicable"  # the stage was skipped
    TWIN_FAILED = "twin-failed"  # an emulated start cut short: its native twin failed there the same way


class Shared(str, enum.Enum):
    """What many cells can fail by at once: its trouble is said once per run, with the cells
    it cost and the way out, not once per cell (the values are written in saved reports)."""

    REGISTRY = "registry"  # a registry that could not be asked (the blame's subject)
    BACKEND = "backend"  # a backend that could not be had (the blame's subject)
    ENGINE = "engine"  # a host's engine, unreachable or lost mid-run (the cell's host)


@dataclass(frozen=True)
class CauseFacts:
    """What a cause leads to. `label` is said before the stage's detail wherever it is
    shown (`missing: the index publishes amd64 only`, `docker.io: unreachable`); `{subject}`
    in it is the blame's subject. `shared`: what the cells failing by it share."""

    party: Party
    status: Status | None  # the cell's; None: the other stages decide (a stage that does not apply)
    label: str = ""
    shared: Shared | None = None

    @property
    def outcome(self) -> Outcome:
        return PARTY_OUTCOME[self.party]


PARTY_OUTCOME: Mapping[Party, Outcome] = {
    Party.COMPONENT: Outcome.FAIL,
    Party.CLOCK: Outcome.TIMEOUT,
    Party.TOOL: Outcome.ERROR,
    Party.NOBODY: Outcome.SKIP,
    Party.USER: Outcome.SKIP,  # not run to its end: it waits for what the user gives
}

_COMPONENT, _TOOL = Party.COMPONENT, Party.TOOL
CAUSES: Mapping[Cause, CauseFacts] = {
    Cause.NOT_PUBLISHED: CauseFacts(_COMPONENT, Status.MISSING, "missing"),
    Cause.NO_SUCH_IMAGE: CauseFacts(_COMPONENT, Status.MISSING, "missing"),
    Cause.MISLABELLED_IMAGE: CauseFacts(_COMPONENT, Status.BROKEN, "mislabelled"),
    Cause.MISLABELLED_BINARY: CauseFacts(_COMPONENT, Status.BROKEN, "mislabelled binary"),
    Cause.NOT_FOR_THIS_CPU: CauseFacts(_COMPONENT, Status.BROKEN),
    Cause.DOES_NOT_START: CauseFacts(_COMPONENT, Status.BROKEN),
    Cause.CHECK_FAILED: CauseFacts(_COMPONENT, Status.PARTIAL),
    Cause.BENCH_FAILED: CauseFacts(_COMPONENT, Status.PARTIAL),
    Cause.OVER_BUDGET: CauseFacts(Party.CLOCK, Status.TIMEOUT),
    Cause.ENGINE_UNREACHABLE: CauseFacts(_TOOL, Status.ERROR, shared=Shared.ENGINE),
    Cause.HOST_LOST: CauseFacts(_TOOL, Status.ERROR, shared=Shared.ENGINE),
    Cause.ENGINE_REFUSED: CauseFacts(_TOOL, Status.ERROR),
    Cause.ENGINE_STUCK: CauseFacts(_TOOL, Status.ERROR),
    Cause.REGISTRY: CauseFacts(_TOOL, Status.ERROR, "{subject}", Shared.REGISTRY),
    Cause.MIRROR_GAP: CauseFacts(_TOOL, Status.ERROR, "mirror {subject}"),
    Cause.MIRROR_BEHIND: CauseFacts(_TOOL, Status.ERROR, "mirror {subject} behind"),
    Cause.MIRROR_DOWN: CauseFacts(_TOOL, Status.ERROR, "mirror {subject}"),
    Cause.CREDENTIALS: CauseFacts(_TOOL, Status.ERROR),
    Cause.PULL_STALLED: CauseFacts(_TOOL, Status.ERROR),
    Cause.BACKEND: CauseFacts(_TOOL, Status.ERROR, "backend {subject}", Shared.BACKEND),
    Cause.TOOL_IMAGE: CauseFacts(_TOOL, Status.ERROR),
    Cause.EMULATOR: CauseFacts(_TOOL, Status.ERROR),
    Cause.NO_HOST: CauseFacts(_TOOL, Status.ERROR),
    Cause.MATRIX: CauseFacts(_TOOL, Status.ERROR),
    Cause.INTERRUPTED: CauseFacts(_TOOL, Status.ERROR),
    Cause.TOOL: CauseFacts(_TOOL, Status.ERROR),
    Cause.INTERNAL: CauseFacts(_TOOL, Status.ERROR),
    Cause.NEEDS_LOGIN: CauseFacts(Party.USER, Status.LOCKED, "{subject} wants a login"),
    Cause.NEEDS_LICENCE: CauseFacts(Party.USER, Status.LOCKED, "needs a licence"),
    Cause.NOT_APPLICABLE: CauseFacts(Party.NOBODY, None),
    # not the arch's doing: the same image failed natively at start, so the run spends no budget on it
    Cause.TWIN_FAILED: CauseFacts(Party.NOBODY, Status.SKIPPED, "cut short"),
}

# A component's failure that names no cause of its own is blamed by the stage it ended.
COMPONENT_FAILURE: Mapping[Stage, Cause] = {
    Stage.PACKAGING: Cause.NOT_PUBLISHED,
    Stage.IMAGE: Cause.MISLABELLED_IMAGE,
    Stage.AUDIT: Cause.MISLABELLED_BINARY,
    Stage.START: Cause.DOES_NOT_START,
    Stage.SMOKE: Cause.CHECK_FAILED,
    Stage.BENCH: Cause.BENCH_FAILED,
}

# The cause of an ending that came without one (an event or a report made by hand).
UNSAID: Mapping[Outcome, Cause] = {
    Outcome.TIMEOUT: Cause.OVER_BUDGET,
    Outcome.ERROR: Cause.TOOL,
    Outcome.SKIP: Cause.NOT_APPLICABLE,
}


@dataclass(frozen=True)
class Blame:
    """Why a stage did not pass: the cause, what is blamed (a registry, a backend, an arch,
    the failed checks), what the one who saw it knows the user can do, and for a backend
    the cause behind its failure."""

    cause: Cause
    subject: str = ""
    fix: str = ""
    behind: Cause | None = None

    @property
    def facts(self) -> CauseFacts:
        return CAUSES[self.cause]

    @property
    def status(self) -> Status | None:
        return CAUSES[self.cause].status

    @property
    def outcome(self) -> Outcome:
        return CAUSES[self.cause].outcome


@dataclass(frozen=True)
class Trouble:
    """One thing many cells failed by: a registry, a backend, a host's engine. The key
    its trouble is said once under, by the verdict and by the run's notes alike."""

    shared: Shared
    subject: str  # the registry, the backend, the host ("" a host not named)

    @property
    def words(self) -> str:
        """`registry docker.io`, `backend mysql-8.4`, `engine of graviton`."""
        if self.shared is Shared.ENGINE:
            return f"engine of {self.subject or 'the host'}"
        return f"{self.shared.value} {self.subject}"


def blame_for(stage: Stage, outcome: Outcome | None, blame: Blame | None = None) -> Blame | None:
    """A stage's blame: the one it carries, else the one its outcome implies (None when it
    passed or is under way)."""
    if blame is not None:
        return blame
    if outcome is None or outcome is Outcome.PASS:
        return None
    if outcome is Outcome.FAIL:
        return Blame(COMPONENT_FAILURE[stage])
    return Blame(UNSAID[outcome])


def label(blame: Blame | None) -> str:
    """What is said before a detail of this blame (`missing`, `backend mysql-8.4`), or ""."""
    if blame is None:
        return ""
    template = CAUSES[blame.cause].label
    return template.format(subject=blame.subject).strip() if template else ""


def said(blame: Blame | None, detail: str) -> str:
    """A detail as every view shows it: the cause's label first (`missing: …`)."""
    words = label(blame)
    if not words:
        return detail
    return f"{words}: {detail}" if detail else words
