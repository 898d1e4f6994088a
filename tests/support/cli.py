"""ecoready run as a user runs it (the installed console script), and what it left on the
engine. Every run the tests start carries this test session's label, so leak checks look
only at this session's resources even when other runs share the engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from tests.support.schema import is_report, validate_report

# Every run these tests start (in-process or as a subprocess) carries this label, so leak
# checks look only at this test session's resources even when other runs share the engine.
TEST_LABEL_KEY = "ecoready-test.session"
TEST_SESSION = uuid.uuid4().hex[:12]
os.environ["ECOREADY_LABELS"] = f"{TEST_LABEL_KEY}={TEST_SESSION}"

ROOT = Path(__file__).resolve().parents[2]
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
    survey container a run also starts (app/run/survey.py), which may be gone a moment later.
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


def one_image_matrix(directory: Path, image: str, component: str = "m") -> Path:
    """A matrix file with one server component of `image` (profile smoke: `images` asks for
    that image alone, not the bench stage's sysbench image too)."""
    path = directory / f"{component}.toml"
    path.write_text(
        f'profile = "smoke"\n[[components]]\nid = "{component}"\ncategory = "server"\nprobe = "server"\n'
        f'image = "{image}"\n'
    )
    return path
