"""Every report the tests produce validates against docs/report-schema.json (conftest.py
hooks these in: reports rendered in-process, files under each test's tmp_path, reports
printed on stdout by `ecoready(...)`, and every report file of the session at its end)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# -- every report the tests produce validates against docs/report-schema.json ----------
# Four nets, together covering every report a test makes:
# 1. in-process: `app.report.json.render` is wrapped for the whole session, so every report
#    rendered inside the test process (history.store, report files, unit tests) is checked;
# 2. files written by subprocesses: after each test, every report file under its tmp_path
#    (reports, history folders, outputs of `ecoready check/run/report`) is checked;
# 3. stdout: `ecoready(...)` above checks a report printed with `--json -`;
# 4. at the end of the session, every report file anywhere under the session's temporary
#    folder (module fixtures' tmp_path_factory folders too) not checked yet is checked.
REPORT_SCHEMA = ROOT / "docs" / "report-schema.json"
VALIDATED: list[str] = []
CHECKED_FILES: set[Path] = set()


def is_report(data: object) -> bool:
    return isinstance(data, dict) and "schema_version" in data and "cells" in data


def validate_report(data: Any, where: str) -> None:
    import jsonschema

    schema = json.loads(REPORT_SCHEMA.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        lines = [f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors[:10]]
        pytest.fail(f"{where}: the report does not match docs/report-schema.json:\n" + "\n".join(lines))
    VALIDATED.append(where)


def reports_under(directory: Path) -> Iterator[tuple[Path, Any]]:
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 64 << 20:
            continue
        try:
            with path.open("rb") as handle:
                if handle.read(1) != b"{":  # a report is a JSON object: skip everything else cheaply
                    continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if is_report(data):
            yield path, data


def validate_files_under(directory: Path) -> None:
    for path, data in reports_under(directory):
        if path.name.startswith("invalid-") or path in CHECKED_FILES:  # invalid-*: loader tests' bad inputs
            continue
        CHECKED_FILES.add(path)
        validate_report(data, str(path))
