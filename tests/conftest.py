"""Shared fixtures. Tests that need the engine and the lab fail loudly when they are not
there: `make test` sets both up, and a skipped test would hide a broken setup."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import LAB_MATRIX, TEST_LABEL_KEY, TEST_SESSION, docker_labelled, ecoready
from tests.support.schema import REPORT_SCHEMA, VALIDATED, validate_files_under, validate_report

# the second Docker engine fixture (tests/support/second_engine.py), Podman's API service
# (tests/support/podman_engine.py), a network of a test's own for containers started by
# hand (tests/support/lab_containers.py)
pytest_plugins = ["tests.support.second_engine", "tests.support.podman_engine", "tests.support.lab_containers"]

# `make test` runs the suite on pytest-xdist workers with `--dist loadgroup`: a group runs
# whole on one worker, in the order collected (`--no-loadscope-reorder`).
LAB_RUN = "lab-run"  # the tests that read the session's whole-lab run (`lab_report`)
STAND_IN_RUN = "stand-in-run"  # those that read its run of the default matrix through the stand-ins


def _shares_module_fixtures(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)  # pytest keeps a test's fixtures there
    chains = info.name2fixturedefs.values() if info is not None else ()
    return any(d.scope in ("package", "module", "class") for chain in chains for d in chain)


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups from the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The whole-lab run's readers share one worker, so the run happens once, and go first:
    it is the longest group; the readers of the stand-ins' run likewise, on another. The
    engine tests of a file with module fixtures (a registry,
    a run several tests read) stay on one worker, so those start once; every other test
    goes alone, so the workers end together. Then the order: the `slow` engine tests, the
    other engine tests, and the quick in-process tests last (`make test` runs those beside
    the `alone` tests instead)."""

    def rank(item: pytest.Item) -> int:
        if {"lab_report", "stand_in_report"} & set(getattr(item, "fixturenames", ())):
            return 0
        if item.get_closest_marker("docker"):
            return 1 if item.get_closest_marker("slow") else 2
        return 3

    for item in items:
        if "second_engine" in getattr(item, "fixturenames", ()):
            # one bridge and address pool per machine, and its restart after a kill puts
            # the host's docker0 back (tests/support/second_engine.py)
            item.add_marker(pytest.mark.alone)
        if item.get_closest_marker("xdist_group"):
            continue
        fixtures = set(getattr(item, "fixturenames", ()))
        if "stand_in_report" in fixtures and "lab_report" not in fixtures:
            item.add_marker(pytest.mark.xdist_group(STAND_IN_RUN))  # beside the lab run, on another worker
        elif rank(item) == 0:
            item.add_marker(pytest.mark.xdist_group(LAB_RUN))
        elif item.get_closest_marker("docker") and _shares_module_fixtures(item):
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
    items.sort(key=rank)  # stable: within a rank, the order collected


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


@pytest.fixture(scope="session", autouse=True)
def _validate_rendered_reports() -> Iterator[None]:
    from ecoready.report import json as json_report

    original = json_report.render

    def render_and_validate(report: Any) -> str:
        text = original(report)
        validate_report(json.loads(text), f"report {report.run_id[:8]} rendered in-process")
        return text

    json_report.render = render_and_validate
    yield
    json_report.render = original


@pytest.fixture(autouse=True)
def _validate_report_files(request: pytest.FixtureRequest) -> Iterator[None]:
    # asked for during set-up, so tmp_path is torn down after this check, not before it
    tmp_path: Path | None = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if tmp_path is None:
        return
    validate_files_under(tmp_path)


@pytest.fixture(scope="session", autouse=True)
def _validate_every_report_file_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    validate_files_under(tmp_path_factory.getbasetemp())


_VALIDATED_BY_WORKERS: list[int] = []  # reports each xdist worker validated


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller sums and prints
        workeroutput["reports_validated"] = len(VALIDATED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any) -> None:
    """xdist's controller: a worker is done; add its count (pytest-xdist's hook)."""
    _VALIDATED_BY_WORKERS.append(int(getattr(node, "workeroutput", {}).get("reports_validated", 0)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    validated = len(VALIDATED) + sum(_VALIDATED_BY_WORKERS)
    if validated:
        terminalreporter.write_line(f"report schema: {validated} report(s) validated against {REPORT_SCHEMA.name}")


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """After the test, nothing any run of this test session labelled is left on the engine."""
    yield
    left = docker_labelled(f"{TEST_LABEL_KEY}={TEST_SESSION}")
    assert left == {"containers": [], "networks": [], "volumes": []}, f"leaked: {left}"


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


@pytest.fixture(scope="session")
def stand_in_report(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The default matrix through the lab's stand-ins (tests/support/stand_in.py: the rows
    they serve, the connector rows and gh-ost, both arches), run once per test session;
    test_stand_in*.py read their cells from it."""
    from tests.support.stand_in import require_stand_in, run_stand_in

    require_stand_in()
    return run_stand_in(tmp_path_factory.mktemp("stand-in"))
