"""YAML as `init` reads it (compose files and Kubernetes manifests): PyYAML's safe loader
with bounds on what a small file can become.

- alias expansion: aliases share one node, so a file of a few hundred bytes can stand for
  billions of values (a "billion laughs"), and an alias inside its own anchor for a tree
  without end. The composed graph is measured before anything is built from it, in time
  linear in the graph: more than `MAX_VALUES` values once expanded, or an alias inside
  itself, is refused at the node where it happens;
- numbers: an integer of more than `MAX_DIGITS` digits is refused at its place (Python
  would raise a bare `ValueError`);
- depth: PyYAML composes recursively; a `RecursionError` is said as nesting too deep.

Every refusal is a `ConfigError` at `file:line:col`.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import MAX_DIGITS

MAX_VALUES = 250_000  # a 1 MiB file written out in full holds about this many values


class _BoundedLoader(yaml.SafeLoader):
    def compose_document(self) -> Node | None:
        node: Node | None = super().compose_document()
        if node is not None:
            _measure(node)
        return node

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"a number of {digits} digits; at most {MAX_DIGITS} are read", node.start_mark
            )
        value: int = self.construct_yaml_int(node)
        return value


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_bounded_int)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _measure(root: Node) -> None:
    """How many values the tree under `root` holds once every alias is expanded, counted
    once per node (iteratively: no recursion limit), refused past `MAX_VALUES`."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(size[id(child)] for child in _children(node))
            if total > MAX_VALUES:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"aliases here expand to more than {MAX_VALUES} values: not read",
                    node.start_mark,
                )
            size[key] = total
            continue
        if key in size:
            continue
        if key in on_path:
            raise yaml.composer.ComposerError(None, None, "an alias inside its own anchor: not read", node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)


def _problem(file: str, exc: Exception) -> ConfigError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        return ConfigError([Problem(file, line, col, f"YAML: {exc.problem or exc}")])
    if isinstance(exc, RecursionError):
        return ConfigError([Problem(file, 1, 1, "YAML: nested too deeply to read")])
    return ConfigError([Problem(file, 1, 1, f"YAML: {type(exc).__name__}")])


def load_one(text: str, file: str) -> object:
    """The single document in `text`; ConfigError at file:line:col."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except (yaml.YAMLError, RecursionError) as exc:
        raise _problem(file, exc) from None
    finally:
        loader.dispose()


def load_all(text: str, file: str) -> Iterator[object]:
    """Each document in `text`, in turn; ConfigError at file:line:col."""
    loader = _BoundedLoader(text)
    try:
        while loader.check_data():  # type: ignore[no-untyped-call]
            yield loader.get_data()
    except (yaml.YAMLError, RecursionError) as exc:
        raise _problem(file, exc) from None
    finally:
        loader.dispose()


def key_lines(text: str, file: str, parent: str, key: str) -> dict[str, int]:
    """For each entry of the top-level mapping `parent` (a compose file's `services:`): the
    line (1-based) where its `key` is written, for entries that have one. Read from the
    composed nodes (the loaded data has no positions); ConfigError at file:line:col."""
    loader = _BoundedLoader(text)
    try:
        root = loader.get_single_node()
    except (yaml.YAMLError, RecursionError) as exc:
        raise _problem(file, exc) from None
    finally:
        loader.dispose()
    entries = _value(root, parent)
    out: dict[str, int] = {}
    for name, node in entries.value if isinstance(entries, MappingNode) else ():
        found = _key_node(node, key)
        if isinstance(name, yaml.ScalarNode) and found is not None:
            out[str(name.value)] = found.start_mark.line + 1
    return out


def _key_node(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((k for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def _value(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
