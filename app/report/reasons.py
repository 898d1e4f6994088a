"""Reasons and remedies per cause (pure), worded once for every view: for a finished cell
that is not ready, what failed in words (`REASONS`: a reason and its short form for verdict
lines) and what a person can do about it (`REMEDIES`), one entry for every `Cause`, read
from the stage that decided its status and its `Blame` (`why`), never worked out of a
detail's wording. A new cause gets its row in both tables here.

The remedies reuse the migration plan (`migration.py`: `use TAG`, `upgrade to`, `emulate`)
and add what the failure itself says: register an emulator, add a native `[[hosts]]` entry,
fix the backend, reach the registry, or the fix its blame carries. `advice` is the lot, one
`Advice` per cell, in grid order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ecoready.domain.blame import Blame, Cause, Party, said
from ecoready.domain.model import CONTRACT_CAVEAT, CellResult, Outcome, Report, Stage, StageResult, Status, Verification
from ecoready.domain.state import deciding
from ecoready.report import mirror_words
from ecoready.report.migration import NOT_AN_ARCH_GAP, Action, Step, plan_steps, same_way
from ecoready.report.order import arches_of, grid_rows

EMULATOR_REMEDY = (
    "register an emulator for {arch} (qemu-user >= 8, e.g. `docker run --privileged --rm "
    "tonistiigi/binfmt --install {arch}`) or add a native {arch} host under [[hosts]]"
)
NATIVE_REMEDY = "confirm on a native {arch} host (add it under [[hosts]]): emulation can fail where hardware runs"
REGISTRY_REMEDY = (
    "check that this machine reaches the registry (its name, the network, a proxy: HTTPS_PROXY), "
    "or set a mirror for that registry (`[registry.mirrors]` in the matrix, or ECOREADY_REGISTRY_MIRRORS) "
    "that holds the images, then re-run"
)
# a registry on this machine that does not answer is one that is not started
LOCAL_REGISTRY_REMEDY = (
    "start the registry at {registry} (for the offline lab: `ecoready lab up`), or point the matrix's "
    "images at a registry that answers, then re-run"
)
LOCAL_HOSTS = ("127.", "localhost", "[::1]", "::1")


def registry_remedy(registry: str) -> str:
    """The way out for a registry that could not be asked, for where it is."""
    if registry.startswith(LOCAL_HOSTS):
        return LOCAL_REGISTRY_REMEDY.format(registry=registry)
    return REGISTRY_REMEDY


ENGINE_REMEDY = "start the docker engine (or check the host's address), then re-run"
NOT_OURS = "not the component's fault: see the detail, fix the cause, then re-run the cell"
STAGE_WORDS = {
    Stage.PACKAGING: "packaging",
    Stage.IMAGE: "image",
    Stage.AUDIT: "build audit",
    Stage.START: "start",
    Stage.SMOKE: "smoke checks",
    Stage.BENCH: "benchmark",
}


@dataclass(frozen=True)
class Advice:
    """One cell that is not ready: what failed (`reason`), its short form for the verdict
    line (`short`), and what a person can do (`remedy`)."""

    cell_id: str
    component: str
    arch: str
    status: Status
    emulated: bool
    reason: str
    short: str
    remedy: str
    unverified: bool = False  # a contract-only probe blamed the component: the reason says so


@dataclass(frozen=True)
class Why:
    """A finished cell that is not ready, as its stages tell it: the stage that decided its
    status and who that blames (both None when no stage says: a report made by hand whose
    status no stage explains)."""

    cell: CellResult
    stage: StageResult | None
    blame: Blame | None

    @property
    def cause(self) -> Cause | None:
        return self.blame.cause if self.blame else None

    @property
    def detail(self) -> str:
        """The deciding stage's own detail, else the cell's."""
        return self.stage.detail if self.stage else self.cell.detail

    @property
    def words(self) -> str:
        """The deciding stage in words (`smoke checks`), or "" when no stage decided."""
        return STAGE_WORDS[self.stage.stage] if self.stage else ""


def why(cell: CellResult) -> Why:
    found = deciding(cell.stages)
    if found is None or found[1].status is not cell.status:
        return Why(cell, None, None)
    return Why(cell, *found)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def cell_reason(cell: CellResult) -> tuple[str, str]:
    """(reason, short): what failed, in words, and a few words of it for verdict lines."""
    said_ = why(cell)
    reason = REASONS.get(said_.cause) if said_.cause else None
    return reason(said_) if reason else _by_status(said_)


def _with(short: str, detail: str) -> tuple[str, str]:
    return (f"{short}: {detail}" if detail else short), short


def _not_there(w: Why) -> tuple[str, str]:
    what = "package" if w.stage is not None and w.stage.stage is Stage.PACKAGING else "image"
    return _with(f"no {w.cell.arch} {what}", w.detail)


def _did_not_start(w: Why) -> tuple[str, str]:
    short = "does not start" if w.stage is None or w.stage.stage is Stage.START else f"{w.words} failed"
    return _with(short, w.detail)


def _checks_failed(w: Why) -> tuple[str, str]:
    checks = [c.name for r in w.cell.stages for c in r.checks if c.outcome is Outcome.FAIL]
    if checks:
        short = f"{', '.join(checks)} failed"
        return f"{w.words or 'checks'}: {short}", short  # each check's own detail follows it in every view
    if w.blame is not None and w.blame.subject:
        short = f"{w.blame.subject} failed"
        return short, short
    return w.detail or "checks failed", w.detail or "checks failed"


def _over_budget(w: Why) -> tuple[str, str]:
    words = w.words or "a stage"
    return _with(f"{words} ran over its budget", w.detail)[0], f"{words} timed out"


def _registry(w: Why) -> tuple[str, str]:
    registry = w.blame.subject if w.blame else ""
    return f"registry {registry}: {w.detail}", f"registry {registry} {_cut(w.detail.split(' (')[0], 32)}"


def _mirror(w: Why) -> tuple[str, str]:
    """A mirror's trouble (mirror-gap, -behind, -down): the mirror named, never the component."""
    mirror = w.blame.subject if w.blame else ""
    short = mirror_words.SHORT.get(w.cause or Cause.MIRROR_GAP, "failed")
    return _with(f"mirror {mirror}", w.detail)[0], f"mirror {_cut(mirror, 32)} {short}"


