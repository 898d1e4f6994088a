"""The migration plan (pure): per component and target arch what it takes to run it there,
and which arch pins can go: a compose file's `platform:`, a Kubernetes workload's
`nodeSelector`, node affinity or arch toleration (each listed with its YAML path). Every exporter and `ecoready plan`
word it from here; it reads the report alone (cells, and the tag searches the run made).

- `ready`: the cell is ready with the image as pinned;
- `use TAG`: ready only under another tag (a vendor's `TAG-aarch64`), or missing while the
  tag list has a same-version tag that publishes the arch;
- `upgrade to >= V`: missing, and V is the oldest newer version that publishes the arch;
- `emulate`: no usable image for the arch, while another arch's image was ready under
  emulation in this run (the cost seen is said);
- `blocked`: no image and no alternative found, or the image does not work there;
- `unknown`: the run could not check it (error, skipped): not a verdict on the component.
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ecoready.domain.blame import Cause
from ecoready.domain.model import CellResult, ComponentOrigin, Report, Stage, Status, TagSearch, normalize_arch
from ecoready.domain.state import deciding
from ecoready.report.order import arches_of, grid_rows
from ecoready.report.parity_words import cell_finding, differs
from ecoready.report.status_words import status_detail


class Action(str, enum.Enum):
    READY = "ready"
    USE = "use"
    UPGRADE = "upgrade"
    EMULATE = "emulate"
    BLOCKED = "blocked"
    PROVIDE = "provide"  # it wants a login or a licence key only the user can give
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Step:
    """What to do for one component on one target arch."""

    component: str
    arch: str
    image: str
    action: Action
    text: str  # "ready", "use 1-aarch64", "upgrade to >= 2", "emulate the amd64 image", "blocked"
    why: str  # one sentence: what the run saw
    tag: str = ""  # the tag to use (USE) or the version to upgrade to (UPGRADE); "" none


@dataclass(frozen=True)
class Pin:
    """One arch pin (compose `platform:`, Kubernetes selectors) and whether it can go."""

    component: str
    service: str
    platform: str
    verdict: str  # "drop", "drop after the steps", "keep", "unknown"
    why: str
    pinned_at: tuple[str, ...] = ()  # where it is written: the places to edit (Kubernetes)


def plan_steps(report: Report) -> list[Step]:
    """Every (component, arch) cell of the components the run recorded an origin for (every
    one, since runs record them; reports of older runs have none), in grid order."""
    images = {o.component: o.image for o in report.migration.origins}
    searches = {(s.component, s.arch): s for s in report.migration.searches}
    slowdown = emulation_slowdown(report)
    steps = []
    for _category, component, _name, cells in grid_rows(report):
        if component not in images:
            continue
        for arch in arches_of(report):
            cell = cells.get(arch)
            if cell is not None:
                found = searches.get((component, arch))
                steps.append(_step(cell, images[component], found, cells, slowdown, len(report.merged_from) > 1))
    return steps


def _step(
    cell: CellResult,
    image: str,
    found: TagSearch | None,
    row: dict[str, CellResult],
    slowdown: float | None,
    merged: bool = False,
) -> Step:
    def step(action: Action, text: str, why: str, tag: str = "") -> Step:
        return Step(cell.component, cell.arch, image, action, text, why, tag)

    arch = cell.arch
    if cell.status is Status.READY:
        tag = cell.image.found_tag if cell.image else ""
        if tag:
            return step(Action.USE, f"use {tag}", f"{image} has no {arch} entry; its tag {tag} has, and is ready", tag)
        checked = " (checked under emulation)" if cell.emulated else ""
        if differs(cell) and cell.parity is not None:  # ready, but not the same software as the reference arch
            text = f"ready, but differs from {cell.parity.reference}"
            return step(Action.READY, text, f"every stage passed{checked}; {cell_finding(cell)}")
        return step(Action.READY, "ready", f"every stage passed{checked}")
    if cell.status is Status.LOCKED:
        return step(Action.PROVIDE, _provide(cell), status_detail(cell))
    if cell.status in (Status.ERROR, Status.SKIPPED, Status.PENDING, Status.RUNNING):
        return step(Action.UNKNOWN, "unknown", f"not checked: {cell.status.value}: {cell.detail or 'no detail'}")
    if found is not None and found.use_tag:
        return step(
            Action.USE, f"use {found.use_tag}", f"{found.use_tag} publishes {arch} ({looked(found)})", found.use_tag
        )
    if found is not None and found.upgrade_to:
        why = f"{found.upgrade_to} is the oldest newer tag that publishes {arch} ({looked(found)})"
        return step(Action.UPGRADE, f"upgrade to >= {found.upgrade_to}", why, found.upgrade_to)
    other = next((c for a, c in row.items() if a != arch and c.status is Status.READY and c.emulated), None)
    if other is not None:
        cost = f"; emulated cells took {slowdown:.1f}x as long as native ones in this run" if slowdown else ""
        if merged:
            cost = "; the cost of emulation is not measured (the merged reports ran apart, under other loads)"
        seen = f"the {other.arch} image was ready under emulation in {other.seconds:.1f} s"
        why = f"{cell.status.value} for {arch}; {seen}{cost}"
        return step(Action.EMULATE, f"emulate the {other.arch} image", why)
    why = _what_failed(cell) + _other_arch(cell, row)
    if found is not None:
        why += f"; {found.error}" if found.error else f"; no other tag publishes {arch} ({looked(found)})"
    return step(Action.BLOCKED, "blocked", why)


def _provide(cell: CellResult) -> str:
    """What a locked cell wants, from the blame that locked it."""
    found = deciding(cell.stages)
    blame = found[1] if found is not None else None
    if blame is not None and blame.cause is Cause.NEEDS_LOGIN:
        return f"log in to {blame.subject}" if blame.subject else "log in to its registry"
    return "provide a licence key (or accept the EULA)"


# log lines that say why, by how much they say: the first such line is the cause, the last
# one ("Aborting") its consequence
_TELLING = ("exec format error", "illegal instruction", "sigill", "[error]", "fatal", "error:", "error ")


def telling_line(lines: Sequence[str]) -> str:
    """The log line that says most about a failure: the first of the most telling kind."""
    for marker in _TELLING:
        for line in lines:
            if marker in line.lower() and "aborting" not in line.lower():
                return line.strip()
    return ""


def _what_failed(cell: CellResult) -> str:
    """The cell's status and detail, with the log's telling line when the detail quotes a
    less useful one (`exited with code 1: ... [ERROR] Aborting`)."""
    said = status_detail(cell)
    line = telling_line(cell.log_tail)
    if line and line not in said:
        head = said.split(": ", 2)
        return f"{': '.join(head[:2])}: {line}" if len(head) > 2 else f"{said}: {line}"
    return said


def _other_arch(cell: CellResult, row: dict[str, CellResult]) -> str:
    """What the other arches showed: ready natively there (the gap is this arch's), or the
    same failure there too (not an arch gap: the image or its settings)."""
    parts = []
    for arch, other in row.items():
        if arch != cell.arch and other.status is Status.READY:
            how = "under emulation" if other.emulated else "natively"
            parts.append(f"ready on {arch} ({how}): a gap of {cell.arch}'s")
    same = same_way(cell, row)
    if same is not None:
        parts.append(f"{same.status.value} on {same.arch} too, the same way: {NOT_AN_ARCH_GAP}")
    return "; " + "; ".join(parts) if parts else ""


NOT_AN_ARCH_GAP = "not an arch gap (the image or its settings)"


def same_way(cell: CellResult, row: Mapping[str, CellResult]) -> CellResult | None:
    """The row's cell on another arch that failed as this one did, when there is one: the
    same status, decided by the same cause at the same stage, and the same telling line in
    its log. Then the failure is not this arch's: every view says so (the plan's `blocked`,
    the remedy of `report/reasons.py`), never "confirm on a native host"."""
    if cell.status in (Status.READY, Status.SKIPPED) or not cell.status.finished:
        return None
    mine = deciding(cell.stages)
    for arch, other in row.items():
        if arch == cell.arch or other.status is not cell.status:
            continue
        theirs = deciding(other.stages)
        same_cause = (mine is None) == (theirs is None) and (
            mine is None or theirs is None or (mine[0].stage, mine[1].cause) == (theirs[0].stage, theirs[1].cause)
        )
        if same_cause and telling_line(other.log_tail) == telling_line(cell.log_tail):
            return other
    return None


def actions(report: Report) -> list[str]:
    """What to change, in order: the cheap and sure first (another tag, an upgrade, the pins
    that can go), then what costs (emulation), then what needs a decision (blocked), then
    what to check again (not checked). Plain sentences; empty when nothing is to change."""
    steps = plan_steps(report)
    out: list[str] = []
    for step in (s for s in steps if s.action is Action.USE):
        out.append(f"{step.component} on {step.arch}: {step.text} instead of {step.image} ({step.why})")
    for step in (s for s in steps if s.action is Action.UPGRADE):
        out.append(f"{step.component} on {step.arch}: {step.text} ({step.why})")
    for pin in plan_pins(report, steps):
        where = f" at {'; '.join(pin.pinned_at)}" if pin.pinned_at else ""
        name = pin.service or pin.component
        if pin.verdict == "drop":
            out.append(f"{name}: drop the pin {pin.platform}{where} ({pin.why})")
        elif pin.verdict == "drop after":
            out.append(f"{name}: then drop the pin {pin.platform}{where} (after: {pin.why})")
    for step in (s for s in steps if s.action is Action.PROVIDE):
        out.append(f"{step.component} on {step.arch}: {step.text}, then check again ({step.why})")
    for step in (s for s in steps if s.action is Action.EMULATE):
        out.append(f"{step.component} on {step.arch}: no image for {step.arch}; {step.text} ({step.why})")
    for step in (s for s in steps if s.action is Action.BLOCKED):
        out.append(
            f"{step.component} on {step.arch}: blocked: {step.why}; decide: another image or version, "
            "or ask the publisher"
        )
    unknown = sorted({f"{s.component}/{s.arch}" for s in steps if s.action is Action.UNKNOWN})
    if unknown:
        out.append(f"check again (the run could not judge them): {', '.join(unknown)}")
    return out


def looked(found: TagSearch) -> str:
    return f"looked at {found.looked_at} of {found.tags_listed} tags"


def emulation_slowdown(report: Report) -> float | None:
    """How much longer emulated cells took than native ones of the same component (the
    median ratio over components ready both ways), their benches left out (a bench runs
    for as long as it is told); None when the run has no such pair, and for a merged
    report (its halves ran apart, under other loads: not measured)."""
    if len(report.merged_from) > 1:
        return None
    ratios = []
    for _category, _component, _name, cells in grid_rows(report):
        ready = [(c, _work_seconds(c)) for c in cells.values() if c.status is Status.READY]
        native = [s for c, s in ready if not c.emulated and s > 0]
        emulated = [s for c, s in ready if c.emulated and s > 0]
        if native and emulated:
            ratios.append(max(emulated) / min(native))
    return statistics.median(ratios) if ratios else None


def _work_seconds(cell: CellResult) -> float:
    bench = cell.stage_result(Stage.BENCH)
    return cell.seconds - (bench.seconds if bench is not None else 0.0)


def plan_pins(report: Report, steps: Sequence[Step]) -> list[Pin]:
    """Each component with an arch pin: can it go? Yes when every other arch is ready;
    after the steps when they are `use`/`upgrade`; else it stays."""
    pins = []
    for origin in report.migration.origins:
        if not origin.platform:
            continue
        pinned = normalize_arch(origin.platform.split("/")[1]) if "/" in origin.platform else None
        others = [s for s in steps if s.component == origin.component and s.arch != pinned]
        if not others:
            verdict, why = "unknown", f"the run checked no arch but {pinned or origin.platform}"
        elif all(s.action is Action.READY for s in others):
            verdict, why = "drop", "ready on " + ", ".join(s.arch for s in others)
        elif all(s.action in _CAN_GO for s in others):
            verdict, why = (
                "drop after",
                "; ".join(f"{s.arch}: {s.text}" for s in others if s.action is not Action.READY),
            )
        else:
            verdict, why = "keep", "; ".join(f"{s.arch}: {s.text}" for s in others if s.action not in _CAN_GO)
        pins.append(Pin(origin.component, origin.service, origin.platform, verdict, why, origin.pinned_at))
    return pins


_CAN_GO = (Action.READY, Action.USE, Action.UPGRADE)


def pins_published(
    origins: Sequence[ComponentOrigin], published: Mapping[tuple[str, str], tuple[str, bool]], arches: Sequence[str]
) -> list[Pin]:
    """The pins the tag watch shows can go: the image publishes every arch of `arches` but
    the pinned one. `published`: (image, arch) -> (since when, whether only since the
    watch's first look), as `judge/tag_findings.published_since` gives it."""
    pins = []
    for origin in origins:
        pinned = normalize_arch(origin.platform.split("/")[1]) if "/" in origin.platform else None
        others = [a for a in arches if a != pinned]
        found = [published.get((origin.image, a)) for a in others]
        dates = [d for d in found if d is not None]
        if not origin.platform or not others or len(dates) != len(others):
            continue
        since = max(d[0] for d in dates)
        at_least = "at least " if any(d[1] and d[0] == since for d in dates) else ""
        why = f"its image publishes {', '.join(others)} since {at_least}{since[:10]}"
        pins.append(Pin(origin.component, origin.service, origin.platform, "drop", why, origin.pinned_at))
    return pins


def drop_pin_text(pin: Pin) -> str:
    """`drop `platform: linux/amd64` from service db (compose.yaml:7): its image publishes
    arm64 since 2026-12-05`; a Kubernetes pin is named by where it is written."""
    where = f" ({'; '.join(pin.pinned_at)})" if pin.pinned_at else ""
    if all(p.endswith(".platform") for p in pin.pinned_at):
        name = f"service {pin.service}" if pin.service else f"component {pin.component}"
        return f"drop `platform: {pin.platform}` from {name}{where}: {pin.why}"
    return f"drop the {pin.platform} pin of {pin.service or pin.component}{where}: {pin.why}"


PLAN_HEADER = ("component", "image", "arch", "plan", "why")
PIN_HEADER = ("service", "component", "pin", "can it go?", "why", "written at")


def step_row(step: Step) -> list[str]:
    return [step.component, step.image, step.arch, step.text, step.why]


def pin_row(pin: Pin) -> list[str]:
    return [pin.service or "-", pin.component, pin.platform, pin.verdict, pin.why, "; ".join(pin.pinned_at) or "-"]
