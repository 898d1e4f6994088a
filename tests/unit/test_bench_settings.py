"""Profiles, the `[sysbench]` table, and what the plan makes of them."""

from __future__ import annotations

import textwrap

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import HostFacts, Profile, Stage
from ecoready.matrix.bench_settings import (
    DEFAULT_IMAGE,
    PROFILE_DEFAULTS,
    WORKLOADS,
    BenchOverrides,
    SysbenchConfig,
    estimate_seconds,
    settings_for,
)
from ecoready.matrix.load import parse
from ecoready.plan.cells import EMULATION_FACTOR, bench_budget, make_plan
from ecoready.probe_api.context import ProbeContext
from tests.support.fake_host import rig

SERVER = '[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "x/db:1"\n'
AMD = HostFacts("local", "amd64", emulated_arches=("arm64",), cpus=2)


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigError) as info:
        parse(text, "m.toml")
    return [(p.line, p.col, p.message) for p in info.value.problems]


# -- profiles ---------------------------------------------------------------------------
def test_smoke_runs_no_bench() -> None:
    assert settings_for(Profile.SMOKE, SysbenchConfig(), emulated=False) is None


def test_quick_is_three_workloads_two_thread_counts_uniform() -> None:
    quick = settings_for(Profile.QUICK, SysbenchConfig(), emulated=False)
    assert quick is not None
    assert len(quick.workloads) >= 3 and len(quick.threads) == 2 and quick.access == ("uniform",)
    assert quick.time == 10 and quick.repeats == 1 and quick.warmup > 0 and not quick.reduced
    # "a few minutes per server at most" natively
    assert estimate_seconds(quick) < 180


def test_full_is_the_seeds_method() -> None:
    full = settings_for(Profile.FULL, SysbenchConfig(), emulated=False)
    assert full is not None
    assert full.workloads == WORKLOADS and full.access == ("uniform", "zipfian")
    assert max(full.threads) == 256 and full.repeats == 3 and full.warmup >= 30


def test_overrides_apply_common_then_profile_table() -> None:
    config = SysbenchConfig(
        image="reg/sb:1",
        common=BenchOverrides(time=20, threads=(1, 2), zipf_exp=0.9),
        quick=BenchOverrides(time=7),
        full=BenchOverrides(repeats=5),
    )
    quick = settings_for(Profile.QUICK, config, emulated=False)
    full = settings_for(Profile.FULL, config, emulated=False)
    assert quick is not None and full is not None
    assert (quick.image, quick.time, quick.threads, quick.zipf_exp) == ("reg/sb:1", 7, (1, 2), 0.9)
    assert (full.time, full.repeats, full.threads) == (20, 5, (1, 2))
    assert full.workloads == PROFILE_DEFAULTS[Profile.FULL].workloads  # untouched knobs keep the profile's


def test_emulated_cells_get_a_reduced_bench() -> None:
    native = settings_for(Profile.FULL, SysbenchConfig(), emulated=False)
    reduced = settings_for(Profile.FULL, SysbenchConfig(), emulated=True)
    assert native is not None and reduced is not None
    assert reduced.reduced and not native.reduced
    # same workloads and access patterns (the path is proven for each), far less of each
    assert reduced.workloads == native.workloads and reduced.access == native.access
    assert reduced.threads == native.threads[:1] and reduced.repeats == 1 and reduced.warmup == 0
    assert reduced.time < native.time and reduced.points < native.points
    assert "not performance" in reduced.describe()
    custom = settings_for(Profile.QUICK, SysbenchConfig(emulated=BenchOverrides(time=3, threads=(2,))), emulated=True)
    assert custom is not None and (custom.time, custom.threads) == (3, (2,))


def test_estimate_scales_only_the_cpu_bound_part_with_emulation() -> None:
    quick = settings_for(Profile.QUICK, SysbenchConfig(), emulated=False)
    assert quick is not None
    measured = quick.points * quick.time + len(quick.workloads) * quick.warmup
    native, emulated = estimate_seconds(quick, 1.0), estimate_seconds(quick, 6.0)
    assert native > measured
    assert emulated - measured == pytest.approx((native - measured) * 6.0)