def _backend(w: Why) -> tuple[str, str]:
    backend = w.blame.subject if w.blame else ""
    return _with(f"backend {backend}", w.detail)[0], f"backend {backend} failed"


def _locked(w: Why) -> tuple[str, str]:
    """It wants what only the user can give: a login for a registry, a licence key or a
    EULA's acceptance (the remedy says what to provide)."""
    if w.cause is Cause.NEEDS_LOGIN:
        registry = w.blame.subject if w.blame else ""
        return f"registry {registry} wants a login: {w.detail}", f"needs a login to {_cut(registry, 32)}"
    return said(w.blame, w.detail) if w.blame else (w.detail or "needs a licence"), "needs a licence"


def _tool(w: Why) -> tuple[str, str]:
    reason = w.detail or "the tool or its infrastructure failed"
    return reason, _cut(reason, 48)


def _by_status(w: Why) -> tuple[str, str]:
    """A cell no stage explains: its status and its own detail."""
    status = w.cell.status
    if status is Status.MISSING:
        return _not_there(w)
    if status is Status.BROKEN:
        return _did_not_start(w)
    if status is Status.PARTIAL:
        return _checks_failed(w)
    if status is Status.TIMEOUT:
        return _over_budget(w)
    if status is Status.ERROR:
        return _tool(w)
    if status is Status.SKIPPED:
        return w.cell.detail or "not run", "not run"
    if status is Status.LOCKED:
        return _locked(w)
    return w.cell.detail or status.value, status.value


REASONS: Mapping[Cause, Callable[[Why], tuple[str, str]]] = {
    Cause.NOT_PUBLISHED: _not_there,
    Cause.NO_SUCH_IMAGE: _not_there,
    Cause.MISLABELLED_IMAGE: lambda w: (said(w.blame, w.detail), "mislabelled image"),
    Cause.MISLABELLED_BINARY: lambda w: (said(w.blame, w.detail), "mislabelled binary"),
    Cause.NOT_FOR_THIS_CPU: _did_not_start,
    Cause.DOES_NOT_START: _did_not_start,
    Cause.CHECK_FAILED: _checks_failed,
    Cause.BENCH_FAILED: _checks_failed,
    Cause.OVER_BUDGET: _over_budget,
    Cause.ENGINE_UNREACHABLE: _tool,
    Cause.HOST_LOST: _tool,
    Cause.ENGINE_REFUSED: _tool,
    Cause.ENGINE_STUCK: _tool,
    Cause.REGISTRY: _registry,
    Cause.MIRROR_GAP: _mirror,
    Cause.MIRROR_BEHIND: _mirror,
    Cause.MIRROR_DOWN: _mirror,
    Cause.CREDENTIALS: _tool,
    Cause.PULL_STALLED: _tool,
    Cause.BACKEND: _backend,
    Cause.TOOL_IMAGE: _tool,
    Cause.EMULATOR: _tool,
    Cause.NO_HOST: lambda w: (w.detail or f"no host for {w.cell.arch}", "no host"),
    Cause.MATRIX: _tool,
    Cause.INTERRUPTED: _tool,
    Cause.TOOL: _tool,
    Cause.INTERNAL: _tool,
    Cause.NEEDS_LOGIN: _locked,
    Cause.NEEDS_LICENCE: _locked,
    Cause.NOT_APPLICABLE: lambda w: (w.cell.detail or "not run", "not run"),
    Cause.TWIN_FAILED: lambda w: (said(w.blame, w.detail), "its native twin failed"),
}


