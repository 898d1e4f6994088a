"""The layer rules of docs/architecture.md, checked on the source and at run time.

Every import counts: at the top of a module, inside a function, or only for type checking.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Outer to inner: a subpackage may import its own modules and those of inner layers, never
# one of its own layer's other subpackages nor an outer one. `ecoready` itself (its
# __init__: the version) is innermost.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"__main__"}),  # `python -m ecoready`: the command line
    frozenset({"ui"}),
    frozenset({"lab", "run"}),
    frozenset({"probes"}),
    frozenset({"probe_api"}),
    frozenset({"registry", "packages", "plan", "judge", "stack"}),
    frozenset({"report", "engine", "matrix", "audit"}),
    frozenset({"domain"}),
    frozenset({""}),
)
# third-party packages and the only subpackages (or modules) that may import them
ONLY_IN: dict[str, tuple[str, ...]] = {
    "textual": ("ecoready.ui.tui",),
    "rich": ("ecoready.ui.tui", "ecoready.ui.progress"),
    "docker": ("ecoready.engine",),
    "requests": ("ecoready.engine.sdk",),
    "urllib3": ("ecoready.engine.sdk",),
    "httpx": ("ecoready.registry", "ecoready.packages", "ecoready.judge.webhook", "ecoready.lab"),
    "yaml": ("ecoready.stack.yaml_bounded", "ecoready.stack.yaml_build"),
}


def modules() -> dict[str, Path]:
    """Every module of the installed package by its name, from the folders it is made of."""
    found: dict[str, Path] = {}
    for folder, package in (("app", "ecoready"), ("probes", "ecoready.probes")):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found[name] = path
    return found


MODULES = modules()


def imports(name: str) -> Iterator[str]:
    """Every module `name` imports (absolute names), wherever the import stands."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield full if full in MODULES else base


def subpackage(name: str) -> str:
    """`ui` for ecoready.ui.tui.app, `probes` for ecoready.probes.shared.x, "" for ecoready."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(name: str) -> int:
    sub = subpackage(name)
    return next(i for i, members in enumerate(LAYERS) if sub in members)


def test_every_subpackage_has_a_layer() -> None:
    placed = set().union(*LAYERS)
    assert {subpackage(m) for m in MODULES} <= placed


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_inward(name: str) -> None:
    mine = subpackage(name)
    for target in imports(name):
        if not target.startswith("ecoready"):
            continue
        theirs = subpackage(target)
        if theirs == mine:
            continue
        assert layer(target) > layer(name), f"{name} imports {target}: {theirs or 'ecoready'} is not inside {mine}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_third_party_only_where_allowed(name: str) -> None:
    for target in imports(name):
        top = target.split(".")[0]
        if top in ONLY_IN:
            allowed = ONLY_IN[top]
            assert any(name == a or name.startswith(a + ".") for a in allowed), f"{name} imports {top}"


@pytest.mark.parametrize("name", sorted(m for m in MODULES if subpackage(m) == "probes"))
def test_probes_see_only_their_api(name: str) -> None:
    for target in imports(name):
        if target.startswith("ecoready"):
            assert target == "ecoready.probe_api" or target.startswith("ecoready.probes"), (
                f"{name} imports {target}: a probe uses ecoready.probe_api only"
            )


@pytest.mark.parametrize("name", sorted(m for m in MODULES if subpackage(m) == "report"))
def test_exporters_are_pure(name: str) -> None:
    for target in imports(name):
        top = target.split(".")[0]
        assert top not in ("docker", "httpx", "textual", "rich", "asyncio", "subprocess", "socket"), (
            f"{name} imports {top}"
        )


def cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), over every import."""
    graph = {name: sorted({t for t in imports(name) if t in MODULES and t != name}) for name in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for name in graph:
        if name not in index:
            visit(name)
    return found


def test_no_import_cycle() -> None:
    assert cycles() == []


def test_the_cycle_finder_finds_one(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = {"ecoready.a": ["ecoready.b"], "ecoready.b": ["ecoready.c"], "ecoready.c": ["ecoready.a"]}
    monkeypatch.setattr(sys.modules[__name__], "MODULES", dict.fromkeys(fake, Path()))
    monkeypatch.setattr(sys.modules[__name__], "imports", lambda name: iter(fake[name]))
    assert cycles() == [["ecoready.a", "ecoready.b", "ecoready.c"]]


def test_help_and_validate_stay_light() -> None:
    code = (
        "import sys; from ecoready.ui import cli\n"
        "for argv in (['--help'], ['validate', 'containers/lab.toml']):\n"
        "    try: cli.main(argv)\n"
        "    except SystemExit: pass\n"
        "heavy = sorted(m for m in ('textual', 'rich', 'docker', 'httpx', 'asyncio') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    heavy = result.stdout.strip().splitlines()[-1]
    assert heavy == "HEAVY=", f"--help/validate imported {heavy}"


def test_the_core_runs_without_the_ui() -> None:
    """Every module outside ui/ imports with Textual and Rich nowhere in sys.modules."""
    core = sorted(m for m in MODULES if subpackage(m) not in ("ui", "__main__"))
    code = (
        "import importlib, sys\n"
        f"for name in {core!r}: importlib.import_module(name)\n"
        "print('UI=' + ','.join(sorted(m for m in ('textual', 'rich') if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "UI="
