"""The layer rules of docs/architecture.md, checked on the source and at run time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def sources(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", sources("app", "probes"), ids=lambda p: str(p.relative_to(ROOT)))
def test_layer_rules(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    mods = imported_modules(path)
    if not (rel.startswith("app/tui/") or rel == "app/cli.py"):
        assert not mods & {"textual", "rich"}, f"{rel} imports the UI"
    if rel != "app/docker_host.py":
        assert "docker" not in mods, f"{rel} imports docker: only app/docker_host.py may"
    if rel.startswith("app/report/"):
        assert not mods & {"docker", "httpx"}, f"{rel}: exporters are pure"
    if rel.startswith("probes/"):
        assert not mods & {"docker", "textual", "rich", "httpx"}, f"{rel}: probes only use their ProbeContext"


def test_help_and_validate_stay_light() -> None:
    code = (
        "import sys; from app import cli\n"
        "for argv in (['--help'], ['validate', 'containers/lab.toml']):\n"
        "    try: cli.main(argv)\n"
        "    except SystemExit: pass\n"
        "heavy = sorted(m for m in ('textual', 'rich', 'docker', 'httpx') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    heavy = result.stdout.strip().splitlines()[-1]
    assert heavy == "HEAVY=", f"--help/validate imported {heavy}"
