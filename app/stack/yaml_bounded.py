"""YAML and JSON as `init` reads them (compose files, Kubernetes manifests, kustomizations):
the only module that imports PyYAML. Values are built straight from the parser's events
(libyaml's C parser where PyYAML has it, its pure-Python parser otherwise), with no node
graph in between, so a file costs about what its values cost, and with bounds on what a
small file can become:

- alias expansion: aliases share one value, so a file of a few hundred bytes can stand for
  billions of values (a "billion laughs"). Each anchor's size once expanded is counted as
  it is read, and what the aliases of a document expand to together is bounded by
  `MAX_VALUES`: refused at the alias that passes it. A document without aliases expands to
  nothing, whatever its size (its bytes are bounded by the caller's reader). An alias
  inside its own anchor (a tree without end) is refused where it is;
- numbers: an integer of more than `MAX_DIGITS` digits is refused at its place (Python
  would raise a bare `ValueError`);
- depth: nesting deeper than `MAX_DEPTH` is refused where it passes it (building is
  iterative: no recursion).

Text whose first non-blank character is `{` or `[` is read as JSON first (Python's json
module, many times faster than YAML); what json does not take is read as YAML (a compose
file in YAML flow style). `skip` leaves out the value of a key at an object's top level
(a Kubernetes object's `status`, `managedFields`: never read, often most of `kubectl get`'s
output). Every refusal is a `ConfigError` at `file:line:col`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml import events as ev
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import MAX_DIGITS, number_position, position

try:  # libyaml, as PyPI wheels and Debian's python3-yaml ship it
    from yaml._yaml import CParser as _CParser

    C_LOADER = True
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    C_LOADER = False

MAX_VALUES = 250_000  # a 1 MiB file written out in full holds about this many values
MAX_DEPTH = 512
COMPACT_FROM = 8 << 20  # JSON from this size is read without its indentation (`compact`)
_INDENT = re.compile(rb"\r?\n[ \t]*")
_MEMO_LENGTH = 64  # scalars this short are built once per document and shared
_MAP, _SEQ, _MERGE = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:merge"
_INT = "tag:yaml.org,2002:int"
_MISS = object()
_MERGE_KEY = object()  # a plain `<<` key: YAML's merge (quoted, it is the string "<<")
_CONSTRUCTOR = SafeConstructor()
_RESOLVER = Resolver()


class _PureParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    def __init__(self, stream: str | bytes) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


def _parser(data: str | bytes) -> Any:
    return _CParser(data) if C_LOADER else _PureParser(data)


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = ("anchor", "has_key", "key", "mark", "merges", "start", "top", "value")

    def __init__(self, value: dict[Any, Any] | list[Any], anchor: str | None, start: int, mark: Any, top: bool) -> None:
        self.value = value
        self.key: Any = None
        self.has_key = False
        self.anchor = anchor
        self.start = start
        self.merges: list[Any] | None = None
        self.mark = mark
        self.top = top  # an object's top level: where `skip` applies


class _Builder:
    """One document's values from its events: anchors, the expansion count, the memo."""

    def __init__(self, skip: frozenset[str]) -> None:
        self.skip = skip
        self.anchors: dict[str, tuple[Any, int] | None] = {}  # None: open (being built)
        self.values = 0  # values read, aliases counted as what they expand to
        self.expanded = 0  # what aliases expanded to
        self.plain: dict[str, Any] = {}  # plain scalars -> their values
        self.quoted: dict[str, Any] = {}
        self.stack: list[_Frame] = []
        self.skipped: set[str] = set()  # anchors inside values read past

    def scalar(self, event: ev.ScalarEvent) -> Any:
        self.values += 1
        tag, value = event.tag, event.value
        if tag is None or tag == "!":
            memo = self.plain if event.implicit[0] else self.quoted
            if value in memo:
                return memo[value]
            tag = _RESOLVER.resolve(ScalarNode, value, event.implicit)  # type: ignore[no-untyped-call]
            result = _construct(tag, value, event.start_mark)
            if len(value) <= _MEMO_LENGTH and event.anchor is None:
                memo[value] = result
            return result
        return _construct(tag, value, event.start_mark)

    def alias(self, event: ev.AliasEvent) -> Any:
        if event.anchor in self.skipped and event.anchor not in self.anchors:
            raise _error(
                f"the alias *{event.anchor} is to a part not read ({', '.join(sorted(self.skip))})", event.start_mark
            )
        if event.anchor not in self.anchors:
            raise _error(f"the alias *{event.anchor} has no anchor before it", event.start_mark)
        found = self.anchors[event.anchor]
        if found is None:
            raise _error("an alias inside its own anchor: not read", event.start_mark)
        value, size = found
        self.values += size
        self.expanded += size
        if self.expanded > MAX_VALUES:
            raise _error(f"aliases here expand to more than {MAX_VALUES} values: not read", event.start_mark)
        return value

    def open(self, event: ev.CollectionStartEvent, value: dict[Any, Any] | list[Any]) -> None:
        if event.tag not in (None, "!", _MAP, _SEQ):
            raise _error(f"the tag {event.tag} is not read", event.start_mark)
        if len(self.stack) >= MAX_DEPTH:
            raise _error(f"nested more than {MAX_DEPTH} deep: not read", event.start_mark)
        self.values += 1
        if event.anchor is not None:
            self.anchors[event.anchor] = None
        self.stack.append(_Frame(value, event.anchor, self.values, event.start_mark, self._top(value)))

    def _top(self, value: dict[Any, Any] | list[Any]) -> bool:
        """Whether `value` is an object's top level (a mapping that is a document or an item
        of a List's `items`), or such a List's `items`."""
        if not self.stack:
            return True
        parent = self.stack[-1]
        if isinstance(value, dict):
            return parent.top and isinstance(parent.value, list)
        return parent.top and isinstance(parent.value, dict) and parent.key == "items"

    def close(self) -> Any:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges is not None:
            value = _merged(frame.merges, value, frame.mark)
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (value, self.values - frame.start + 1)
        return value

    def add(self, value: Any, mark: Any) -> bool:
        """Put a finished value into the collection being built; True when what comes next
        is a value to leave out (`skip`)."""
        frame = self.stack[-1]
        if isinstance(frame.value, list):
            frame.value.append(value)
            return False
        if not frame.has_key:
            if isinstance(value, (dict, list)):
                raise _error("a mapping or sequence as a key: not read", mark)
            frame.key, frame.has_key = value, True
            if frame.top and isinstance(frame.value, dict) and value in self.skip:
                frame.has_key = False  # the value is read past, and the key left out
                return True
            return False
        frame.has_key = False
        if frame.key is _MERGE_KEY:
            frame.merges = [*(frame.merges or []), *(value if isinstance(value, list) else [value])]
        else:
            frame.value[frame.key] = "<<" if value is _MERGE_KEY else value
        return False


