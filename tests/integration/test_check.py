"""`ecoready check` with the lab: a real change between two checks (the same component
made to fail its smoke `crud` check) reaches a real local webhook receiver exactly once;
a check with no change posts nothing. And `run --headless` writes every report format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.receiver import Receiver
from tests.support.schema import validate_report

pytestmark = pytest.mark.docker

MATRIX = """title = "check test"
arches = ["amd64"]
profile = "smoke"

[[components]]
id = "mariadb-10.11"
name = "MariaDB 10.11 (Debian 12)"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""
# the server starts, but CREATE TABLE ... ENGINE=InnoDB fails: smoke `crud` fails -> partial
ARIA_ONLY = '[components.options]\nargs = ["--enforce-storage-engine=Aria"]\n'


def test_check_tells_the_webhook_once_when_readiness_changes(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix, history = tmp_path / "stack.toml", tmp_path / "history"
    check = ("check", "--matrix", str(matrix), "--history", str(history), "--only", "mariadb-10.11")
    matrix.write_text(MATRIX)
    with Receiver() as hook:
        first = ecoready(*check, "--webhook", hook.url, "--md", str(tmp_path / "first.md"))
        assert first.returncode == 0, first.stderr
        assert "nothing to compare with yet" in first.stdout
        matrix.write_text(MATRIX + ARIA_ONLY)
        # the URL from the environment this time: it stays out of the process list
        second = ecoready(*check, env={"ECOREADY_WEBHOOK_URL": hook.url})
        assert second.returncode == 1, second.stderr  # readiness regressed
        assert "REGRESSED mariadb-10.11/amd64: ready -> partial: failed: crud" in second.stdout
        assert "told the webhook" in second.stderr
        third = ecoready(*check, "--webhook", hook.url)
        assert third.returncode == 0, third.stderr  # still partial: no change, nothing new to say
        assert "no change since run" in third.stdout
    assert len(hook.posts) == 1
    (post,) = hook.posts
    assert post["text"].startswith(f"ecoready: {matrix}: 1 regression in 1 change since run")
    assert "REGRESSED mariadb-10.11/amd64: ready -&gt; partial: failed: crud" in post["text"]
    assert post["diff"]["regressed"] is True
    assert post["diff"]["status_changes"] == [
        {
            "cell": "mariadb-10.11/amd64",
            "old": "ready",
            "new": "partial",
            "judged_against": None,
            "detail": "failed: crud",
            "emulated": False,
            "regression": True,
        }
    ]
    assert hook.headers[0]["User-Agent"].startswith("ecoready/")
    stored = sorted(history.glob("*.json"))
    assert [json.loads(p.read_text())["cells"][0]["status"] for p in stored] == ["ready", "partial", "partial"]
    for path in stored:  # a freshly produced lab report matches the schema
        validate_report(json.loads(path.read_text()), str(path))
    assert "| server | **mariadb-10.11**<br>MariaDB 10.11 (Debian 12) | ✔ ready" in (tmp_path / "first.md").read_text()


def test_headless_run_writes_every_format_and_report_rerenders_them(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    out = {fmt: tmp_path / f"run.{fmt}" for fmt in ("json", "md", "html", "junit")}
    flags = [arg for fmt, path in out.items() for arg in (f"--{fmt}", str(path))]
    result = ecoready("run", "--headless", "--matrix", str(lab), "--only", "mariadb-10.11", "--arch", "amd64", *flags)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    report = json.loads(out["json"].read_text())
    validate_report(report, str(out["json"]))
    (case,) = ET.parse(out["junit"]).getroot().iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("server", "mariadb-10.11/amd64")
    assert [child.tag for child in case] == ["properties", "system-out"]  # ready: no failure, error or skip
    (rests,) = [p.get("value") for p in case.iter("property") if p.get("name") == "rests_on"]
    assert rests and "checks passed" in (rests or "") and rests in (case.findtext("system-out") or "")
    assert "st-ready" in out["html"].read_text() and "✔ ready" in out["md"].read_text()
    # the live outputs are exactly what re-rendering the saved JSON gives
    for fmt in ("md", "html", "junit"):
        again = ecoready("report", str(out["json"]), f"--{fmt}", "-")
        assert again.returncode == 0, again.stderr
        assert again.stdout == out[fmt].read_text(), fmt
