"""Results on stdout, diagnostics on stderr; `doctor` asks each registry of the matrix; a
first start in a folder without a matrix says how to get one."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from ecoready.matrix.load import parse
from ecoready.ui.ops import registry_answers
from tests.support.cli import ecoready

EXE = Path(sys.executable).with_name("ecoready")


def test_validate_says_ok_on_stdout() -> None:
    result = ecoready("validate", "containers/lab.toml")
    assert result.returncode == 0
    assert result.stdout.startswith("containers/lab.toml: ok (") and result.stderr == ""


def test_no_matrix_in_the_folder_says_how_to_get_one(tmp_path: Path) -> None:
    for argv in ([], ["run", "--headless"]):
        result = subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        said = result.stderr
        assert "no matrix.toml here" in said and "containers/lab.toml" in said
        assert "ecoready init" in said and "docs/matrix.md" in said


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
