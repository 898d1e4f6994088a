"""Loading saved reports: every problem is one clear error naming the file and the key,
through the CLI too (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.errors import ReportError
from ecoready.report.load import load_report, parse_report
from tests.support.cli import ecoready
from tests.support.reports_sample import DATA


def good() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "lab-mixed.json").read_text())
    return data


def broken(change: Any) -> str:
    data = good()
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "report:1:2: not JSON"),
        ("[]", "top level: expected an object, found a list"),
        ("{}", "not an ecoready report (no schema_version)"),
        (broken(lambda d: d.update(schema_version=2)), "schema_version: report schema 2 is newer"),
        (broken(lambda d: d.update(schema_version="1")), "schema_version: expected a whole number, found text"),
        (broken(lambda d: d.pop("cells")), "cells: missing"),
        (broken(lambda d: d["cells"][1].update(status="fine")), "cells[1].status: unknown value 'fine'"),
        (broken(lambda d: d["cells"][0].update(seconds=True)), "cells[0].seconds: expected a number"),
        (broken(lambda d: d["cells"][0]["stages"][2].update(checks={})), "cells[0].stages[2].checks: expected a list"),
        (broken(lambda d: d["cells"][0]["image"].update(size="big")), "cells[0].image.size: expected a whole number"),
        (broken(lambda d: d["hosts"][0].update(emulators={"arm64": 1})), "hosts[0].emulators.arm64: expected text"),
        (broken(lambda d: d["cells"].append(d["cells"][0])), "cells[7].id: cell 'mariadb-10.11/amd64' appears twice"),
        (broken(lambda d: d["tool"].pop("version")), "tool.version: missing"),
    ],
    ids=lambda value: value if len(value) < 60 else "report",
)
def test_bad_reports_give_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(ReportError) as caught:
        parse_report(text, "report")
    assert message in str(caught.value)
    assert str(caught.value).startswith("report")


def test_files_that_are_not_reports(tmp_path: Path) -> None:
    binary = tmp_path / "invalid-binary.json"
    binary.write_bytes(b"\xff\xfe{")
    with pytest.raises(ReportError, match="not UTF-8"):
        load_report(binary)
    with pytest.raises(ReportError, match="cannot read"):
        load_report(tmp_path / "absent.json")
    deep = tmp_path / "invalid-deep.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(ReportError):
        load_report(deep)


def test_cli_report_on_a_bad_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "invalid-report.json"
    bad.write_text(broken(lambda d: d["cells"][1].update(status="fine")))
    result = ecoready("report", str(bad), "--html", str(tmp_path / "out.html"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "cells[1].status: unknown value 'fine'" in result.stderr
    assert not (tmp_path / "out.html").exists()
