"""Make text from containers, registries and configs inert: no escape sequences, and every
character that would act instead of show (control characters, bidi overrides, invisible
format characters) shown escaped, as `\\x1b` or `\\u202e`, so a view cannot be reordered,
hidden or driven by the text it displays.

Rich markup is not stripped here (brackets are legitimate in SQL and logs); renderers
escape it: the TUI builds `Text` objects, HTML escapes, Markdown escapes.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# C0 but tab and newline, DEL, C1. A lone carriage return (progress bars in logs) is dropped.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that change how the text around them is drawn without showing themselves:
# Unicode's format characters (Cf: bidi embeddings, overrides and isolates, zero-width
# ones, the BOM, tag characters), the line and paragraph separators, and the fillers that
# draw as nothing. tests/unit/test_text.py checks this against unicodedata.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)
_ACTING = re.compile(f"{_CONTROL.pattern}|{_INVISIBLE.pattern}")
_ACTING_OR_LAYOUT = re.compile(f"[\\t\\n]|{_ACTING.pattern}")
MAX_LINE = 500


def escaped(char: str) -> str:
    """How a character that must not act is shown: `\\x1b`, `\\u202e`, `\\U000e0041`."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _show(match: re.Match[str]) -> str:
    char = match.group()
    return "" if char == "\r" else escaped(char)


def inert(text: str, max_line: int = MAX_LINE) -> str:
    """`text` without escape sequences, its control and invisible characters shown
    escaped; long lines cut."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    text = _INVISIBLE.sub(_show, _CONTROL.sub(_show, text))
    if max_line:
        text = "\n".join(line if len(line) <= max_line else line[: max_line - 1] + "…" for line in text.split("\n"))
    return text


def shown(text: str) -> str:
    """`text` as one line where nothing acts: control, layout (tab, newline) and invisible
    characters shown escaped, a newline as `\\x0a`."""
    return _ACTING_OR_LAYOUT.sub(lambda m: escaped(m.group()), text)


def acting_character(text: str, *, layout_ok: bool = True) -> str | None:
    """The first character of `text` that would act instead of show (a control character,
    an escape, a bidi override, an invisible one), or None. `layout_ok=False`: tab and
    newline count too."""
    found = (_ACTING if layout_ok else _ACTING_OR_LAYOUT).search(text)
    return found.group() if found else None


def one_line(text: str, limit: int = 200) -> str:
    """The last meaningful line of `text`, inert and short (for cell details)."""
    lines = [ln.strip() for ln in inert(text, 0).splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plural(count: int, word: str) -> str:
    """`1 cell`, `3 cells`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
