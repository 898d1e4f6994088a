"""Shared fixtures. Tests that need the engine and the lab fail loudly when they are not
there: `make test` sets both up, and a skipped test would hide a broken setup."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Every run these tests start (in-process or as a subprocess) carries this label, so leak
# checks look only at this test session's resources even when other runs share the engine.
TEST_LABEL_KEY = "ecoready-test.session"
TEST_SESSION = uuid.uuid4().hex[:12]
os.environ["ECOREADY_LABELS"] = f"{TEST_LABEL_KEY}={TEST_SESSION}"

# the second Docker engine fixture (tests/support/second_engine.py)
pytest_plugins = ["tests.support.second_engine"]

ROOT = Path(__file__).resolve().parents[1]
LAB_MATRIX = ROOT / "containers" / "lab.toml"


def docker_labelled(label: str) -> dict[str, list[str]]:
    """ids of containers, networks and volumes carrying `label` (e.g. ecoready.run=<id>)."""
    out = {}
    for kind, cmd in (
        ("containers", ["docker", "ps", "-aq"]),
        ("networks", ["docker", "network", "ls", "-q"]),
        ("volumes", ["docker", "volume", "ls", "-q"]),
    ):
        result = subprocess.run(
            [*cmd, "--filter", f"label={label}"], capture_output=True, text=True, timeout=30, check=True
        )
        out[kind] = result.stdout.split()
    return out


def cell_containers(label: str, *, running: bool = False) -> list[str]:
    """ids of the containers of cells carrying `label`: not the short-lived platform
    survey container a run also starts (app/survey.py), which may be gone a moment later.
    `running`: started ones only (a container still being created when its client dies
    may be rolled back by the engine)."""
    state = ["--filter", "status=running"] if running else []
    result = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label={label}", *state, "--format", '{{.ID}} {{.Label "ecoready.role"}}'],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return [line.split()[0] for line in result.stdout.splitlines() if line.split()[1:] != ["platform"]]


@pytest.fixture(scope="session")
def lab() -> Path:
    """The lab is built and its registry serves: else fail with the command that fixes it."""
    from ecoready.lab.local_registry import registry_running
    from ecoready.lab.recipes import IMAGES, REGISTRY, image_tag

    if subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode != 0:
        pytest.fail("the docker engine does not answer: run `make test` (it starts it) or `make setup`")
    if not registry_running():
        pytest.fail(f"the lab registry on {REGISTRY} is down: run `make lab` or `ecoready lab up`")
    for image in IMAGES:
        for arch in image.arches:
            found = subprocess.run(
                ["docker", "image", "inspect", image_tag(image, arch)], capture_output=True, timeout=20
            )
            if found.returncode != 0:
                pytest.fail(f"lab image {image_tag(image, arch)} is missing: run `make lab`")
    return LAB_MATRIX


@pytest.fixture(scope="session")
def lab_gaps(lab: Path) -> Path:
    """The lab with its deliberate availability gaps published (`ecoready lab build` does it)."""
    from ecoready.lab.gaps import gap_status
    from ecoready.lab.oci_writer import RegistryWriter
    from ecoready.lab.recipes import REGISTRY

    writer = RegistryWriter(f"http://{REGISTRY}", timeout=10)
    try:
        stale = [name for name, current in gap_status(writer) if not current]
    finally:
        writer.close()
    if stale:
        pytest.fail(f"lab gaps not published ({', '.join(stale)}): run `ecoready lab build --only gaps`")
    return lab


def ecoready(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed console script the way a user would. A JSON report it prints on
    stdout (`--json -`) is validated against docs/report-schema.json here."""
    exe = Path(sys.executable).with_name("ecoready")
    result = subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}, cwd=ROOT
    )
    if "--json" in args and args[args.index("--json") + 1] == "-" and result.stdout.strip():
        try:
            data = json.loads(result.stdout)
        except ValueError:
            data = None
        if is_report(data):
            validate_report(data, "stdout of ecoready " + " ".join(args))
    return result


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


@pytest.fixture(scope="session", autouse=True)
def _validate_rendered_reports() -> Iterator[None]:
    from ecoready.report import json as json_report

    original = json_report.render

    def render_and_validate(report: Any) -> str:
        text = original(report)
        validate_report(json.loads(text), f"report {report.run_id[:8]} rendered in-process")
        return text

    json_report.render = render_and_validate  # type: ignore[assignment]
    yield
    json_report.render = original  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _validate_report_files(request: pytest.FixtureRequest) -> Iterator[None]:
    # asked for during set-up, so tmp_path is torn down after this check, not before it
    tmp_path: Path | None = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if tmp_path is None:
        return
    validate_files_under(tmp_path)


def validate_files_under(directory: Path) -> None:
    for path, data in reports_under(directory):
        if path.name.startswith("invalid-") or path in CHECKED_FILES:  # invalid-*: loader tests' bad inputs
            continue
        CHECKED_FILES.add(path)
        validate_report(data, str(path))


@pytest.fixture(scope="session", autouse=True)
def _validate_every_report_file_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    validate_files_under(tmp_path_factory.getbasetemp())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if VALIDATED:
        terminalreporter.write_line(f"report schema: {len(VALIDATED)} report(s) validated against {REPORT_SCHEMA.name}")


def one_image_matrix(directory: Path, image: str, component: str = "m") -> Path:
    """A matrix file with one server component of `image`."""
    path = directory / f"{component}.toml"
    path.write_text(f'[[components]]\nid = "{component}"\ncategory = "server"\nprobe = "server"\nimage = "{image}"\n')
    return path


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """After the test, nothing any run of this test session labelled is left on the engine."""
    yield
    left = docker_labelled(f"{TEST_LABEL_KEY}={TEST_SESSION}")
    assert left == {"containers": [], "networks": [], "volumes": []}, f"leaked: {left}"


def run_async(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="session")
def lab_report(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The whole lab matrix, run once per test session as `make demo` runs it; the tests
    of every lab row read their cells from it (one run instead of one per test file)."""
    out = tmp_path_factory.mktemp("lab") / "report.json"
    result = ecoready("run", "--headless", "--matrix", str(lab), "--json", str(out), timeout=3600)
    report: dict[str, Any] = json.loads(out.read_text())
    report["_stderr"] = result.stderr
    report["_exit"] = result.returncode
    assert docker_labelled(f"ecoready.run={report['run_id']}") == {"containers": [], "networks": [], "volumes": []}
    return report
