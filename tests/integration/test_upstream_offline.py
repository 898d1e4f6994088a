"""The default matrix on a machine that reaches no public container registry (this one):
every upstream cell ends as `error` (the registry is unreachable: infrastructure), never
`missing` or `broken`; exit code 3; stdout carries only the JSON report. No container
starts. The whole matrix runs, and one lab row beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecoready.matrix.load import load
from tests.support.cli import ROOT, ecoready

pytestmark = pytest.mark.docker


def blame(detail: str) -> tuple[str, str]:
    """(the backend blamed or "", the registry) of `image: [backend ID: ]REGISTRY: ...`."""
    rest = detail.removeprefix("image: ")
    backend = ""
    if rest.startswith("backend "):
        backend, rest = rest.removeprefix("backend ").split(": ", 1)
    return backend, rest.split(":", 1)[0]


LAB_ROW_WITH_UPSTREAM_BACKEND = """
[[components]]
id = "lab-connector-c"
category = "connector"
probe = "connector"
image = "127.0.0.1:5000/lab/connectors:bookworm"
backend = "mysql-8.4"
options = { language = "c" }
"""


def test_every_upstream_cell_is_an_infrastructure_error(tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "matrix.toml"
    # and a row whose own image answers (the lab's) while its backend's registry does not
    matrix.write_text((ROOT / "matrix.toml").read_text() + LAB_ROW_WITH_UPSTREAM_BACKEND)
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", "-", timeout=300)
    assert result.returncode == 3, result.stderr
    report = json.loads(result.stdout)
    cells = report["cells"]
    assert len(cells) >= 22
    for cell in cells:
        assert cell["status"] == "error", cell
        assert cell["detail"].startswith("image: "), cell
        assert "unreachable" in cell["detail"] or "timeout" in cell["detail"], cell
        # a driver row asks the driver's registry first (reachable here): then the image
        assert [s["stage"] for s in cell["stages"]] in (["image"], ["packaging", "image"]), cell
    # a cell whose backend's registry does not answer blames the backend, by name (issue 20)
    backends = {component.id: component.backend for component in load(matrix).components}
    blamed = {c["id"]: blame(c["detail"]) for c in cells}
    for cell in cells:
        backend, _ = blamed[cell["id"]]
        assert backend in ("", backends[cell["component"]]), cell["detail"]
    assert any(backend for backend, _ in blamed.values())
    registries = {registry for _, registry in blamed.values()}
    assert registries == {"docker.io", "container-registry.oracle.com"}
    # the report says so in one line per registry
    for registry in registries:
        lines = [n["text"] for n in report["notes"] if n["about"] == {"shared": "registry", "subject": registry}]
        assert len(lines) == 1, report["notes"]
        assert "not checked" in lines[0]
