"""`pip install` is enough: the wheel, installed in a fresh virtual environment outside the
checkout, carries the default matrix, and `ecoready validate` and `ecoready images` run it
from an empty folder, through registry mirrors set by the environment as CI sets them.

The mirror is a real registry (Debian's docker-registry on a free loopback port, no
engine) holding a tiny two-arch index under each upstream name of the default matrix, a
Harbor-style prefix per upstream registry: enough for `images`, which reads manifests and
configs only (no image here is run, so none pretends to be the software it is named
after). The fresh environment takes its dependencies from this test run's environment
through a `.pth` line (no download); ecoready itself comes from the wheel only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.lab.oci_writer import RegistryWriter
from ecoready.matrix.load import load
from ecoready.registry.manifests import parse_reference
from tests.support.cli import ROOT
from tests.support.registry_servers import Registry, push_tiny_index, start_registry

PREFIXES = {"docker.io": "hub", "container-registry.oracle.com": "ocr"}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `ecoready` console script of a fresh venv with the wheel installed."""
    work = tmp_path_factory.mktemp("fresh")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = work.glob("ecoready-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # the dependencies of this run's environment, after the venv's own site-packages (a path
    # line: that folder's own .pth files, this checkout's editable install among them, are not read)
    (site / "zz-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin" / "ecoready"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    work = tmp_path_factory.mktemp("shipped-mirror")
    (work / "storage").mkdir()
    registry = start_registry(work, work / "storage")
    matrix = load(ROOT / "matrix.toml", {})
    references = {c.image for c in matrix.components}
    references |= {str(v) for c in matrix.components for k, v in c.options.items() if k.endswith("image")}
    references.add(matrix.sysbench.image or matrix.sysbench.base)
    writer = RegistryWriter(registry.url)
    try:
        for reference in sorted(references):
            ref = parse_reference(reference)
            assert ref.tag
            push_tiny_index(writer, f"{PREFIXES[ref.registry]}/{ref.repository}", ref.tag)
    finally:
        writer.close()
    yield registry
    registry.stop()


SMOKE_PROGRAMS = (
    "from ecoready.probes import smoke\n"
    "assert all(smoke.source(name) for name in smoke.FILES.values())\n"
    "print(smoke.__file__)"
)


def clean_env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "ECOREADY_"))}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "home"), **more}


def test_the_installed_wheel_runs_its_default_matrix_from_an_empty_folder(
    fresh: Path, mirror: Registry, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = clean_env(tmp_path)
    where = subprocess.run(
        [str(fresh.with_name("python")), "-c", "import ecoready; print(ecoready.__file__)"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(fresh.parents[1])) and str(ROOT) not in where  # the wheel's, not the checkout's

    validated = subprocess.run([str(fresh), "validate"], cwd=empty, env=env, capture_output=True, text=True, timeout=60)
    assert validated.returncode == 0, validated.stderr
    assert "using the default matrix shipped with ecoready (" in validated.stderr
    assert validated.stdout.startswith(str(fresh.parents[1]))  # the file inside the installed package
    count = len(load(ROOT / "matrix.toml", {}).components)
    assert f"default_matrix.toml: ok ({count} components, arches amd64, arm64)" in validated.stdout
    # the connector rows' smoke programs come with the wheel (the probe puts them into the images)
    programs = subprocess.run(
        [str(fresh.with_name("python")), "-c", SMOKE_PROGRAMS], cwd=empty, env=env, capture_output=True, text=True
    )
    assert programs.returncode == 0 and str(ROOT) not in programs.stdout, programs.stderr
    assert programs.stdout.startswith(str(fresh.parents[1])), programs.stdout

    mirrors = ",".join(f"{upstream}={mirror.host}/{prefix}" for upstream, prefix in PREFIXES.items())
    env = clean_env(tmp_path, ECOREADY_REGISTRY_MIRRORS=mirrors)
    found = subprocess.run(
        [str(fresh), "images", "--json", "-"], cwd=empty, env=env, capture_output=True, text=True, timeout=120
    )
    assert found.returncode == 0, found.stderr + found.stdout[-2000:]
    report = json.loads(found.stdout)
    assert report["summary"] == {"available": len(report["checks"])}
    matrix = load(ROOT / "matrix.toml", {})
    assert len(report["checks"]) == 2 * len(matrix.components) + 2  # and sysbench's base, per arch
    for check in report["checks"]:
        upstream = parse_reference(check["reference"]).registry
        assert check["mirror"] == f"{mirror.host}/{PREFIXES[upstream]}", check
        assert check["registry"] == mirror.host and check["pull_reference"].startswith(check["mirror"] + "/")
    tools = [c for c in report["checks"] if c["component"] == "tool:sysbench"]
    assert {(c["arch"], c["reference"]) for c in tools} == {(a, matrix.sysbench.base) for a in ("amd64", "arm64")}
    references = {c["reference"] for c in report["checks"]}
    assert "mysql:8.4" in references  # as the matrix wrote it
    assert "container-registry.oracle.com/mysql/community-router:9.7" in references
    assert not (empty / "matrix.toml").exists()
