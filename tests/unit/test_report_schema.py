"""docs/report-schema.json describes exactly what app/report/json.py writes."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from ecoready.report import json as json_report
from tests.support.reports_sample import DATA, bench_report, lab_report
from tests.support.schema import REPORT_SCHEMA


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REPORT_SCHEMA.read_text())
    return data


def errors(data: object) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(schema()).iter_errors(data)]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())


def objects(node: object) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(objects(value))
    return found


def test_every_key_is_always_written_and_no_other_key_is() -> None:
    # stable keys: each object lists all its properties as required and allows no others
    for node in objects(schema()):
        assert set(node["required"]) == set(node["properties"]), node.get("description", node["required"])
        assert node["additionalProperties"] is False


@pytest.mark.parametrize("name", ["lab-run", "lab-mixed"])
def test_recorded_lab_reports_validate(name: str) -> None:
    """Recorded before stages carried their blame (and images their mirror, the tag they were
    found under and why a mirror was passed by, cells their probe's verification: those added here):
    that is all the schema misses in them,
    and once read (report/legacy.py gives them their blames) they are written whole."""
    recorded = json.loads((DATA / f"{name}.json").read_text())
    assert "targets" not in recorded  # recorded before matrices named target CPUs
    recorded["targets"] = []
    for key in ("matrix_content", "matrix_place"):  # recorded before reports said which matrix, by digest
        assert key not in recorded
        recorded[key] = ""
    derived = {c["id"]: c["coverage"] for c in json.loads(json_report.render(lab_report(name)))["cells"]}
    for cell in recorded["cells"]:  # recorded before images said which mirror answered
        assert "verification" not in cell  # nor cells how far their probe was verified
        cell["verification"] = None
        assert "coverage" not in cell  # nor what their verdict rests on (derived from the cell)
        cell["coverage"] = derived[cell["id"]]
        assert "facts" not in cell and "parity" not in cell  # nor parity's facts and finding
        cell["facts"], cell["parity"] = [], None
        for binary in (cell.get("audit") or {}).get("binaries", []):
            binary.setdefault("build_id", "")  # nor their programs' build IDs
        if cell["image"] is not None:
            assert not {"mirror", "found_tag", "fallback"} & set(cell["image"])
            cell["image"]["mirror"] = cell["image"]["found_tag"] = ""
            cell["image"]["fallback"] = None
    old = errors(recorded)
    assert old and set(old) == {"'blame' is a required property"}
    assert errors(json.loads(json_report.render(lab_report(name)))) == []


def test_a_report_with_bench_results_validates() -> None:
    assert errors(json.loads(json_report.render(bench_report()))) == []


def test_the_schema_rejects_what_ecoready_never_writes() -> None:
    good = json.loads((DATA / "lab-run.json").read_text())
    assert errors({**good, "started_at": "2026-11-21T23:49:41+01:00"})  # not UTC
    assert errors({**good, "password": "x"})  # an unknown key
    assert errors({**good, "schema_version": 2})
    cell = {**good["cells"][0], "status": "fine"}
    assert errors({**good, "cells": [cell]})
