"""How statuses read to people: glyphs and words shared by the TUI, the headless summary
and the reports. Glyphs carry the meaning, so nothing depends on colour (NO_COLOR)."""

from __future__ import annotations

from collections.abc import Mapping

from app.model import CellResult, Status

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
