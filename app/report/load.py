"""JSON report -> `Report`: the inverse of `report/json.py` (the same layouts), for
re-rendering, diffs and history. A report file is input from elsewhere (a CI artifact, a
colleague), so every field is checked and any problem becomes one `ReportError` naming the
file and the key, never a traceback. Text is kept as written; renderers make it inert when
they show it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ecoready.domain.codec import from_plain, kind_of
from ecoready.domain.errors import ConfigError, DataError, ReportError
from ecoready.domain.model import REPORT_SCHEMA_VERSION, CellResult, Report
from ecoready.domain.reading import position, read_bounded, too_many_digits
from ecoready.report.json import LAYOUTS

MAX_REPORT_BYTES = 64 << 20  # a report of thousands of cells is a few MiB


def report_from_dict(data: object, source: str = "report") -> Report:
    try:
        return _report(data)
    except DataError as exc:
        raise ReportError(f"{source}: {exc}") from None


def _report(data: object) -> Report:
    if not isinstance(data, dict):
        raise DataError("", f"expected an object, found {kind_of(data)}")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise DataError("schema_version", f"expected a whole number, found {kind_of(version)}")
    if version != REPORT_SCHEMA_VERSION:
        newer = version > REPORT_SCHEMA_VERSION
        raise DataError(
            "schema_version",
            f"report schema {version} "
            + ("is newer than this ecoready reads" if newer else "is not one this ecoready reads")
            + f" (it reads schema {REPORT_SCHEMA_VERSION})"
            + ("; upgrade ecoready" if newer else ""),
        )
    tool = data.get("tool")
    if not isinstance(tool, dict):
        raise DataError("tool", "missing" if tool is None else f"expected an object, found {kind_of(tool)}")
    if "version" not in tool:
        raise DataError("tool.version", "missing")
    if "cells" not in data:
        raise DataError("cells", "missing")
    if not isinstance(data["cells"], list):
        raise DataError("cells", f"expected a list, found {kind_of(data['cells'])}")
    cells: dict[str, CellResult] = {}
    for i, item in enumerate(data["cells"]):
        cell = from_plain(CellResult, item, LAYOUTS, f"cells[{i}]")
        if cell.id in cells:
            raise DataError(f"cells[{i}].id", f"cell {cell.id!r} appears twice")
        cells[cell.id] = cell
    rest = {k: v for k, v in data.items() if k not in ("tool", "summary", "cells")}
    report = from_plain(Report, {**rest, "tool_version": tool["version"], "cells": {}}, LAYOUTS)
    if not isinstance(report.tool_version, str):  # pragma: no cover - from_plain checked it
        raise DataError("tool.version", "expected text")
    return replace(report, cells=cells)


def parse_report(text: str, source: str = "report") -> Report:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{source}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise ReportError(f"{source}: nested too deeply to be a report") from None
    except ValueError as exc:  # a number longer than Python turns into an integer
        raise ReportError(str(too_many_digits(source, text, exc))) from None
    if isinstance(data, Mapping) and "schema_version" not in data:
        raise ReportError(f"{source}: not an ecoready report (no schema_version)")
    return report_from_dict(data, source)


def load_report(path: str | Path) -> Report:
    """Read a report file (`-` = stdin)."""
    name = str(path)
    if name == "-":
        try:
            raw = sys.stdin.buffer.read(MAX_REPORT_BYTES + 1)
        except OSError as exc:
            raise ReportError(f"{name}: cannot read: {exc.strerror or exc}") from None
        if len(raw) > MAX_REPORT_BYTES:
            raise ReportError(f"{name}: larger than {MAX_REPORT_BYTES >> 20} MiB: not a report")
    else:
        try:
            raw = read_bounded(path, MAX_REPORT_BYTES, "report")
        except ConfigError as exc:
            raise ReportError(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = position(raw, exc.start)
        raise ReportError(f"{name}:{line}:{col}: not UTF-8 (byte {exc.start})") from None
    return parse_report(text, name)
