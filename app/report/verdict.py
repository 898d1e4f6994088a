"""The answer at a glance (pure), worded once for every view (TUI, headless summary,
Markdown, HTML, JUnit): a verdict line per architecture, and for every cell that is not
ready what failed, in words, and what a person can do about it.

The remedies reuse the migration plan (`migration.py`: `use TAG`, `upgrade to`, `emulate`)
and add what the run's failure itself says: register an emulator, add a native `[[hosts]]`
entry, fix the backend, reach the registry. Identical registry failures are said once per
registry (`infra_lines`), not once per cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecoready.domain.model import CellResult, Outcome, Report, Stage, Status
from ecoready.report.migration import Action, Step, plan_steps
from ecoready.report.order import arches_of, grid_rows

EMULATOR_REMEDY = (
    "register an emulator for {arch} (qemu-user >= 8, e.g. `docker run --privileged --rm "
    "tonistiigi/binfmt --install {arch}`) or add a native {arch} host under [[hosts]]"
)
NATIVE_REMEDY = "confirm on a native {arch} host (add it under [[hosts]]): emulation can fail where hardware runs"
REGISTRY_REMEDY = (
    "check the network, or set `[registry] mirror` to a registry that holds the images, "
    "or try the offline lab matrix (containers/lab.toml)"
)
BLOCKERS = (Status.MISSING, Status.BROKEN)
NOT_CHECKED = (Status.ERROR, Status.SKIPPED)
STAGE_WORDS = {
    Stage.PACKAGING: "packaging",
    Stage.IMAGE: "image",
    Stage.AUDIT: "build audit",
    Stage.START: "start",
    Stage.SMOKE: "smoke checks",
    Stage.BENCH: "benchmark",
}
# `image: docker.io: unreachable (ConnectError: …)`: a registry that could not be asked
_REGISTRY_FAILURE = re.compile(
    r"^(?:image: )?(?P<registry>[a-z0-9.-]+\.[a-z]+(?::\d+)?|[0-9.]+:\d+|localhost(?::\d+)?): "
    r"(?P<reason>(?:(?:registry )?unreachable|no answer|rate limit|refus|HTTP 5).*)$"
)


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


@dataclass(frozen=True)
class RegistryTrouble:
    """Cells that all failed because one registry could not be asked."""

    registry: str
    reason: str
    cells: tuple[str, ...]


def registry_failure(cell: CellResult) -> tuple[str, str] | None:
    """(registry, reason) when the cell is `error` because its image's registry could not
    be asked (not a backend's: that cell says `backend …`)."""
    if cell.status is not Status.ERROR:
        return None
    found = _REGISTRY_FAILURE.match(_failed_detail(cell))
    return (found["registry"], found["reason"]) if found else None


def backend_failure(cell: CellResult) -> tuple[str, str] | None:
    """(backend, why) when the cell is `error` because its backend could not be had."""
    if cell.status is not Status.ERROR:
        return None
    rest = _strip(_failed_detail(cell), "image:", "start:")
    if not rest.startswith("backend "):
        return None
    name, _, why = rest.removeprefix("backend ").partition(" ")
    return name.rstrip(":"), why


def _failed_detail(cell: CellResult) -> str:
    """The failing stage's own detail (without the `stage:` prefix the reducer adds)."""
    for result in cell.stages:
        if result.outcome in (Outcome.ERROR, Outcome.TIMEOUT, Outcome.FAIL) and result.detail:
            return result.detail
    return cell.detail


def _failed_stage(cell: CellResult) -> Stage | None:
    for result in cell.stages:
        if result.outcome in (Outcome.ERROR, Outcome.TIMEOUT, Outcome.FAIL):
            return result.stage
    return None


def _strip(detail: str, *prefixes: str) -> str:
    for prefix in prefixes:
        while detail.startswith(prefix):
            detail = detail.removeprefix(prefix).lstrip()
    return detail


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def cell_reason(cell: CellResult) -> tuple[str, str]:
    """(reason, short): what failed, in words, and a few words of it for verdict lines."""
    detail = _failed_detail(cell)
    stage = _failed_stage(cell)
    status = cell.status
    if status is Status.MISSING:
        rest = _strip(detail, "missing:", "missing")
        what = "package" if stage is Stage.PACKAGING else "image"
        short = f"no {cell.arch} {what}"
        return (f"{short}: {rest}" if rest else short), short
    if status is Status.BROKEN:
        if detail.startswith("mislabelled binary"):
            return detail, "mislabelled binary"
        if detail.startswith("mislabelled"):
            return detail, "mislabelled image"
        words = STAGE_WORDS.get(stage, "start") if stage else "start"
        short = "does not start" if stage in (Stage.START, None) else f"{words} failed"
        return f"{short}: {detail}" if detail else short, short
    if status is Status.PARTIAL:
        checks = [c.name for r in cell.stages for c in r.checks if c.outcome is Outcome.FAIL]
        if checks:
            short = f"{', '.join(checks)} failed"
            words = STAGE_WORDS.get(stage, "checks") if stage else "checks"
            return f"{words}: {short}", short  # each check's own detail follows it in every view
        short = _strip(detail, "failed:") + " failed" if detail.startswith("failed:") else (detail or "checks failed")
        return short, short
    if status is Status.TIMEOUT:
        words = STAGE_WORDS.get(stage, "a stage") if stage else "a stage"
        rest = _strip(detail, f"{stage.value}:" if stage else "")
        return f"{words} ran over its budget: {rest}" if rest else f"{words} ran over its budget", f"{words} timed out"
    if status is Status.ERROR:
        found = registry_failure(cell)
        if found:
            what = found[1].split(" (")[0].removeprefix("registry ")
            return f"registry {found[0]}: {found[1]}", f"registry {found[0]} {what}"
        backend = backend_failure(cell)
        if backend:  # the backend is blamed, not the image
            name, why = backend
            return f"backend {name}: {why.removeprefix(': ')}".rstrip(": "), f"backend {name} failed"
        rest = _strip(cell.detail, "image:", "start:", "smoke:", "bench:", "audit:", "packaging:")
        reason = rest.split("; fix:")[0]
        reason = reason or "the tool or its infrastructure failed"
        short = "no host" if reason.startswith("no host for") else _cut(reason, 48)
        return reason, short
    if status is Status.SKIPPED:
        return cell.detail or "not run", "not run"
    return cell.detail or status.value, status.value


def _remedy(cell: CellResult, step: Step | None, searched: bool) -> str:
    arch = cell.arch
    detail = _failed_detail(cell)
    if step is not None and step.action in (Action.USE, Action.UPGRADE, Action.EMULATE):
        how = {
            Action.USE: f"use the tag {step.text.removeprefix('use ')}, which publishes {arch}",
            Action.UPGRADE: f"{step.text} (the oldest newer version that publishes {arch})",
            Action.EMULATE: f"{step.text} on {arch} machines (it was ready emulated in this run)",
        }
        return how[step.action]
    if cell.status is Status.MISSING:
        if cell.packaging is not None or _failed_stage(cell) is Stage.PACKAGING:
            return f"pick a version of the package that ships a {arch} build, or install the build tools it needs"
        if "not found" in detail:
            return "the image does not exist under this name: check the row's `image` (repository and tag)"
        if not searched:  # the run did not look through the tags (an older report)
            return f"look for a tag that publishes {arch} (a `TAG-aarch64` one, or a newer version), or build one"
        return (
            f"no tag of this image publishes {arch}: ask the publisher for an image for {arch}, build one, "
            "or choose another image"
        )
    if cell.status is Status.BROKEN:
        if detail.startswith("mislabelled binary"):
            return f"its programs are not {arch} ones: use an image whose build really targets {arch}"
        if detail.startswith("mislabelled"):
            return (
                f"the image is not what its index claims: use a tag published correctly for {arch}, tell the publisher"
            )
        if cell.emulated:
            if "exec format error" in detail:
                return EMULATOR_REMEDY.format(arch=arch)
            return NATIVE_REMEDY.format(arch=arch)
        return f"it does not run on {arch} as published: try another version, or report it to the publisher"
    if cell.status is Status.PARTIAL:
        if cell.emulated:
            return NATIVE_REMEDY.format(arch=arch)
        return "look at the failed checks in the cell's detail: a setting, or a real gap on this arch"
    if cell.status is Status.TIMEOUT:
        if cell.emulated:
            return f"give it a longer `timeout` in its row, or run it on a native {arch} host ([[hosts]])"
        return "give it a longer `timeout` in its row, or look at its log: it may hang"
    if cell.status is Status.ERROR:
        if registry_failure(cell):
            return REGISTRY_REMEDY
        text = cell.detail
        if "; fix: " in text:
            return text.split("; fix: ", 1)[1]
        if "no host for" in text:
            return EMULATOR_REMEDY.format(arch=arch)
        backend = backend_failure(cell)
        if backend:
            unreachable = _REGISTRY_FAILURE.match(backend[1].removeprefix(": "))
            first = REGISTRY_REMEDY if unreachable else "see its own row"
            return f"fix the backend {backend[0]} first ({first}), then re-run this cell"
        if "docker daemon unavailable" in text or "docker engine" in text:
            return "start the docker engine (or check the host's address), then re-run"
        return "not the component's fault: see the detail, fix the cause, then re-run the cell"
    if cell.status is Status.SKIPPED:
        return "run it again"
    return ""


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
    remedy = _remedy(cell, step, searched)
    return Advice(cell.id, cell.component, cell.arch, cell.status, cell.emulated, reason, short, remedy)


def advice_by_cell(report: Report) -> dict[str, Advice]:
    return {a.cell_id: a for a in advice(report)}


def registry_troubles(report: Report) -> list[RegistryTrouble]:
    """Cells whose registry could not be asked, one entry per registry and reason."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for cell in report.cells.values():
        found = registry_failure(cell)
        if found:
            grouped.setdefault(found, []).append(cell.id)
    return [RegistryTrouble(reg, reason, tuple(sorted(ids))) for (reg, reason), ids in sorted(grouped.items())]


def backend_troubles(report: Report) -> dict[tuple[str, str], list[str]]:
    """(backend, why) -> the cells that could not run because of it."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for cell in report.cells.values():
        found = backend_failure(cell)
        if found:
            grouped.setdefault((found[0], found[1].removeprefix(": ")), []).append(cell.id)
    return grouped


def infra_lines(report: Report) -> list[str]:
    """`registry docker.io: unreachable (ConnectError: …): 12 cells not checked; way out: …`,
    and `backend mysql-8.4: …: 3 cells not checked`: each trouble once, with the way out."""
    lines = [
        f"registry {t.registry}: {t.reason}: {plural(len(t.cells), 'cell')} not checked; way out: {REGISTRY_REMEDY}"
        for t in registry_troubles(report)
    ]
    for (backend, why), cells in sorted(backend_troubles(report).items()):
        out = REGISTRY_REMEDY if _REGISTRY_FAILURE.match(why) else "fix it (its own row says why)"
        lines.append(f"backend {backend}: {why}: {plural(len(cells), 'cell')} not checked; way out: {out}")
    return lines


def advice_to_list(report: Report) -> list[Advice]:
    """The advice a view lists cell by cell: registry failures are said once, by
    `infra_lines`, when more than one cell shares them."""
    collapsed = {cid for t in registry_troubles(report) if len(t.cells) > 1 for cid in t.cells}
    collapsed |= {cid for cells in backend_troubles(report).values() if len(cells) > 1 for cid in cells}
    return [a for a in advice(report) if a.cell_id not in collapsed]


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def how_run(report: Report, arch: str, short: bool = False) -> str:
    """`native on graviton`, `emulated with qemu-aarch64 on local`, `native on a, emulated
    with … on b`; `short`: `native`, `emulated`, `native and emulated` (where the header
    already names the hosts and emulators)."""
    cells = [c for c in report.cells.values() if c.arch == arch and c.host]
    native = sorted({c.host for c in cells if not c.emulated})
    emulated = sorted({c.host for c in cells if c.emulated})
    if short:
        return " and ".join(w for w, hosts in (("native", native), ("emulated", emulated)) if hosts) or "no host"
    parts = []
    if native:
        parts.append(f"native on {', '.join(native)}")
    if emulated:
        emulator = next((h.emulators.get(arch, "") for h in report.hosts if h.name in emulated), "")
        which = emulator.split(" version ")[0] if emulator else "qemu"
        parts.append(f"emulated with {which} on {', '.join(emulated)}")
    return ", ".join(parts) or "no host"


def arch_verdicts(report: Report, short: bool = False) -> list[str]:
    """One line per arch: `arm64 (emulated (qemu-aarch64) on local): 14 of 16 components
    ready; blocked by proxysql (no arm64 image); partial: percona-toolkit (pt-summary failed)`."""
    by_cell = {a.cell_id: a for a in advice(report)}
    lines = []
    for arch in arches_of(report):
        cells = [c for c in report.cells.values() if c.arch == arch]
        if not cells:
            continue
        ready = sum(1 for c in cells if c.status is Status.READY)
        text = f"{arch} ({how_run(report, arch, short)}): {ready} of {plural(len(cells), 'component')} ready"
        pending = sum(1 for c in cells if not c.status.finished)
        if pending:
            text += f" so far, {pending} to go"
        groups = (
            ("blocked by", BLOCKERS),
            ("partial", (Status.PARTIAL,)),
            ("timed out", (Status.TIMEOUT,)),
            ("not checked", NOT_CHECKED),
        )
        for words, statuses in groups:
            named = [by_cell[c.id] for c in _in_grid_order(report, cells) if c.status in statuses and c.id in by_cell]
            if named:
                text += f"; {words}{':' if words != 'blocked by' else ''} {_named(named)}"
        lines.append(text)
    return lines


MAX_NAMED = 6  # components named per group in a verdict line; the rest are counted


def _named(named: list[Advice]) -> str:
    """`a, b (no arm64 image), c (does not start)`: components sharing a reason, together."""
    by_short: dict[str, list[str]] = {}
    for item in named[:MAX_NAMED]:
        by_short.setdefault(item.short, []).append(item.component)
    joined = ", ".join(f"{', '.join(components)} ({short})" for short, components in by_short.items())
    return joined + (f" and {len(named) - MAX_NAMED} more" if len(named) > MAX_NAMED else "")


def _in_grid_order(report: Report, cells: list[CellResult]) -> list[CellResult]:
    order = {component: i for i, (_c, component, _n, _cells) in enumerate(grid_rows(report))}
    return sorted(cells, key=lambda c: order.get(c.component, len(order)))


def glance(report: Report) -> str:
    """`amd64 5 of 6 ready · arm64 1 of 6 ready, 3 blocked, 1 partial`: the exit line's words."""
    parts = []
    for arch in arches_of(report):
        cells = [c for c in report.cells.values() if c.arch == arch]
        if not cells:
            continue
        ready = sum(1 for c in cells if c.status is Status.READY)
        text = f"{arch} {ready} of {len(cells)} ready"
        for words, statuses in (("blocked", BLOCKERS), ("partial", (Status.PARTIAL,)), ("not checked", NOT_CHECKED)):
            count = sum(1 for c in cells if c.status in statuses)
            text += f", {count} {words}" if count else ""
        parts.append(text)
    return " · ".join(parts)
