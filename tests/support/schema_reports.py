"""Hypothesis strategies for documents that docs/report-schema.json allows: every saved
report a colleague or a CI artifact could hand to `ecoready report`, `plan` or `diff`.

A small generator from the schema itself (hypothesis-jsonschema does not run with the
hypothesis this project pins, nor read 2020-12 `$defs`): the keywords the schema uses
(`type`, `enum`, `const`, `properties`/`required`/`additionalProperties`/`propertyNames`,
`items`, `minimum`, `pattern`, `oneOf`/`anyOf`, `$ref` into `$defs`). Optional keys come and
go, strings are any Unicode (escapes, bidi, markup), integers of any size the schema allows,
lists short (a report's shape matters here, not its length). What it draws is checked
against the schema by the test, so a shortcut here cannot let an invalid report through.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from tests.support.schema import REPORT_SCHEMA

MAX_ITEMS = 3


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(REPORT_SCHEMA.read_text())
    return loaded


def report_documents() -> st.SearchStrategy[Any]:
    return _strategy(json.dumps(schema()))


@cache
def _strategy(node_json: str) -> st.SearchStrategy[Any]:
    return st.deferred(lambda: _build(json.loads(node_json)))


def _of(node: Any) -> st.SearchStrategy[Any]:
    return _strategy(json.dumps(node, sort_keys=True))


def _build(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        rest = {k: v for k, v in node.items() if k not in ("$ref", "description", "examples")}
        target = schema()["$defs"][name]
        return _of({**target, **rest}) if rest else _of(target)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("oneOf", "anyOf"):
        if key in node:
            base = {k: v for k, v in node.items() if k not in (key, "description", "examples")}
            return st.one_of([_of({**base, **branch}) for branch in node[key]])
    kinds = node.get("type")
    if isinstance(kinds, list):
        return st.one_of([_of({**node, "type": kind}) for kind in kinds])
    if kinds == "object" or "properties" in node:
        return _object(node)
    if kinds == "array":
        items = _of(node.get("items", {}))
        low = node.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=max(low, node.get("maxItems", MAX_ITEMS)))
    if kinds == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        return st.text(max_size=40)
    if kinds == "integer":
        return st.integers(min_value=node.get("minimum"), max_value=node.get("maximum"))
    if kinds == "number":
        return st.floats(
            min_value=node.get("minimum"), max_value=node.get("maximum"), allow_nan=False, allow_infinity=False
        )
    if kinds == "boolean":
        return st.booleans()
    if kinds == "null":
        return st.none()
    return st.none() | st.booleans() | st.integers() | st.text(max_size=10)


def _object(node: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = node.get("properties", {})
    required = [k for k in node.get("required", []) if k in properties]
    optional = [k for k in properties if k not in required]
    extra = node.get("additionalProperties", True)
    names = node.get("propertyNames", {})
    keys = _of(names) if names else st.text(max_size=12)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out = {key: draw(_of(properties[key])) for key in required}
        for key in optional:
            if draw(st.booleans()):
                out[key] = draw(_of(properties[key]))
        if isinstance(extra, dict):
            for key in draw(st.lists(keys, max_size=MAX_ITEMS, unique=True)):
                if key not in properties:
                    out[key] = draw(_of(extra))
        return out

    return build()
