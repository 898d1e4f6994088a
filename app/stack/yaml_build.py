"""A YAML document's values built straight from the parser's events (`yaml_bounded.py` is
the way in): no node graph in between, so a file costs about what its values cost, and
the bounds on what a small file can become are counted as the values are built:

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

`skip` leaves out values by their path from an object's top level (a document, or an item
of a top-level List's `items`): their events are read past, nothing built.

Speed (this is the hot loop of `init` on `kubectl get -o yaml`): PyYAML makes a Python
object of each event (and two marks) at about three times the cost of libyaml's parsing,
so the loop around it does the least per event. The common events (a plain scalar seen
before in the document, a collection opened or closed) are handled inline with the
collection being built in locals; a mapping is built as a flat list of keys and values,
made a dict when it closes; what is rare (anchors, aliases, tags, merges, the keys of
the levels `skip` looks at) goes through `_Builder`'s methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml import events as ev
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from ecoready.domain.reading import MAX_DIGITS

MAX_VALUES = 250_000  # a 1 MiB file written out in full holds about this many values
MAX_DEPTH = 512
_MEMO_LENGTH = 64  # scalars this short are built once per document and shared
_MAP, _SEQ, _MERGE = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:merge"
_INT = "tag:yaml.org,2002:int"
_MISS = object()
_SKIP = object()  # a key left out: its value is read past
_MERGE_KEY = object()  # a plain `<<` key: YAML's merge (quoted, it is the string "<<")
_SCALAR, _ALIAS = ev.ScalarEvent, ev.AliasEvent
_MAP_START, _MAP_END = ev.MappingStartEvent, ev.MappingEndEvent
_SEQ_START, _SEQ_END = ev.SequenceStartEvent, ev.SequenceEndEvent
_CONSTRUCTOR = SafeConstructor()
_RESOLVER = Resolver()
Path = tuple[str, ...]
Skip = frozenset[Path]  # paths from an object's top level whose values are left out
# a collection being built: (its items: a mapping's keys and values in turn, whether it
# is a mapping, its start event, the value count at its start, whether it is an object's
# top level (or a List's `items`), its path from there when `skip` looks at its keys)
_Frame = tuple[list[Any], bool, ev.CollectionStartEvent, int, bool, "Path | None"]


def error(message: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.composer.ComposerError(None, None, message, mark)


class _Builder:
    """One document's open collections, anchors, expansion count and memo, and the rare
    cases of `document`'s loop."""

    def __init__(self, skip: Skip, skipped_at: set[tuple[int, int]]) -> None:
        self.skip = skip
        self.prefixes = {path[:i] for path in skip for i in range(1, len(path))}
        self.skipped_at = skipped_at  # (line, column) of each key left out in block style
        self.anchors: dict[str, tuple[Any, int] | None] = {}  # None: open (being built)
        self.expanded = 0  # what aliases expanded to
        self.plain: dict[str, Any] = {}  # plain scalars -> their values
        self.quoted: dict[str, Any] = {}
        self.stack: list[_Frame] = []
        self.merging: set[int] = set()  # depths of the collections holding a `<<`
        self.skipped: set[str] = set()  # anchors inside values read past

    def scalar(self, event: ev.ScalarEvent) -> Any:
        tag, value = event.tag, event.value
        if tag is None or tag == "!":
            memo = self.plain if event.implicit[0] else self.quoted
            result = memo.get(value, _MISS)
            if result is _MISS:
                tag = _RESOLVER.resolve(ScalarNode, value, event.implicit)  # type: ignore[no-untyped-call]
                result = _construct(tag, value, event.start_mark)
                if len(value) <= _MEMO_LENGTH and result is not _MERGE_KEY:
                    memo[value] = result
        else:
            result = _construct(tag, value, event.start_mark)
        if result is _MERGE_KEY:
            self.merging.add(len(self.stack))
        if event.anchor is not None:
            self.anchors[event.anchor] = (result, 1)
        return result

    def alias(self, event: ev.AliasEvent, key: bool) -> tuple[Any, int]:
        """(the anchor's value, how many values it expands to); `key`: it stands as a key."""
        if event.anchor in self.skipped and event.anchor not in self.anchors:
            skipped = ", ".join(sorted(map(".".join, self.skip)))
            raise error(f"the alias *{event.anchor} is to a part not read ({skipped})", event.start_mark)
        if event.anchor not in self.anchors:
            raise error(f"the alias *{event.anchor} has no anchor before it", event.start_mark)
        found = self.anchors[event.anchor]
        if found is None:
            raise error("an alias inside its own anchor: not read", event.start_mark)
        if key and found[0].__class__ in (dict, list):
            raise error("a mapping or sequence as a key: not read", event.start_mark)
        self.expanded += found[1]
        if self.expanded > MAX_VALUES:
            raise error(f"aliases here expand to more than {MAX_VALUES} values: not read", event.start_mark)
        if found[0] is _MERGE_KEY:
            self.merging.add(len(self.stack))
        return found

    def open(self, event: ev.CollectionStartEvent, items: list[Any], count: int, is_map: bool) -> bool:
        """Start a collection (its items in `items`) inside the one being built; whether
        `skip` looks at its keys."""
        if event.tag is not None and event.tag not in ("!", _MAP, _SEQ):
            raise error(f"the tag {event.tag} is not read", event.start_mark)
        stack = self.stack
        if len(stack) >= MAX_DEPTH:
            raise error(f"nested more than {MAX_DEPTH} deep: not read", event.start_mark)
        if stack and stack[-1][1] and not len(stack[-1][0]) & 1:
            raise error("a mapping or sequence as a key: not read", event.start_mark)
        if event.anchor is not None:
            self.anchors[event.anchor] = None
        top, prefix = self._place(is_map)
        stack.append((items, is_map, event, count, top, prefix))
        return prefix is not None

    def _place(self, is_map: bool) -> tuple[bool, Path | None]:
        """(whether a collection opened now is an object's top level: a mapping that is a
        document or an item of a List's `items`, or such a List's `items`; its path from
        the object's top level when a path of `skip` goes through it)."""
        if not self.stack:
            return True, () if is_map else None
        items, parent_map, _event, _count, parent_top, parent_prefix = self.stack[-1]
        key = items[-1] if parent_map else None
        if not is_map:
            return parent_top and parent_map and key == "items", None
        if parent_top and not parent_map:
            return True, ()
        path = (*parent_prefix, key) if parent_prefix is not None else None
        return False, path if path in self.prefixes else None

    def close(self, frame: _Frame, count: int) -> Any:
        """The value of a collection just closed that holds an anchor or a merge."""
        items, is_map, event = frame[0], frame[1], frame[2]
        value: Any = items
        depth = len(self.stack) + 1
        if depth in self.merging:
            self.merging.discard(depth)
            value = _merged(items, event.start_mark) if is_map else ["<<" if v is _MERGE_KEY else v for v in items]
        elif is_map:
            pairs = iter(items)
            value = dict(zip(pairs, pairs, strict=True))
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, count - frame[3] + 1)
        return value

    def key(self, value: Any, event: ev.Event) -> Any:
        """`value` as a key of a mapping whose keys `skip` looks at: `_SKIP` when its
        value is left out."""
        _items, _is_map, start, _count, _top, prefix = self.stack[-1]
        if prefix is not None and (*prefix, value) in self.skip:
            mark = event.start_mark
            if not start.flow_style and mark is not None:
                self.skipped_at.add((mark.line, mark.column))
            return _SKIP
        return value


