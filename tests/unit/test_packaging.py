"""What `pip install .` installs: one package, `ecoready`, made of the folders app/ and
probes/, and no top-level name of the repository's folders (`app`, `probes`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from ecoready.probes import smoke
from tests.support.cli import ROOT

FOLDERS = {"ecoready": ROOT / "app", "ecoready.probes": ROOT / "probes"}


def declared_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(config["packages"])


def folder_packages() -> set[str]:
    """Every folder of app/ and probes/ with Python or package data in it, by package name."""
    found = set()
    for package, folder in FOLDERS.items():
        for directory in [folder, *(p for p in folder.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
            if any(f.is_file() and f.suffix in (".py", ".lua", ".tcss") for f in directory.iterdir()):
                parts = directory.relative_to(folder).parts
                found.add(".".join((package, *parts)))
    return found


def test_the_declared_packages_are_the_folders() -> None:
    assert declared_packages() == folder_packages()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("ecoready-*.whl")
    return built


def test_the_wheel_holds_ecoready_only(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ecoready"}
    for expected in (
        "ecoready/ui/tui/app.tcss",
        "ecoready/probe_api/sysbench_lua/zipfian.lua",
        "ecoready/py.typed",
        "ecoready/matrix/prices.toml",
        "ecoready/domain/cpus.toml",
        # the connector probe's smoke programs: put into the user's runtime image at run time
        *(f"ecoready/probes/smoke/{name}" for name in smoke.FILES.values()),
    ):
        assert expected in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "ecoready = ecoready.ui.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_it_runs_anywhere_and_app_is_not_a_name(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONNOUSERSITE": "1"}
    code = (
        "import ecoready, ecoready.probes.server, ecoready.ui.cli\n"
        "from ecoready.probes import smoke\n"
        "assert all(smoke.source(name) for name in smoke.FILES.values())\n"
        "print(ecoready.__file__)"
    )
    shown = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip().startswith(str(target))
    for argv in ([str(target / "bin" / "ecoready"), "--help"], [sys.executable, "-m", "ecoready", "--help"]):
        helped = subprocess.run(argv, cwd=elsewhere, env=env, capture_output=True, text=True)
        assert helped.returncode == 0 and "usage: ecoready" in helped.stdout, helped.stderr
    for name in ("app", "probes"):
        refused = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=elsewhere, env=env, capture_output=True)
        assert refused.returncode != 0


def test_the_folders_refuse_to_be_imported_by_their_own_names() -> None:
    """From the checkout itself (where `app/` is on the path), `import app` fails at once
    instead of loading a second copy of every module."""
    for name, package in (("app", "ecoready"), ("probes", "ecoready.probes")):
        result = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode != 0
        assert f"import {package}, not {name}" in result.stderr
