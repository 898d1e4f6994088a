"""Frozen dataclasses to plain data (JSON's types) and back, derived from their fields.

`to_plain` writes every field: enums as their values, tuples as lists, nested dataclasses
as objects. `from_plain` reads a class back, checking each value against its field's type
and naming the path of the first problem (`cells[3].image.size: expected a whole number,
found text`). A field typed `X | None` may be absent; every other one must be there
unless a `Layout` says older documents lack it.

A `Layout` per class says what the fields alone cannot: keys written first (the order a
person reads), fields not written, keys older documents may lack, and hooks for a document
shaped unlike the class (`finish` after writing, `prepare` before reading).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ecoready.domain.errors import DataError

T = TypeVar("T")
Plain = dict[str, Any]


@dataclass(frozen=True)
class Layout:
    first: tuple[str, ...] = ()  # these keys first, in this order; the other fields follow
    skip: frozenset[str] = frozenset()  # fields not written
    optional: frozenset[str] = frozenset()  # keys older documents lack: the field's default then
    finish: Callable[[Any, Plain], Plain] | None = None  # (value, written) -> the document's object
    prepare: Callable[[Plain, str], Plain] | None = None  # (document's object, path) -> the fields


Layouts = Mapping[type, Layout]
NONE: Layouts = {}


def to_plain(value: Any, layouts: Layouts = NONE) -> Any:
    """`value` as JSON's types, dataclasses shaped by `layouts`."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        layout = layouts.get(type(value), Layout())
        names = [f.name for f in dataclasses.fields(value) if f.name not in layout.skip]
        ordered = [n for n in layout.first if n in names] + [n for n in names if n not in layout.first]
        out = {name: to_plain(getattr(value, name), layouts) for name in ordered}
        return layout.finish(value, out) if layout.finish else out
    if isinstance(value, (list, tuple)):
        return [to_plain(v, layouts) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, layouts) for k, v in value.items()}
    return value


def from_plain(cls: type[T], data: object, layouts: Layouts = NONE, where: str = "") -> T:
    """An instance of the dataclass `cls` from plain data; DataError names what is wrong."""
    value: T = _read(cls, data, layouts, where)
    return value


def _read(kind: Any, data: object, layouts: Layouts, where: str) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        if data is None and len(options) < len(typing.get_args(kind)):
            return None
        return _read(options[0], data, layouts, where)
    if kind is Any:
        return data
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_read(item, v, layouts, f"{where}[{i}]") for i, v in enumerate(_expect(data, list, where)))
    if origin in (Mapping, dict, typing.Mapping):
        item = typing.get_args(kind)[1]
        return {str(k): _read(item, v, layouts, _key(where, str(k))) for k, v in _expect(data, dict, where).items()}
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        text = _expect(data, str, where)
        try:
            return kind(text)
        except ValueError:
            allowed = ", ".join(str(m.value) for m in kind)
            raise DataError(where, f"unknown value {text!r} (one of: {allowed})") from None
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _read_dataclass(kind, data, layouts, where)
    if kind is float:
        return float(_expect(data, (int, float), where))
    if kind in (str, int, bool):
        return _expect(data, kind, where)
    raise TypeError(f"no plain form for {kind!r}")  # pragma: no cover - a model field of a new kind


def _read_dataclass(cls: type, data: object, layouts: Layouts, where: str) -> Any:
    layout = layouts.get(cls, Layout())
    fields_of = _expect(data, dict, where)
    if layout.prepare is not None:
        fields_of = layout.prepare(fields_of, where)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in fields_of:
            values[f.name] = _read(hints[f.name], fields_of[f.name], layouts, _key(where, f.name))
        elif f.name in layout.optional or f.name in layout.skip:
            continue  # the field's default
        elif _optional(hints[f.name]):
            values[f.name] = None
        else:
            raise DataError(_key(where, f.name), "missing")
    return cls(**values)


def _optional(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in typing.get_args(kind)


def _expect(value: object, kinds: type | tuple[type, ...], where: str) -> Any:
    """`value` when it is of `kinds` (a bool is never a number, nor a number a bool)."""
    wanted = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
        name = "a number" if wanted == (int, float) else " or ".join(_NAMES[k] for k in wanted)
        raise DataError(where, f"expected {name}, found {kind_of(value)}")
    return value


_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true/false", list: "a list", dict: "an object"}


def kind_of(value: object) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    kinds = {bool: "true/false", str: "text", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return kinds.get(type(value), type(value).__name__)


def _key(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