def _merged(items: list[Any], mark: Any) -> dict[Any, Any]:
    """A mapping with YAML's merge keys: the merged mappings (the first wins), then the
    mapping's own keys; a `<<` as a value is the string."""
    own: dict[Any, Any] = {}
    merges: list[Any] = []
    for i in range(0, len(items), 2):
        key, value = items[i], items[i + 1]
        if key is _MERGE_KEY:
            merges.extend(value if isinstance(value, list) else [value])
        else:
            own[key] = "<<" if value is _MERGE_KEY else value
    out: dict[Any, Any] = {}
    for part in reversed(merges):
        if not isinstance(part, dict):
            raise error("`<<` merges a mapping or a list of mappings only", mark)
        out.update(part)
    out.update(own)
    return out


def _construct(tag: str, value: str, mark: Any) -> Any:
    if tag == _INT:
        digits = sum(ch.isdigit() for ch in value)
        if digits > MAX_DIGITS:
            raise error(f"a number of {digits} digits; at most {MAX_DIGITS} are read", mark)
    if tag == _MERGE:
        return _MERGE_KEY
    build = SafeConstructor.yaml_constructors.get(tag)
    if build is None:
        raise error(f"the tag {tag} is not read", mark)
    try:
        return build(_CONSTRUCTOR, ScalarNode(tag, value, mark))
    except (ValueError, TypeError, OverflowError):  # e.g. a timestamp of month 13
        raise error(f"not a valid {tag.rsplit(':', 1)[-1]}", mark) from None


