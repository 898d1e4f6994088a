"""Matrix rows -> TOML text (pure). Every string goes through `toml_string`, every key
through `toml_key`, every comment through `comment`: names from a compose file or a
running engine (quotes, backslashes, newlines, control characters, lone surrogates) come
out as the same text when the file is read back, and never as TOML syntax."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ecoready.domain.text import shown
from ecoready.stack.mapping import Row

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """A TOML basic string: quotes and backslashes escaped, control characters (and DEL) as
    \\uXXXX, lone surrogates (not Unicode scalar values) as U+FFFD."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)  # fullmatch: `$` lets "A\n" through


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def comment(text: str) -> str:
    """One comment line: whatever `text` holds, nothing after the `#` can end the comment."""
    line = "".join(
        ch if ord(ch) >= 0x20 and ord(ch) != 0x7F and not 0xD800 <= ord(ch) <= 0xDFFF else " " for ch in text
    )
    return f"# {line.strip()}".rstrip()


def matrix_text(title: str, arches: Sequence[str], rows: Sequence[Row], header: Sequence[str] = ()) -> str:
    lines = [comment(h) for h in header]
    lines += [f"title = {toml_string(shown(title))}", f"arches = {toml_value(list(arches))}", 'profile = "smoke"', ""]
    for row in rows:
        lines.extend(comment(why) for why in row.why)
        lines.append("[[components]]")
        fields: list[tuple[str, Any]] = [
            ("id", row.id),
            ("name", row.name),
            ("category", row.category.value),
            ("probe", row.probe),
            ("image", row.image),
            ("service", row.service),
        ]
        fields += [(key, value) for key, value in (("platform", row.platform), ("backend", row.backend)) if value]
        if row.pinned_at:
            fields.append(("pinned_at", list(row.pinned_at)))
        lines.extend(f"{key} = {toml_value(value)}" for key, value in fields)
        if row.options:
            lines.append("")
            lines.append("[components.options]")
            lines.extend(f"{toml_key(key)} = {toml_value(value)}" for key, value in row.options.items())
        lines.append("")
    return "\n".join(lines)
