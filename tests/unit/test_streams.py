"""Results on stdout, diagnostics on stderr; `doctor` asks each registry of the matrix; a
first start in a folder without a matrix runs the default matrix shipped with ecoready."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from ecoready.matrix.load import parse
from ecoready.ui.verbs.doctor import registry_answers
from tests.support.cli import ecoready

EXE = Path(sys.executable).with_name("ecoready")


def test_validate_says_ok_on_stdout() -> None:
    result = ecoready("validate", "containers/lab.toml")
    assert result.returncode == 0
    assert result.stdout.startswith("containers/lab.toml: ok (") and result.stderr == ""


def test_no_matrix_in_the_folder_runs_the_default_matrix_shipped_with_ecoready(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent", "XDG_STATE_HOME": str(tmp_path / "state")}
    for argv in (["validate"], ["run", "--headless", "--json", str(tmp_path / "r.json")]):
        result = subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
        said = result.stderr
        assert "no matrix.toml here: using the default matrix shipped with ecoready (" in said, said
        assert "ecoready init" in said and "Traceback" not in said
        if argv == ["validate"]:
            assert result.returncode == 0 and "default_matrix.toml: ok (" in result.stdout
        else:
            assert result.returncode == 3 and "docker" in said.lower()  # it got as far as the engine
    assert not (tmp_path / "matrix.toml").exists()


def test_doctor_says_whether_each_registry_of_the_matrix_answers() -> None:
    matrix = parse(
        """
arches = ["amd64"]
[[components]]
id = "lab"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
[[components]]
id = "nowhere"
category = "server"
probe = "server"
image = "127.0.0.1:9/nobody/here:1"
""",
        "m.toml",
    )
    lines = asyncio.run(registry_answers(matrix))
    assert lines[0] == "registry 127.0.0.1:5000: answers (asked for 127.0.0.1:5000/lab/mariadb:10.11)"
    assert lines[1].startswith("registry 127.0.0.1:9: does not answer: unreachable (")


def test_validate_warns_on_floating_tags_and_hints_only_what_can_help(tmp_path: Path) -> None:
    import pytest

    from ecoready.domain.errors import ConfigError

    floating = tmp_path / "floating.toml"
    floating.write_text(
        'arches = ["amd64"]\n[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\n'
        'image = "mariadb:latest"\n'
    )
    result = subprocess.run([str(EXE), "validate", str(floating)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and ": ok (" in result.stdout
    assert "warning: component 'db': image 'mariadb:latest' floats (latest): pin a version tag" in result.stderr

    text = """
arches = ["amd64"]
[[components]]
id = "mysql-8.4"
category = "server"
probe = "server"
image = "mysql:8.4"
[[components]]
id = "proxysql"
category = "load-balancer"
probe = "proxysql"
image = "proxysql/proxysql:2.7.1"
backend = "proxysq"
options = { admin_port = 6032 }
"""
    with pytest.raises(ConfigError) as caught:
        parse(text, "m.toml")
    said = str(caught.value)
    assert "(allowed: )" not in said and "this table takes no keys" in said
    assert "did you mean 'proxysql'" not in said  # never itself as its own backend
