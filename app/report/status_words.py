"""How statuses read to people: glyphs and words shared by the TUI, the headless summary
and the reports. Glyphs carry the meaning, so nothing depends on colour (NO_COLOR)."""

from __future__ import annotations

from collections.abc import Mapping

from ecoready.domain.blame import Outcome
from ecoready.domain.model import UNAME_MACHINE, CellResult, PlatformFitness, Stage, Status
from ecoready.domain.packaging import InstallKind, Packaging, PackagingVerdict
from ecoready.report.parity_words import PARITY_MARK, differs

GLYPH: Mapping[Status, str] = {
    Status.PENDING: "·",
    Status.RUNNING: "▶",
    Status.READY: "✔",
    Status.PARTIAL: "◐",
    Status.BROKEN: "✘",
    Status.MISSING: "∅",
    Status.TIMEOUT: "⧗",
    Status.ERROR: "⚠",
    Status.SKIPPED: "–",
    Status.LOCKED: "⚿",
}

# Colour names understood by Rich and by the HTML report's CSS.
COLOUR: Mapping[Status, str] = {
    Status.PENDING: "grey50",
    Status.RUNNING: "cyan",
    Status.READY: "green",
    Status.PARTIAL: "yellow",
    Status.BROKEN: "red",
    Status.MISSING: "magenta",
    Status.TIMEOUT: "dark_orange",
    Status.ERROR: "bright_red",
    Status.SKIPPED: "grey50",
    Status.LOCKED: "blue",
}

QUEUED_WORD = "queued"  # a cell under way that waits for its turn: no timer, no spinner

EMULATED_MARK = "ᵉ"
EMULATED_MEANING = "ran emulated (qemu): correct or not, but its timings and benchmarks are not performance"

# What each status means, for legends (reports) and help texts.
MEANING: Mapping[Status, str] = {
    Status.PENDING: "not started",
    Status.RUNNING: "under way",
    Status.READY: "every stage passed",
    Status.PARTIAL: "starts, but some checks fail",
    Status.BROKEN: "published, but does not start or crashes",
    Status.MISSING: "no image published for this architecture",
    Status.TIMEOUT: "a stage ran over its time budget",
    Status.ERROR: "the tool or the infrastructure failed, not the component",
    Status.SKIPPED: "not run",
    Status.LOCKED: "needs what only you can give: a registry login, a licence key or a EULA's acceptance",
}


def took_text(cell: CellResult, compact: bool = False) -> str:
    """A cell's time with its bench apart: `4.1s`, `1.7s + bench 79.0s` (`1.7s+79.0s`
    compact): start and smoke are the component's, the bench is sysbench's."""
    bench = cell.stage_result(Stage.BENCH)
    if bench is None or bench.seconds < 0.05:
        return f"{cell.seconds:.1f}s"
    rest = max(0.0, cell.seconds - bench.seconds)
    return f"{rest:.1f}s+{bench.seconds:.0f}s" if compact else f"{rest:.1f}s + bench {bench.seconds:.1f}s"


# the stages that run the image's programs: a cell that reached none of them has no result
# from emulation, whatever host it was meant for
_RUNS = frozenset({Stage.START, Stage.SMOKE, Stage.BENCH})


def ran(cell: CellResult) -> bool:
    """Whether the cell ran the image's programs: a cell stopped at its image, its package
    or before (or cut short) has no result of its own to time or to call emulated."""
    if cell.status in (Status.MISSING, Status.SKIPPED, Status.PENDING):
        return False
    if cell.status is Status.RUNNING:
        return cell.stage in _RUNS
    if not cell.stages:  # a report without its stages: a judged status was run
        return cell.status is not Status.ERROR
    return any(s.stage in _RUNS and s.outcome is not Outcome.SKIP for s in cell.stages)


def shows_emulated(cell: CellResult) -> bool:
    """Whether the cell's result came from emulation: emulated, and it ran something (a cell
    stopped at its image or its package never ran, so it carries no mark)."""
    return cell.emulated and ran(cell)


def timed(cell: CellResult) -> bool:
    """Whether a view says how long the cell took: only what ran (never `broken 0.1s` for a
    cell whose image was refused)."""
    return cell.status.finished and ran(cell) and cell.seconds >= 0.05