# -- [sysbench] in matrix.toml -----------------------------------------------------------
def test_sysbench_table_parses() -> None:
    matrix = parse(
        textwrap.dedent("""\
            [sysbench]
            image = "127.0.0.1:5000/lab/mariadb:10.11"
            threads = [1, 4]
            zipf_exp = 0.9
            [sysbench.full]
            workloads = ["oltp_point_select", "oltp_read_only"]
            access = ["uniform", "zipfian"]
            time = 5
            warmup = 0
            repeats = 2
            tables = 2
            table_size = 1000
            [sysbench.emulated]
            time = 2
        """)
        + SERVER,
        "m.toml",
    )
    sb = matrix.sysbench
    assert sb.image == "127.0.0.1:5000/lab/mariadb:10.11"
    assert sb.common == BenchOverrides(threads=(1, 4), zipf_exp=0.9)
    assert sb.full.workloads == ("oltp_point_select", "oltp_read_only") and sb.full.repeats == 2
    assert sb.emulated.time == 2 and sb.quick == BenchOverrides()


def test_no_sysbench_table_means_defaults() -> None:
    assert parse(SERVER, "m.toml").sysbench == SysbenchConfig()
    assert SysbenchConfig().image == DEFAULT_IMAGE


@pytest.mark.parametrize(
    ("table", "line", "col", "words"),
    [
        ("[sysbench]\nthread = [1]\n", 2, 1, "unknown key 'sysbench.thread' (did you mean 'threads'?)"),
        ('[sysbench]\nworkloads = ["oltp_point_selct"]\n', 2, 14, "did you mean 'oltp_point_select'?"),
        ('[sysbench]\naccess = ["uniform", "pareto"]\n', 2, 22, "unknown entry 'pareto'"),
        ("[sysbench]\nthreads = [1, 0]\n", 2, 15, "entries must be whole numbers 1..1024"),
        ("[sysbench]\nthreads = [4, 4]\n", 2, 15, "lists 4 twice"),
        ("[sysbench]\nthreads = []\n", 2, 11, "at least one thread count"),
        ("[sysbench]\nzipf_exp = 1.0\n", 2, 12, "must be between 0 and 1 (exclusive)"),
        ('[sysbench]\ntime = "10"\n', 2, 8, "must be an integer"),
        ("[sysbench]\nrepeats = 0\n", 2, 11, "must be between 1 and 100"),
        ("[sysbench.quick]\nwarmup = -1\n", 2, 10, "'sysbench.quick.warmup' must be between 0"),
        ("[sysbench.fulll]\ntime = 1\n", 1, 1, "did you mean 'full'?"),
        ('[sysbench.full]\nimage = "x:1"\n', 2, 1, "unknown key 'sysbench.full.image'"),
        ('[sysbench]\nimage = "has space:1"\n', 2, 9, "must be an image reference"),
    ],
)
def test_sysbench_problems_name_file_line_col(table: str, line: int, col: int, words: str) -> None:
    found = problems(table + SERVER)
    assert any(words in message for _, _, message in found), found
    where = [(ln, c) for ln, c, message in found if words in message]
    assert where[0] == (line, col), found


# -- the plan -------------------------------------------------------------------------
def test_plan_adds_a_bench_stage_unless_smoke() -> None:
    matrix = parse(SERVER, "m.toml")
    smoke = make_plan(matrix, [AMD], profile=Profile.SMOKE)
    assert all(Stage.BENCH not in c.stages and c.bench is None for c in smoke.cells)
    quick = make_plan(matrix, [AMD], profile=Profile.QUICK)
    native, emulated = quick.cells
    assert native.stages[-1] is Stage.BENCH and emulated.stages[-1] is Stage.BENCH
    assert native.bench is not None and emulated.bench is not None
    assert not native.bench.reduced and emulated.bench.reduced
    # every bench runs alone on its host, in every profile (issue 42: quick benches at once
    # on a 2-core machine read 1,565 tps where the same image alone read 7,171)
    assert native.exclusive == frozenset({Stage.BENCH}) and emulated.exclusive == frozenset({Stage.BENCH})


def test_full_bench_stages_are_marked_exclusive() -> None:
    plan = make_plan(parse(SERVER, "m.toml"), [AMD], profile=Profile.FULL)
    assert all(c.exclusive == frozenset({Stage.BENCH}) for c in plan.cells)


def test_a_row_that_only_tests_publishing_gets_no_bench() -> None:
    matrix = parse(SERVER.replace('probe = "server"', 'probe = "server"\nbench = false', 1), "m.toml")
    plan = make_plan(matrix, [AMD], profile=Profile.QUICK)
    assert all(Stage.BENCH not in c.stages and c.bench is None and not c.exclusive for c in plan.cells)