def _same_way_remedy(w: Why, same: CellResult | None) -> str:
    """The remedy of a cell whose failure the row's other arch shares (`migration.same_way`,
    what the plan says too): what both arches share is to fix, never "confirm on a native
    host". Only for what the probe saw run (start, smoke, bench); "" otherwise."""
    if same is None or w.stage is None or w.stage.stage not in _PROBED or w.blame is None:
        return ""
    if w.blame.facts.party not in (Party.COMPONENT, Party.CLOCK):
        return ""
    how = "emulated" if same.emulated else "natively"
    return (
        f"{NOT_AN_ARCH_GAP}: it failed the same way on {same.arch} ({how}); fix what both arches share, "
        "the row's settings (a longer `timeout`, an option) or the image: its log says why"
    )


def _remedy(w: Why, step: Step | None, searched: bool) -> str:
    arch = w.cell.arch
    if step is not None and step.action in (Action.USE, Action.UPGRADE, Action.EMULATE):
        how = {
            Action.USE: f"use the tag {step.tag}, which publishes {arch}",
            Action.UPGRADE: f"{step.text} (the oldest newer version that publishes {arch})",
            Action.EMULATE: f"{step.text} on {arch} machines (it was ready emulated in this run)",
        }
        return how[step.action]
    if w.blame is not None and w.blame.fix and w.blame.facts.party in (Party.TOOL, Party.USER):
        return w.blame.fix  # whoever saw the trouble knew the way out (what to provide)
    cause = w.cause or STATUS_CAUSE.get(w.cell.status)
    if cause is None:
        return ""
    if cause is Cause.NOT_PUBLISHED:
        if w.cell.packaging is not None or (w.stage is not None and w.stage.stage is Stage.PACKAGING):
            return f"pick a version of the package that ships a {arch} build, or install the build tools it needs"
        if not searched:  # the run did not look through the tags (an older report)
            return f"look for a tag that publishes {arch} (a `TAG-aarch64` one, or a newer version), or build one"
    remedy = REMEDIES[cause]
    text = remedy[1] if w.cell.emulated and len(remedy) > 1 else remedy[0]
    subject = w.blame.subject if w.blame else ""
    if cause is Cause.REGISTRY:
        return registry_remedy(subject)
    behind = registry_remedy(subject) if w.blame is not None and w.blame.behind is Cause.REGISTRY else "see its own row"
    return text.format(arch=arch, subject=subject, behind=behind)


