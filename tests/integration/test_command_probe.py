"""The generic `command` probe through the real engine and the lab registry (amd64, native):
a command that exits 1 is `partial` naming its failing checks with the output, one that
hangs past its limit is `timeout` with the output so far, a program the image does not have
is a configuration `error` naming the matrix row (whether the engine refuses it or the
image's entrypoint script cannot find it), and a service that exits is `broken`. Nothing
is left behind. (What the app's environment and files hold: tests/unit/test_probe_command.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import cell_checks, report_cell, run_to_report

pytestmark = pytest.mark.docker

LAB = "127.0.0.1:5000/lab"
MATRIX = f"""
title = "the generic probe when things go wrong"
arches = ["amd64"]
profile = "smoke"

[[components]]
id = "db"
category = "server"
probe = "server"
image = "{LAB}/mariadb:10.11"

[[components]]
id = "app-ok"
category = "app"
probe = "command"
image = "{LAB}/app-client:1"
backend = "db"

[[components]]
id = "app-exit-1"
category = "app"
probe = "command"
image = "{LAB}/app-client:1"
backend = "db"

[components.options]
command = ["sh", "-c", "app-client; echo 'fail export the report service refused: HTTP 503'; exit 1"]

[[components]]
id = "app-hangs"
category = "app"
probe = "command"
image = "{LAB}/app-client:1"
backend = "db"

[components.options]
command = ["sh", "-c", "echo 'ok connect pretend'; echo 'waiting for a lock ...'; exec sleep 600"]
limit = 4

[[components]]
id = "app-no-program"
category = "app"
probe = "command"
image = "{LAB}/app-client:1"

[components.options]
command = ["app-server", "--port", "8080"]

[[components]]
id = "entrypoint-no-program"
category = "app"
probe = "command"
image = "{LAB}/mariadb:10.11"

[components.options]
command = ["app-server"]

[[components]]
id = "service-exits"
category = "app"
probe = "command"
image = "{LAB}/app-client:1"

[components.options]
mode = "service"
port = 8080
command = ["sh", "-c", "echo 'listening on :8080'; echo 'panic: no config' >&2; exit 3"]
"""


@pytest.fixture(scope="module")
def report(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_to_report(tmp_path_factory.mktemp("command"), MATRIX, timeout=1200)


def cell(report: dict[str, Any], component: str) -> dict[str, Any]:
    return report_cell(report, f"{component}/amd64")


def test_the_app_passes_with_its_own_checks(report: dict[str, Any], no_leaks: None) -> None:
    c = cell(report, "app-ok")
    assert c["status"] == "ready", (c["detail"], c["log_tail"][-10:])
    seen = cell_checks(c)
    assert [n for n in seen] == ["env", "connect", "write", "read", "command"]
    assert "password from a file" in seen["env"]["detail"]
    assert "server 10.11" in seen["connect"]["detail"] and "x86_64" in seen["read"]["detail"]
    assert report["_exit"] == 3  # the configuration errors below make the run's exit 3


def test_exit_1_is_partial_naming_the_failing_checks_with_the_output(report: dict[str, Any]) -> None:
    c = cell(report, "app-exit-1")
    assert c["status"] == "partial" and c["detail"] == "failed: export, command", c["detail"]
    seen = cell_checks(c)
    assert seen["connect"]["outcome"] == "pass" and seen["export"]["detail"] == "the report service refused: HTTP 503"
    assert "exited with code 1" in seen["command"]["detail"] and "HTTP 503" in seen["command"]["detail"]
    assert any("fail export" in line for line in c["log_tail"])  # the whole output is in the log tail


def test_a_hang_past_its_limit_is_a_timeout_with_the_output_so_far(report: dict[str, Any]) -> None:
    c = cell(report, "app-hangs")
    assert c["status"] == "timeout", c["detail"]
    seen = cell_checks(c)
    assert seen["connect"]["outcome"] == "pass"
    assert seen["command"]["outcome"] == "timeout"
    assert "did not end within 4 s" in seen["command"]["detail"] and "waiting for a lock" in seen["command"]["detail"]


@pytest.mark.parametrize("component", ["app-no-program", "entrypoint-no-program"])
def test_a_program_the_image_lacks_is_a_configuration_error_naming_the_row(
    report: dict[str, Any], component: str
) -> None:
    c = cell(report, component)
    assert c["status"] == "error", c["detail"]  # never `broken`: the matrix row is wrong, not the image
    assert f"matrix row '{component}' (probe command)" in c["detail"]
    assert "app-server" in c["detail"]


def test_a_service_that_exits_is_broken(report: dict[str, Any]) -> None:
    c = cell(report, "service-exits")
    assert c["status"] == "broken" and "exited with code 3" in c["detail"], c["detail"]
