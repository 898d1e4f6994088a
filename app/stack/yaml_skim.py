"""The values `yaml_bounded.load_all` leaves out, taken out of the text before the parser
sees it (pure): a `kubectl get -o yaml` List spends a quarter of its bytes and events on
each object's `status`, and every event costs Python objects even when its value is read
past. A skipped key's value is blanked (each of its lines read as an empty line, so every
position after it stays where it was) where the text shows it as a block value, and only
then:

- the key is written plain, alone on its line (`<indent>status:`), its value on the lines
  after it, each indented deeper than the key, or an entry (`- `) as indented as the key
  (a list as kubectl writes it), or blank;
- the value holds no anchor (`&`: an alias to it later must still be refused as a part not
  read), and the values are well-formed YAML on their own (`valid`, each value a document
  of its own: every quote and bracket closed within it, so nothing it opens goes on past
  its last line);
- the line after it is less or as much indented and starts a key or an item (an entry
  `- ` as indented as the key would go on the value; a comment, a tab or a blank run are
  not taken as its end), or is a document marker, or there is none.

What the text shows is not yet what the parser reads (the line may sit inside a quoted
string or a block scalar, or in flow style): the reader checks that each key blanked was
read as a key it leaves out, in block style (`Blanked.keys`), and reads the text as it is
otherwise. So a document reads the same, blanked or not, whatever it holds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

_NEXT_LINE_STARTS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_\"'")
_MARKERS = (b"---", b"...")  # a document's start or end: ends every value
_SEPARATOR = b"\n---\n"


@dataclass
class Pieces:
    """A text made of pieces of `data` ((start, end)) and literal bytes, served a piece at a
    time to the parser as a stream (libyaml keeps what is more than it asked for): never
    joined into one copy."""

    data: bytes
    pieces: list[tuple[int, int] | bytes] = field(default_factory=list)
    _next: int = 0

    def read(self, _size: int = -1) -> bytes:
        while self._next < len(self.pieces):
            piece = self.pieces[self._next]
            self._next += 1
            out = piece if isinstance(piece, bytes) else self.data[piece[0] : piece[1]]
            if out:
                return out
        return b""


@dataclass
class Blanked(Pieces):
    """The text with the values blanked, and where each key blanked is: (line, column),
    0-based, as the parser's marks say them."""

    keys: set[tuple[int, int]] = field(default_factory=set)


@functools.cache
def _key_line(key: str) -> re.Pattern[bytes]:
    return re.compile(re.escape(key.encode()) + rb":[ \t]*\r?$", re.MULTILINE)


@functools.cache
def _value_end(column: int) -> re.Pattern[bytes]:
    """The line break before the first line after a block value under a key at `column`:
    a line neither deeper, nor an entry (`- `) as indented as the key (a list as kubectl
    writes it), nor blank. Searched from line break to line break: the value's own lines
    are not matched character by character."""
    return re.compile(rb"\n(?! {%d}-(?:[ \r\n]|\Z)) {0,%d}[^ \r\n]" % (column, column))


def _ends_well(data: bytes, end: int, column: int) -> bool:
    """Whether the line after a value (from `end`, its line break) ends it: see the module."""
    if end >= len(data):
        return True
    line = data[end + 1 : end + 1 + column + 4]
    if line.startswith(_MARKERS) and line[3:4] in (b"", b" ", b"\r", b"\n"):
        return True
    spaces = len(line) - len(line.lstrip(b" "))
    first = line[spaces : spaces + 1]
    return bool(first) and (first[0] in _NEXT_LINE_STARTS or (first == b"-" and spaces < column))


def _candidates(data: bytes, keys: Iterable[str]) -> list[tuple[int, int, int, int]]:
    """(start of the key's line, end of that line, end of its value, the key's column) of
    each key whose value can be blanked, in order, none inside another's value."""
    found = []
    for key in keys:
        for match in _key_line(key).finditer(data):
            start = data.rfind(b"\n", 0, match.start()) + 1
            column = match.start() - start
            if data.count(b" ", start, match.start()) != column:  # not alone on its line
                continue
            after = _value_end(column).search(data, match.end())
            end = after.start() if after is not None else len(data)
            if end > match.end() and data.find(b"&", match.end(), end) < 0 and _ends_well(data, end, column):
                found.append((start, match.end(), end, column))
    found.sort()
    out: list[tuple[int, int, int, int]] = []
    for candidate in found:
        if not out or candidate[0] >= out[-1][2]:
            out.append(candidate)
    return out


def blank_values(data: bytes, keys: Iterable[str], valid: Callable[[Pieces], bool]) -> Blanked | None:
    """`data` with the block values of `keys` blanked where the module's rules allow it;
    None when there is none. `valid(text)`: whether `text` is well-formed YAML."""
    found = _candidates(data, keys)
    if found and not valid(Pieces(data, _joined(found))):  # one is not: each is asked
        found = [c for c in found if valid(Pieces(data, [(c[0], c[2])]))]
    if not found:
        return None
    blanked = Blanked(data)
    kept = 0  # where the next piece of `data` starts
    line = 0  # the line number at `kept`
    for start, key_end, end, column in found:
        line += data.count(b"\n", kept, start)
        breaks = data.count(b"\n", key_end, end)
        blanked.keys.add((line, column))
        blanked.pieces += [(kept, key_end), b"\n" * breaks]
        line += breaks
        kept = end
    blanked.pieces.append((kept, len(data)))
    return blanked


def _joined(found: list[tuple[int, int, int, int]]) -> list[tuple[int, int] | bytes]:
    """Each key with its value, a document each."""
    pieces: list[tuple[int, int] | bytes] = []
    for start, _key_end, end, _column in found:
        pieces += [(start, end), _SEPARATOR]
    return pieces