def cell_text(cell: CellResult, width: int = 28) -> str:
    """`✔ ready 4.1s`, `✘ broken: exec format error`, `▶ start` ... plus the emulated mark."""
    glyph = GLYPH[cell.status]
    if cell.queued:
        glyph, words = GLYPH[Status.PENDING], QUEUED_WORD
    elif cell.status is Status.RUNNING:
        words = cell.stage.value if cell.stage else "starting"
    elif cell.status is Status.READY:
        words = f"ready {took_text(cell)}" + (f" · {packaging_word(cell.packaging)}" if cell.packaging else "")
    elif cell.status in (Status.PENDING, Status.MISSING, Status.SKIPPED):
        words = cell.status.value
    else:
        words = f"{cell.status.value}: {cell.detail}" if cell.detail else cell.status.value
    text = f"{glyph} {words}"
    mark = (f" {EMULATED_MARK}" if shows_emulated(cell) else "") + (f" {PARITY_MARK}" if differs(cell) else "")
    if len(text) + len(mark) > width:  # cut the words, never the mark
        text = text[: max(width - len(mark) - 1, 1)] + "…"
    return text + mark


def platform_text(p: PlatformFitness, width: int = 28) -> str:
    """`✔ AMD EPYC 2cpu 4K v4`, `⚠ Neoverse-N1 64cpu 64K`, `? not asked: ...` (⚠: the
    platform has a hazard besides emulation, which the mark says already)."""
    if p.error and not p.machine:
        text = f"? not asked: {p.error}"
    else:
        risky = any(h.code != "emulated" for h in p.hazards)
        parts = [p.cpu_model.removeprefix("ARM ") or p.machine or "?"]
        if p.cpus:
            parts.append(f"{p.cpus}cpu")
        if p.page_size:
            parts.append(f"{p.page_size // 1024}K")
        if p.x86_level.startswith("x86-64-"):
            parts.append(p.x86_level.removeprefix("x86-64-"))
        text = ("⚠ " if risky else "✔ ") + " ".join(parts)
    if p.emulated:
        text = f"{text} {EMULATED_MARK}"
    return text if len(text) <= width else text[: width - 1] + "…"


def short_text(cell: CellResult) -> str:
    """`✔ ready 4.1s`, `◐ partial 3.7s`, `∅ missing`: glyph, status and time, no detail.
    The emulated mark is left to the caller (reports show it in their own way)."""
    if cell.queued:
        return f"{GLYPH[Status.PENDING]} {QUEUED_WORD}"
    words = cell.status.value
    if timed(cell):
        words = f"{words} {took_text(cell)}"
    return f"{GLYPH[cell.status]} {words}"


def packaging_text(p: Packaging) -> str:
    """A driver's packaging verdict for its arch, as every view shows it next to the
    runtime result: `ready (wheel)`, `ready (built from source: needs gcc, libmariadb-dev)`,
    `source build (needs gcc)` (not installed yet), `missing (no aarch64 build, source build
    failed: ...)`."""
    needs = f"needs {', '.join(p.needs)}" if p.needs else ""
    if p.install_kind is InstallKind.FAILED:
        why = p.install
        if p.artifact:
            return f"missing (install failed: {why})"
        return f"missing (no {UNAME_MACHINE.get(p.arch, p.arch)} build, source build failed: {why})"
    if p.verdict is PackagingVerdict.MISSING:
        return f"missing ({p.detail})" if p.detail else "missing"
    if p.install_kind is InstallKind.SOURCE:
        return f"ready (built from source: {needs})" if needs else "ready (built from source)"
    if p.verdict is PackagingVerdict.SOURCE:
        return f"source build ({needs})" if needs else "source build"
    if p.verdict is PackagingVerdict.NOT_ASKED:
        return "not asked"
    return f"ready ({p.artifact})" if p.artifact else "ready"


def packaging_word(p: Packaging) -> str:
    """The verdict in a word or two, for grid cells: `wheel`, `pure JS`, `built from source`."""
    if p.install_kind is InstallKind.SOURCE:
        return "built from source"
    if p.verdict is PackagingVerdict.READY:
        return p.artifact or "ready"
    return str(p.verdict.value)


def packaging_line(p: Packaging) -> str:
    """`mysqlclient 2.2.7 (pypi:mysqlclient==2.2.*): ready (wheel)`, and `, from cache`
    when the run installed nothing."""
    cached = ", installed by an earlier run (cache)" if p.cached else ""
    return f"{' '.join(filter(None, (p.package, p.version)))} ({p.spec}): {packaging_text(p)}{cached}"


def size_text(size: int | None) -> str:
    """One unit family everywhere (images table, TUI, reports): `196.2 MiB`, `1.2 GiB`."""
    if not size:
        return ""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return ""  # pragma: no cover


def status_detail(cell: CellResult) -> str:
    """`missing: not found; …`: the status and its detail, the status said once (a detail
    may start with it already: `missing: missing: …` reads badly)."""
    if not cell.detail:
        return cell.status.value
    return f"{cell.status.value}: {cell.detail.removeprefix(f'{cell.status.value}: ')}"