def _merged(merges: list[Any], own: dict[Any, Any] | list[Any], mark: Any) -> dict[Any, Any]:
    """YAML's merge key: the merged mappings (the first wins), then the mapping's own keys."""
    out: dict[Any, Any] = {}
    for part in reversed(merges):
        if not isinstance(part, dict):
            raise _error("`<<` merges a mapping or a list of mappings only", mark)
        out.update(part)
    out.update(own)
    return out


def _construct(tag: str, value: str, mark: Any) -> Any:
    if tag == _INT:
        digits = sum(ch.isdigit() for ch in value)
        if digits > MAX_DIGITS:
            raise _error(f"a number of {digits} digits; at most {MAX_DIGITS} are read", mark)
    if tag == _MERGE:
        return _MERGE_KEY
    build = SafeConstructor.yaml_constructors.get(tag)
    if build is None:
        raise _error(f"the tag {tag} is not read", mark)
    try:
        return build(_CONSTRUCTOR, ScalarNode(tag, value, mark))
    except (ValueError, TypeError, OverflowError):  # e.g. a timestamp of month 13
        raise _error(f"not a valid {tag.rsplit(':', 1)[-1]}", mark) from None


def _error(message: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.composer.ComposerError(None, None, message, mark)


def _skip(parser: Any, builder: _Builder) -> None:
    """Read past one value without building it (an alias to an anchor in it is refused)."""
    depth = 0
    while True:
        event = parser.get_event()
        if isinstance(event, (ev.ScalarEvent, ev.CollectionStartEvent)) and event.anchor is not None:
            builder.skipped.add(event.anchor)
        if isinstance(event, ev.CollectionStartEvent):
            depth += 1
        elif isinstance(event, ev.CollectionEndEvent):
            depth -= 1
        if depth <= 0 and not isinstance(event, ev.CollectionStartEvent):
            return


def _document(parser: Any, skip: frozenset[str]) -> Any:
    """The values of the document whose start event was just read."""
    builder = _Builder(skip)
    result: Any = None
    get_event, plain, scalar_event = parser.get_event, builder.plain, ev.ScalarEvent
    while True:
        event = get_event()
        kind = type(event)
        if kind is scalar_event:  # the common case first: a plain scalar read before
            value = plain.get(event.value, _MISS) if event.implicit[0] and event.tag is None else _MISS
            if value is _MISS:
                value = builder.scalar(event)
            else:
                builder.values += 1
        elif kind is ev.MappingStartEvent:
            builder.open(event, {})
            continue
        elif kind is ev.SequenceStartEvent:
            builder.open(event, [])
            continue
        elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
            value = builder.close()
        elif kind is ev.AliasEvent:
            value = builder.alias(event)
        else:  # DocumentEndEvent
            return result
        if kind is ev.ScalarEvent and event.anchor is not None:
            builder.anchors[event.anchor] = (value, 1)
        if not builder.stack:
            result = value
        elif builder.add(value, event.start_mark):
            _skip(parser, builder)


def _yaml_documents(data: str | bytes, skip: frozenset[str]) -> Iterator[Any]:
    parser = _parser(data)
    try:
        parser.get_event()  # StreamStartEvent
        while not parser.check_event(ev.StreamEndEvent):
            parser.get_event()  # DocumentStartEvent
            yield _document(parser, skip)
    finally:
        parser.dispose()


def _problem(file: str, exc: Exception) -> ConfigError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        return ConfigError([Problem(file, line, col, f"YAML: {exc.problem or exc}")])
    if isinstance(exc, RecursionError):
        return ConfigError([Problem(file, 1, 1, "YAML: nested too deeply to read")])
    return ConfigError([Problem(file, 1, 1, f"YAML: {type(exc).__name__}")])


def is_json(data: str | bytes) -> bool:
    """Whether the first non-blank character is `{` or `[` (JSON, or YAML's flow style)."""
    head = data[:4096].lstrip()
    if isinstance(head, bytes):
        head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
        return head[:1] in (b"{", b"[")
    return head.removeprefix("\ufeff").lstrip()[:1] in ("{", "[")


def compact(data: bytes) -> str | bytes:
    """A large JSON file as text without its indentation (kubectl indents by four spaces:
    more than half of `-o json` is blanks), the bytes let go: what the json module then
    holds is half as large. A raw line break is never inside a JSON string, so nothing is
    changed but blanks; positions in what json refuses are then on one line. Other data is
    returned as it is."""
    if len(data) < COMPACT_FROM or not is_json(data):
        return data
    out = bytearray()
    start = 0
    while start < len(data):  # by the MiB: re.sub over all of it would hold a piece per line
        end = start + (1 << 20)
        while end < len(data) and data[end] in b" \t\r\n":  # a run of blanks stays whole
            end += 1
        out += _INDENT.sub(b"", data[start:end])
        start = end
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:  # said at its place by the parser
        return data


def _json(data: str | bytes, file: str, skip: frozenset[str]) -> list[Any] | None:
    """The JSON document in `data`; None when json does not take it (YAML may). `skip`'s
    keys are left out of each object with an `apiVersion` and a `kind` as it is built."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if "kind" in obj and "apiVersion" in obj and not skip.isdisjoint(obj):
            for key in skip & obj.keys():
                del obj[key]
        return obj

    try:
        return [json.loads(data, object_pairs_hook=hook if skip else None)]
    except RecursionError:
        raise ConfigError([Problem(file, 1, 1, "JSON: nested too deeply to read")]) from None
    except json.JSONDecodeError:
        return None
    except ValueError:  # Python's bound on the digits of an integer
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        where = number_position(text)
        line, col, digits = where if where is not None else (1, 1, 0)
        raise ConfigError(
            [Problem(file, line, col, f"JSON: a number of {digits} digits; at most {MAX_DIGITS} are read")]
        ) from None


def load_all(data: str | bytes, file: str, skip: frozenset[str] = frozenset()) -> Iterator[object]:
    """Each document in `data` (text, or UTF-8 bytes: not copied), in turn; ConfigError at
    file:line:col. `skip`: keys whose value is left out (None) at an object's top level
    (a document's, or an item's of its `items`)."""
    if is_json(data):
        found = _json(data, file, skip)
        if found is not None:
            yield from found
            return
    try:
        yield from _yaml_documents(data, skip)
    except (yaml.YAMLError, RecursionError) as exc:
        raise _problem(file, exc) from None
    except UnicodeDecodeError as exc:  # the pure parser on bytes that are not UTF-8
        line, col = position(data, exc.start) if isinstance(data, bytes) else (1, 1)
        raise ConfigError([Problem(file, line, col, "not UTF-8 text")]) from None


def load_one(data: str | bytes, file: str) -> object:
    """The single document in `data`; ConfigError at file:line:col."""
    docs = load_all(data, file)
    first = next(docs, None)
    for _extra in docs:
        raise ConfigError([Problem(file, 1, 1, "YAML: more than one document: a single one is read")])
    return first


def key_lines(text: str, file: str, parent: str, key: str) -> dict[str, int]:
    """For each entry of the top-level mapping `parent` (a compose file's `services:`): the
    line (1-based) where its `key` is written, for entries that have one. Read from the
    parser's events (the loaded data has no positions), in one pass without building
    anything; ConfigError at file:line:col."""
    out: dict[str, int] = {}
    frames: list[list[Any]] = []  # per open collection: [is a mapping, a key comes next, last key]
    parser = _parser(text)
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, ev.CollectionEndEvent):
                frames.pop()
                continue
            if not isinstance(event, ev.NodeEvent):
                continue
            is_key = bool(frames) and frames[-1][0] and frames[-1][1]
            if frames and frames[-1][0]:
                frames[-1][1] = not frames[-1][1]
            if is_key:
                frames[-1][2] = event.value if isinstance(event, ev.ScalarEvent) else None
                if len(frames) == 3 and frames[2][2] == key and frames[0][2] == parent and frames[1][2] is not None:
                    out.setdefault(str(frames[1][2]), event.start_mark.line + 1 if event.start_mark else 1)
            if isinstance(event, ev.CollectionStartEvent):
                frames.append([isinstance(event, ev.MappingStartEvent), True, None])
    except yaml.YAMLError as exc:
        raise _problem(file, exc) from None
    finally:
        parser.dispose()
    return out