def test_bench_budget_follows_the_settings() -> None:
    plan = make_plan(parse(SERVER, "m.toml"), [AMD], profile=Profile.FULL)
    native, emulated = plan.cells
    assert native.bench is not None and emulated.bench is not None
    assert native.budgets[Stage.BENCH] == bench_budget(native.bench, emulated=False)
    assert native.budgets[Stage.BENCH] > estimate_seconds(native.bench)
    assert emulated.budgets[Stage.BENCH] > estimate_seconds(emulated.bench, EMULATION_FACTOR)


# -- CPU pinning ------------------------------------------------------------------------
def _ctx(cpus: int, profile: Profile = Profile.QUICK) -> ProbeContext:
    plan = make_plan(parse(SERVER, "m.toml"), [AMD], profile=profile, arches=["amd64"])
    facts = HostFacts("local", "amd64", cpus=cpus)
    run = rig().run
    run.hosts = {"local": facts}
    return ProbeContext(plan.cells[0], run)


@pytest.mark.parametrize(
    ("cpus", "server", "client"),
    [(1, None, None), (2, "0", "1"), (3, "0-1", "2"), (8, "0-3", "4-7"), (64, "0-31", "32-63")],
)
def test_server_and_sysbench_get_disjoint_cpus(cpus: int, server: str | None, client: str | None) -> None:
    ctx = _ctx(cpus)
    assert (ctx.cpuset("server"), ctx.cpuset("client")) == (server, client)


def test_no_pinning_without_a_bench() -> None:
    assert _ctx(8, Profile.SMOKE).cpuset("server") is None


@pytest.mark.parametrize(
    "table",
    [
        "sysbench = 5\n",
        "[sysbench]\nquick = 3\n",
        "[sysbench]\nworkloads = [1, [2]]\n",
        "[sysbench]\nthreads = [true, 1.5, -3]\n",
        "[sysbench]\nzipf_exp = nan\n",
        "[sysbench]\nzipf_exp = inf\n",
        "[sysbench]\ntable_size = 99999999999999\n",
        "[sysbench]\nimage = 7\n",
        "[sysbench.smoke]\ntime = 1\n",
    ],
)
def test_odd_sysbench_values_are_problems_not_crashes(table: str) -> None:
    assert problems(table + SERVER)


def test_the_sysbench_image_is_derived_unless_named_and_images_checks_it() -> None:
    from ecoready.registry.availability import bench_arches, pairs

    rows = (
        '[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "mysql:8.4"\narches = ["arm64"]\n'
        '[[components]]\nid = "sh"\ncategory = "shell"\nprobe = "shell"\nimage = "mysql:8.4"\nbackend = "db"\n'
        'options = { client = "mysql" }\n'
    )
    derived = parse('[sysbench]\nbase = "debian:bookworm-slim"\n' + rows, "m.toml")
    assert derived.sysbench.image == "" and derived.sysbench.base == "debian:bookworm-slim"
    assert derived.sysbench_image() == ("debian:bookworm-slim", "sysbench base (derived on first use)")
    assert bench_arches(derived, pairs(derived)) == ["arm64"]  # only where a benchmarked row runs
    assert bench_arches(derived, pairs(derived, only=["sh"])) == []
    named = parse('[sysbench]\nimage = "r.example/sysbench:1"\n' + rows, "m.toml")
    assert named.sysbench_image() == ("r.example/sysbench:1", "sysbench (tool image)")
    assert parse('profile = "smoke"\n' + rows, "m.toml").sysbench_image() is None  # no bench, no tool image
    assert parse(rows, "m.toml").sysbench.base.startswith("debian:")
    settings = settings_for(Profile.QUICK, derived.sysbench, emulated=False)
    assert settings is not None and settings.base == "debian:bookworm-slim"
    assert settings.tool_image == "sysbench on debian:bookworm-slim"


def test_a_derived_sysbench_image_has_time_to_be_made_in_the_bench_budget() -> None:
    from dataclasses import replace

    from ecoready.matrix.bench_settings import DERIVE_S

    derived = settings_for(Profile.QUICK, SysbenchConfig(), emulated=False)
    assert derived is not None and derived.image == ""
    named = replace(derived, image="r.example/sysbench:1")
    for emulated, factor in ((False, 1.0), (True, EMULATION_FACTOR)):
        assert bench_budget(derived, emulated) - bench_budget(named, emulated) == DERIVE_S * factor