# A status no stage explains is advised as its most common cause.
STATUS_CAUSE = {
    Status.MISSING: Cause.NOT_PUBLISHED,
    Status.BROKEN: Cause.DOES_NOT_START,
    Status.PARTIAL: Cause.CHECK_FAILED,
    Status.TIMEOUT: Cause.OVER_BUDGET,
    Status.ERROR: Cause.TOOL,
    Status.SKIPPED: Cause.NOT_APPLICABLE,
    Status.LOCKED: Cause.NEEDS_LICENCE,
}
_ANOTHER_VERSION = "it does not run on {arch} as published: try another version, or report it to the publisher"
_CHECKS = "look at the failed checks in the cell's detail: a setting, or a real gap on this arch"
# cause -> (the remedy, and when it differs, the remedy for an emulated cell)
REMEDIES: Mapping[Cause, tuple[str, ...]] = {
    Cause.NOT_PUBLISHED: (
        "no tag of this image publishes {arch}: ask the publisher for an image for {arch}, build one, "
        "or choose another image",
    ),
    Cause.NO_SUCH_IMAGE: ("the image does not exist under this name: check the row's `image` (repository and tag)",),
    Cause.MISLABELLED_IMAGE: (
        "the image is not what its index claims: use a tag published correctly for {arch}, tell the publisher",
    ),
    Cause.MISLABELLED_BINARY: ("its programs are not {arch} ones: use an image whose build really targets {arch}",),
    Cause.NOT_FOR_THIS_CPU: (_ANOTHER_VERSION, EMULATOR_REMEDY),
    Cause.DOES_NOT_START: (_ANOTHER_VERSION, NATIVE_REMEDY),
    Cause.CHECK_FAILED: (_CHECKS, NATIVE_REMEDY),
    Cause.BENCH_FAILED: (_CHECKS, NATIVE_REMEDY),
    Cause.OVER_BUDGET: (
        "give it a longer `timeout` in its row, or look at its log: it may hang",
        "give it a longer `timeout` in its row, or run it on a native {arch} host ([[hosts]])",
    ),
    Cause.ENGINE_UNREACHABLE: (ENGINE_REMEDY,),
    Cause.HOST_LOST: (ENGINE_REMEDY,),
    Cause.ENGINE_REFUSED: ("the engine refused a call: see the detail for its answer, fix the cause, then re-run",),
    Cause.ENGINE_STUCK: (
        "the engine was too busy to answer (not the component's fault): let it settle, "
        "or run fewer cells at once (`--concurrency`), then re-run the cell",
    ),
    Cause.REGISTRY: (REGISTRY_REMEDY,),
    **{cause: (words,) for cause, words in mirror_words.REMEDIES.items()},
    Cause.CREDENTIALS: ("fix the registry credentials ecoready reads (the docker config or its helper), then re-run",),
    Cause.PULL_STALLED: ("the pull made no progress: check the network to the registry, then re-run the cell",),
    Cause.BACKEND: ("fix the backend {subject} first ({behind}), then re-run this cell",),
    Cause.TOOL_IMAGE: (
        "make the tool image ({subject}) available for {arch} (`[sysbench] image` in the matrix, "
        "or a mirror of its base's registry), or run with `--profile smoke`",
    ),
    Cause.EMULATOR: (EMULATOR_REMEDY,),
    Cause.NO_HOST: (EMULATOR_REMEDY,),
    Cause.MATRIX: ("fix the row in the matrix: the detail says what it asks and the image lacks",),
    Cause.INTERRUPTED: ("run it again",),
    Cause.TOOL: (NOT_OURS,),
    Cause.INTERNAL: ("a fault of ecoready's, not the component's: re-run the cell, and report it if it recurs",),
    Cause.NEEDS_LOGIN: (
        "log in to {subject} (`docker login {subject}`: ecoready reads the docker CLI's credentials, its "
        "config.json and credential helpers), then re-run; a registry answers a name that does not exist the "
        "same way, so check the row's `image` too",
    ),
    Cause.NEEDS_LICENCE: (
        "provide the licence key (or accept the EULA) the image asks for, as its log says, or pin a version "
        "that needs none; then re-run",
    ),
    Cause.NOT_APPLICABLE: ("run it again",),
    Cause.TWIN_FAILED: ("fix the native cell {subject} first (see its row): not an arch gap; then re-run this cell",),
}


def advice(report: Report) -> list[Advice]:
    """Every finished cell that is not ready, in grid order."""
    steps = {(s.component, s.arch): s for s in plan_steps(report)}
    out = []
    for _category, component, _name, cells in grid_rows(report):
        for arch in arches_of(report):
            cell = cells.get(arch)
            if cell is None or not cell.status.finished or cell.status is Status.READY:
                continue
            out.append(_advice(report, cell, steps.get((component, arch))))
    return out


def advice_for(report: Report, cell_id: str) -> Advice | None:
    """One cell's advice (None while it runs, or when it is ready)."""
    cell = report.cells.get(cell_id)
    if cell is None or not cell.status.finished or cell.status is Status.READY:
        return None
    step = next((s for s in plan_steps(report) if (s.component, s.arch) == (cell.component, cell.arch)), None)
    return _advice(report, cell, step)


def _advice(report: Report, cell: CellResult, step: Step | None) -> Advice:
    reason, short = cell_reason(cell)
    searched = any((s.component, s.arch) == (cell.component, cell.arch) for s in report.migration.searches)
    said_ = why(cell)
    row = {c.arch: c for c in report.cells.values() if c.component == cell.component}
    remedy = _same_way_remedy(said_, same_way(cell, row)) or _remedy(said_, step, searched)
    unverified = probe_unverified(said_)
    if unverified:
        reason = f"{reason}; {CONTRACT_CAVEAT}"
    return Advice(cell.id, cell.component, cell.arch, cell.status, cell.emulated, reason, short, remedy, unverified)


# The stages a probe runs: a verdict decided there is the probe's word on the component.
_PROBED = (Stage.START, Stage.SMOKE, Stage.BENCH)


def probe_unverified(w: Why) -> bool:
    """A cell whose component was blamed (or timed out) by what its probe ran, when that
    probe was written from the image's documented contract only: the failure may be the
    probe's (ecoready's), and every view says so."""
    if w.cell.verification is not Verification.CONTRACT or w.blame is None or w.stage is None:
        return False
    return w.stage.stage in _PROBED and w.blame.facts.party in (Party.COMPONENT, Party.CLOCK)


def advice_by_cell(report: Report) -> dict[str, Advice]:
    return {a.cell_id: a for a in advice(report)}
