"""Make text from containers and configs inert: no ANSI escapes, no control characters.

Rich markup is not stripped here (brackets are legitimate in SQL and logs); renderers
escape it: the TUI builds `Text` objects, HTML escapes, Markdown escapes.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MAX_LINE = 500


def inert(text: str, max_line: int = MAX_LINE) -> str:
    """`text` without escape sequences or control characters; long lines cut."""
    text = _CONTROL.sub("", _ANSI.sub("", text.replace("\r\n", "\n")))
    if max_line:
        text = "\n".join(line if len(line) <= max_line else line[: max_line - 1] + "…" for line in text.split("\n"))
    return text


def one_line(text: str, limit: int = 200) -> str:
    """The last meaningful line of `text`, inert and short (for cell details)."""
    lines = [ln.strip() for ln in inert(text, 0).splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
