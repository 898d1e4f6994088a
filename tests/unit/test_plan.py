from __future__ import annotations

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.model import HostFacts, Stage
from ecoready.matrix.load import parse
from ecoready.plan.cells import EMULATION_FACTOR, make_plan

MATRIX = parse(
    'arches = ["amd64", "arm64"]\n'
    '[[components]]\nid="db"\ncategory="server"\nprobe="server"\nimage="x/db:1"\ntimeout = 30\n'
    '[[components]]\nid="old"\ncategory="server"\nprobe="server"\nimage="x/old:1"\narches=["amd64"]\n',
    "m.toml",
)
AMD = HostFacts("local", "amd64", emulated_arches=("arm64",), emulators={"arm64": "qemu 10"})


def test_cells_are_components_times_their_arches() -> None:
    plan = make_plan(MATRIX, [AMD])
    assert [c.id for c in plan.cells] == ["db/amd64", "db/arm64", "old/amd64"]
    assert [c.emulated for c in plan.cells] == [False, True, False]
    assert all(c.host == "local" and c.unrunnable is None for c in plan.cells)


def test_emulated_budgets_are_scaled_but_not_the_pull() -> None:
    native, emulated = make_plan(MATRIX, [AMD], only=["db"]).cells
    assert native.budgets[Stage.START] == 30
    assert emulated.budgets[Stage.START] == 30 * EMULATION_FACTOR
    assert emulated.budgets[Stage.IMAGE] == native.budgets[Stage.IMAGE]


def test_native_host_is_preferred_over_an_emulating_one() -> None:
    arm = HostFacts("graviton", "arm64")
    plan = make_plan(MATRIX, [AMD, arm], only=["db"])
    assert {c.arch: (c.host, c.emulated) for c in plan.cells} == {
        "amd64": ("local", False),
        "arm64": ("graviton", False),
    }


def test_no_host_for_an_arch_says_how_to_fix_it() -> None:
    bare = HostFacts("local", "amd64")
    arm_cell = make_plan(MATRIX, [bare], arches=["arm64"]).cells[0]
    assert arm_cell.unrunnable is not None
    assert arm_cell.unrunnable.detail.startswith("no host for arm64")
    assert arm_cell.unrunnable.blame == Blame(Cause.NO_HOST, "arm64", arm_cell.unrunnable.blame.fix)
    fix = arm_cell.unrunnable.blame.fix
    assert "tonistiigi/binfmt --install arm64" in fix and "add a native arm64 host under [[hosts]]" in fix
    assert "make" not in fix.split()  # nothing only a checkout of ecoready can follow
    # the remedy is the user's engine's: Docker Desktop's settings, Podman's packages
    desktop = make_plan(MATRIX, [HostFacts("local", "arm64", engine_kind="docker-desktop")], arches=["amd64"])
    fix = desktop.cells[0].unrunnable.blame.fix if desktop.cells[0].unrunnable else ""
    assert "Rosetta" in fix and "Docker Desktop" in fix
    podman = make_plan(MATRIX, [HostFacts("local", "amd64", engine_kind="podman")], arches=["arm64"])
    fix = podman.cells[0].unrunnable.blame.fix if podman.cells[0].unrunnable else ""
    assert "qemu-user-static" in fix and "Podman" in fix


def test_only_and_arch_filters() -> None:
    plan = make_plan(MATRIX, [AMD], only=["old"], arches=["arm64"])
    assert plan.cells == ()
