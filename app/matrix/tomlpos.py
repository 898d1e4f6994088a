"""Where each key and value of a TOML document starts, for error messages.

tomllib parses and validates syntax but forgets positions, so schema errors could not say
`file:line:col`. This scanner walks a document tomllib already accepted and records the
(line, column) of every key and value by path, e.g. ("components", 2, "probe"). It is
lenient by design: on anything it does not understand it stops, and callers fall back to
the nearest recorded parent.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

Path = tuple[str | int, ...]
Position = tuple[int, int]  # 1-based line, 1-based column


@dataclass
class Positions:
    keys: dict[Path, Position] = field(default_factory=dict)
    values: dict[Path, Position] = field(default_factory=dict)

    def of_key(self, path: Sequence[str | int]) -> Position:
        """Position of the key at `path`, else of its nearest recorded parent, else 1:1."""
        return self._nearest(self.keys, tuple(path)) or self._nearest(self.values, tuple(path)) or (1, 1)

    def of_value(self, path: Sequence[str | int]) -> Position:
        """Position of the value at `path`, else of its key, else of a parent."""
        p = tuple(path)
        return self.values.get(p) or self.of_key(p)

    @staticmethod
    def _nearest(table: dict[Path, Position], path: Path) -> Position | None:
        while True:
            if path in table:
                return table[path]
            if not path:
                return None
            path = path[:-1]


class _Stop(Exception):
    """The scanner met something it does not follow; keep what was recorded so far."""


_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.line_starts = [0]
        for idx, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(idx + 1)
        self.pos = Positions()
        self.aot_index: dict[Path, int] = {}

    def where(self, offset: int) -> Position:
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def peek(self, k: int = 1) -> str:
        return self.text[self.i : self.i + k]

    def skip_space(self, newlines: bool) -> None:
        while self.i < self.n:
            ch = self.text[self.i]
            if ch in " \t\r" or (newlines and ch == "\n"):
                self.i += 1
            elif ch == "#":
                while self.i < self.n and self.text[self.i] != "\n":
                    self.i += 1
            else:
                return

    def string(self) -> str:
        t = self.text
        for quote in ('"""', "'''"):
            if t.startswith(quote, self.i):
                end = t.find(quote, self.i + 3)
                while end != -1 and quote == '"""' and _escaped(t, end):
                    end = t.find(quote, end + 1)
                if end == -1:
                    raise _Stop
                while t.startswith(quote[0], end + 3):  # up to two quotes may close it
                    end += 1
                value = t[self.i + 3 : end]
                self.i = end + 3
                return value
        quote = t[self.i]
        j = self.i + 1
        out: list[str] = []
        while j < self.n and t[j] != quote:
            if t[j] == "\n":
                raise _Stop
            if quote == '"' and t[j] == "\\":
                char, j = _unescape(t, j)
                out.append(char)
                continue
            out.append(t[j])
            j += 1
        if j >= self.n:
            raise _Stop
        self.i = j + 1
        return "".join(out)

    def key(self) -> list[tuple[str, int]]:
        """A dotted key as [(segment, offset), ...]."""
        parts: list[tuple[str, int]] = []
        while True:
            self.skip_space(newlines=False)
            start = self.i
            if self.peek() in ('"', "'"):
                parts.append((self.string(), start))
            else:
                j = self.i
                while j < self.n and self.text[j] in _BARE:
                    j += 1
                if j == self.i:
                    raise _Stop
                parts.append((self.text[self.i : j], start))
                self.i = j
            self.skip_space(newlines=False)
            if self.peek() == ".":
                self.i += 1
                continue
            return parts

    def resolve(self, segments: Sequence[str]) -> Path:
        """A table path with the current index of every array of tables on the way."""
        path: Path = ()
        for seg in segments:
            path = (*path, seg)
            if path in self.aot_index:
                path = (*path, self.aot_index[path])
        return path

    def value(self, path: Path) -> None:
        self.skip_space(newlines=False)
        self.pos.values.setdefault(path, self.where(self.i))
        ch = self.peek()
        if ch in ('"', "'"):
            self.string()
        elif ch == "[":
            self.i += 1
            k = 0
            while True:
                self.skip_space(newlines=True)
                if self.peek() == "]":
                    self.i += 1
                    return
                self.value((*path, k))
                k += 1
                self.skip_space(newlines=True)
                if self.peek() == ",":
                    self.i += 1
        elif ch == "{":
            self.i += 1
            while True:
                self.skip_space(newlines=False)
                if self.peek() == "}":
                    self.i += 1
                    return
                self.keyvalue(path)
                self.skip_space(newlines=False)
                if self.peek() == ",":
                    self.i += 1
        else:  # number, bool, date-time: up to a delimiter
            while self.i < self.n and self.text[self.i] not in ",]}\n#":
                self.i += 1

    def keyvalue(self, table: Path) -> None:
        parts = self.key()
        path = table
        for seg, offset in parts:
            path = (*path, seg)
            self.pos.keys.setdefault(path, self.where(offset))
        if self.peek() != "=":
            raise _Stop
        self.i += 1
        self.value(path)

    def document(self) -> Positions:
        table: Path = ()
        try:
            while True:
                self.skip_space(newlines=True)
                if self.i >= self.n:
                    break
                start = self.i
                if self.peek(2) == "[[":
                    self.i += 2
                    segs = [s for s, _ in self.key()]
                    head = (*self.resolve(segs[:-1]), segs[-1])
                    self.aot_index[head] = self.aot_index.get(head, -1) + 1
                    table = (*head, self.aot_index[head])
                    self.pos.keys.setdefault(head, self.where(start))
                    self.pos.keys[table] = self.where(start)
                    self.i = self.text.index("]]", self.i) + 2
                elif self.peek() == "[":
                    self.i += 1
                    segs = [s for s, _ in self.key()]
                    table = self.resolve(segs)
                    self.pos.keys.setdefault(table, self.where(start))
                    self.i = self.text.index("]", self.i) + 1
                else:
                    self.keyvalue(table)
                # the rest of the line is a comment or nothing
                self.skip_space(newlines=False)
        except (_Stop, ValueError, IndexError):
            pass
        return self.pos


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


def _unescape(text: str, j: int) -> tuple[str, int]:
    """The character the escape at `text[j]` (a backslash) stands for, as tomllib reads it
    (so a quoted key with `\\u007f` is found under the key tomllib gave), and where the
    text goes on."""
    kind = text[j + 1 : j + 2]
    width = {"u": 4, "U": 8}.get(kind)
    if width is not None:
        digits = text[j + 2 : j + 2 + width]
        try:
            return chr(int(digits, 16)), j + 2 + width
        except ValueError:  # tomllib refused it already; keep the text
            return text[j : j + 2], j + 2
    return _ESCAPES.get(kind, text[j : j + 2]), j + 2


def _escaped(text: str, idx: int) -> bool:
    backslashes = 0
    j = idx - 1
    while j >= 0 and text[j] == "\\":
        backslashes += 1
        j -= 1
    return backslashes % 2 == 1


def locate(text: str) -> Positions:
    """Positions of the keys and values of a TOML document (best effort, never raises)."""
    return _Scanner(text).document()