def _skip(get_event: Callable[[], Any], builder: _Builder) -> None:
    """Read past one value without building it (an alias to an anchor in it is refused)."""
    depth = 0
    while True:
        event = get_event()
        kind = event.__class__
        if kind is _MAP_END or kind is _SEQ_END:
            depth -= 1
        elif kind is not _ALIAS:
            if event.anchor is not None:
                builder.skipped.add(event.anchor)
            if kind is not _SCALAR:
                depth += 1
                continue
        if depth <= 0:
            return


def document(get_event: Callable[[], Any], skip: Skip, skipped_at: set[tuple[int, int]]) -> Any:
    """The values of the document whose start event was just read; `skipped_at` gets the
    (line, column) of each key left out in block style. `count` counts the values read,
    for the size of what an anchor stands for."""
    builder = _Builder(skip, skipped_at)
    plain, stack, merging, miss = builder.plain, builder.stack, builder.merging, _MISS
    scalar_event, map_start, map_end, seq_start, seq_end = _SCALAR, _MAP_START, _MAP_END, _SEQ_START, _SEQ_END
    root: list[Any] = []
    items = root  # where the next value goes: a mapping's keys and values in turn
    append = items.append
    is_map = watch = False  # watch: `skip` looks at this mapping's keys
    count = 0
    while True:
        event = get_event()
        kind = event.__class__
        if kind is scalar_event:
            count += 1
            if event.implicit[0] and event.tag is None and event.anchor is None:
                value = plain.get(event.value, miss)
                if value is miss:
                    value = builder.scalar(event)
            else:
                value = builder.scalar(event)
        elif kind is map_start or kind is seq_start:
            count += 1
            items = []
            is_map = kind is map_start
            watch = builder.open(event, items, count, is_map)
            append = items.append
            continue
        elif kind is map_end or kind is seq_end:
            frame = stack.pop()
            if merging or frame[2].anchor is not None:
                value = builder.close(frame, count)
            elif frame[1]:
                pairs = iter(frame[0])
                value = dict(zip(pairs, pairs, strict=True))
            else:
                value = frame[0]
            if stack:
                parent = stack[-1]
                items, is_map, watch = parent[0], parent[1], parent[5] is not None
            else:
                items, is_map, watch = root, False, False
            append = items.append
            append(value)
            continue
        elif kind is _ALIAS:
            value, size = builder.alias(event, is_map and not len(items) & 1)
            count += size
        else:  # DocumentEndEvent
            return ("<<" if root[0] is _MERGE_KEY else root[0]) if root else None
        if watch and not len(items) & 1 and builder.key(value, event) is _SKIP:
            _skip(get_event, builder)
            continue
        append(value)
