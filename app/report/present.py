"""How statuses read to people: glyphs and words shared by the TUI, the headless summary
and the reports. Glyphs carry the meaning, so nothing depends on colour (NO_COLOR)."""

from __future__ import annotations

from collections.abc import Mapping

from ecoready.domain.model import CellResult, PlatformFitness, Status

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
}

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
}


def cell_text(cell: CellResult, width: int = 28) -> str:
    """`✔ ready 4.1s`, `✘ broken: exec format error`, `▶ start` ... plus the emulated mark."""
    glyph = GLYPH[cell.status]
    if cell.status is Status.RUNNING:
        words = cell.stage.value if cell.stage else "starting"
    elif cell.status is Status.READY:
        words = f"ready {cell.seconds:.1f}s"
    elif cell.status in (Status.PENDING, Status.MISSING, Status.SKIPPED):
        words = cell.status.value
    else:
        words = f"{cell.status.value}: {cell.detail}" if cell.detail else cell.status.value
    text = f"{glyph} {words}"
    if cell.emulated:
        text = f"{text} {EMULATED_MARK}"
    return text if len(text) <= width else text[: width - 1] + "…"


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
    words = cell.status.value
    if cell.status.finished and cell.status not in (Status.MISSING, Status.SKIPPED) and cell.seconds:
        words = f"{words} {cell.seconds:.1f}s"
    return f"{GLYPH[cell.status]} {words}"
