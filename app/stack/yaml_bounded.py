"""YAML and JSON as `init` reads them (compose files, Kubernetes manifests, kustomizations):
with `yaml_build.py`, the only modules that import PyYAML. YAML's values are built from
the parser's events (libyaml's C parser where PyYAML has it, its pure-Python parser
otherwise) by `yaml_build.py`, with its bounds on what a small file can become (alias
expansion, digits, depth).

Text whose first non-blank character is `{` or `[` is read as JSON first (Python's json
module, many times faster than YAML); what json does not take is read as YAML (a compose
file in YAML flow style). `skip` leaves out values by their path from an object's top level
(a Kubernetes object's `status` and `metadata.managedFields`: never read, often most of
`kubectl get`'s output): json drops them as it builds each object; in YAML their events are
read past, and where the text shows them as block values they are blanked before the
parser sees them (`yaml_skim.py`: a quarter of kubectl's events). Every refusal is a
`ConfigError` at `file:line:col`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml import events as ev

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import MAX_DIGITS, number_position, position
from ecoready.stack.yaml_build import Skip, document
from ecoready.stack.yaml_skim import Blanked, Pieces, blank_values

try:  # libyaml, as PyPI wheels and Debian's python3-yaml ship it
    from yaml._yaml import CParser as _CParser

    C_LOADER = True
except ImportError:  # pragma: no cover - a PyYAML built without libyaml
    C_LOADER = False

COMPACT_FROM = 8 << 20  # JSON from this size is read without its indentation (`compact`)
_INDENT = re.compile(rb"\r?\n[ \t]*")


class _PureParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    def __init__(self, stream: str | bytes | Pieces) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


def _parser(data: str | bytes | Blanked) -> Any:
    return _CParser(data) if C_LOADER else _PureParser(data)


def _yaml_documents(data: str | bytes, skip: Skip) -> Iterator[Any]:
    """Each document; where `skip`'s values can be blanked in the text (`yaml_skim.py`), from
    the blanked text when the parser read each key blanked as one left out (else, or when
    that text is refused, from the text as it is: what it says is then said)."""
    keys = {path[-1] for path in skip}
    blanked = blank_values(data, keys, _valid) if skip and C_LOADER and isinstance(data, bytes) else None
    if blanked is not None:
        skipped_at: set[tuple[int, int]] = set()
        try:
            documents = list(_documents(blanked, skip, skipped_at))
        except (yaml.YAMLError, RecursionError):
            documents = None
        if documents is not None and blanked.keys <= skipped_at:
            yield from documents
            return
    yield from _documents(data, skip, set())


def _documents(source: str | bytes | Blanked, skip: Skip, skipped_at: set[tuple[int, int]]) -> Iterator[Any]:
    parser = _parser(source)
    try:
        parser.get_event()  # StreamStartEvent
        while not parser.check_event(ev.StreamEndEvent):
            parser.get_event()  # DocumentStartEvent
            yield document(parser.get_event, skip, skipped_at)
    finally:
        parser.dispose()


def _valid(text: Pieces) -> bool:
    """Whether `text` is well-formed YAML (libyaml's parser alone: no value built)."""
    try:
        _CParser(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


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


def _json(data: str | bytes, file: str, skip: Skip) -> list[Any] | None:
    """The JSON document in `data`; None when json does not take it (YAML may). `skip`'s
    keys are left out of each object with an `apiVersion` and a `kind` as it is built."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if "kind" in obj and "apiVersion" in obj:
            for path in skip:
                parent: Any = obj
                for key in path[:-1]:
                    parent = parent.get(key) if isinstance(parent, dict) else None
                if isinstance(parent, dict):
                    parent.pop(path[-1], None)
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


def load_all(data: str | bytes, file: str, skip: Skip = frozenset()) -> Iterator[object]:
    """Each document in `data` (text, or UTF-8 bytes: not copied), in turn; ConfigError at
    file:line:col. `skip`: paths from an object's top level (a document's, or an item's of
    its `items`) whose value is left out: `("status",)`, `("metadata", "managedFields")`."""
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
