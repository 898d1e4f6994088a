"""`doctor` ends with one summary line and exits 3 (design.md: an environment error) when
something would stop a run; a real unreachable socket and a real refused registry port."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ecoready.ui.verbs.doctor import summary

EXE = Path(sys.executable).with_name("ecoready")


def doctor(tmp_path: Path, matrix: str | None, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [str(EXE), "doctor"]
    if matrix is not None:
        (tmp_path / "m.toml").write_text(matrix)
        argv += ["--matrix", "m.toml"]
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock", "DOCKER_CONFIG": str(tmp_path / "none")}
    env.pop("ECOREADY_REGISTRY_MIRRORS", None)
    env.update(extra or {})
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)


def test_an_unreachable_engine_exits_3_with_a_summary(tmp_path: Path) -> None:
    matrix = (
        'arches = ["amd64"]\n[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "mariadb:11.8"\n'
    )
    env = {"ECOREADY_REGISTRY_MIRRORS": "docker.io=127.0.0.1:9"}  # a closed port: no registry asked outside
    result = doctor(tmp_path, matrix, env)
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith("the engine is unreachable")
    assert "Traceback" not in result.stderr


def test_without_a_matrix_it_checks_the_one_run_would_use(tmp_path: Path) -> None:
    """In a folder without matrix.toml `run` uses the default matrix shipped with ecoready:
    doctor asks that matrix's registries too, so it never says "ready" where `run` cannot
    reach them (here its mirror is a closed port)."""
    result = doctor(tmp_path, None, {"ECOREADY_REGISTRY_MIRRORS": "docker.io=127.0.0.1:9"})
    assert result.returncode == 3, result.stdout + result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("doctor: NOT READY to run ") and "default_matrix.toml" in last
    assert "does not answer" in last
    assert "using the default matrix shipped with ecoready" in result.stderr


def test_a_registry_that_does_not_answer_is_named_in_the_summary(tmp_path: Path) -> None:
    matrix = (
        'arches = ["amd64"]\n[[components]]\nid = "nowhere"\ncategory = "server"\nprobe = "server"\n'
        'image = "127.0.0.1:9/nobody/here:1"\n'
    )
    result = doctor(tmp_path, matrix)
    assert result.returncode == 3, result.stdout + result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("doctor: NOT READY to run m.toml: registry 127.0.0.1:9 does not answer; ")
    assert last.endswith("the engine is unreachable")


def test_summary_lines() -> None:
    assert summary([], [], "m.toml") == "doctor: ready to run m.toml"
    assert summary([], ["arm64 under emulation is not known yet"], None) == (
        "doctor: ready to run (1 warning: arm64 under emulation is not known yet)"
    )
    assert summary(["the emulator of arm64 is broken"], [], "m.toml") == (
        "doctor: NOT READY to run m.toml: the emulator of arm64 is broken"
    )
