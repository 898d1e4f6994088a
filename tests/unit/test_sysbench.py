"""sysbench's pure parts against real sysbench 1.0.20 output (captured from the lab, see
tests/data/sysbench/README.md): parsing, statistics, command lines, capabilities."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.errors import SysbenchOutputError
from ecoready.domain.model import BenchRun
from ecoready.probe_api.bench import cpu_model_of, series_detail, user_sql
from ecoready.probe_api.sysbench import (
    CONFIG_FILE,
    ZIPFIAN_LUA,
    Capabilities,
    Connection,
    bench_run,
    capabilities,
    coefficient_of_variation,
    config_file,
    failed_silently,
    fatal_line,
    parse_run,
    parse_version,
    prepare_argv,
    run_argv,
    series,
    wrapper_stub,
    wrapper_stub_path,
    zipfian_lua,
)
from tests.support.zipf import gray_probabilities, zipf_probabilities

DATA = Path(__file__).resolve().parents[1] / "data" / "sysbench"
WORKLOAD_FILES = sorted(DATA.glob("oltp_*.txt"))
CAPS_1020 = Capabilities("1.0.20", native_zipfian=False, zipfian_exp_option=False)


def test_the_captured_outputs_are_there() -> None:
    names = {p.stem for p in WORKLOAD_FILES}
    assert {
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_update_index",
        "oltp_update_non_index",
    } <= names


def test_parse_read_write_final_statistics() -> None:
    out = parse_run((DATA / "oltp_read_write.txt").read_text())
    # the numbers as the file prints them
    assert out.transactions == 1698 and out.tps == 339.27
    assert out.queries == 33960 and out.qps == 6785.47
    assert out.errors == 0 and out.reconnects == 0
    assert out.seconds == 5.0041 and out.p95_ms == 14.73
    assert out.latency_avg_ms == 5.89 and out.latency_max_ms == 67.86
    assert out.threads == 2
    assert [i.at_s for i in out.intervals] == [1, 2, 3, 4, 5]
    first = out.intervals[0]
    assert (first.threads, first.tps, first.qps, first.p95_ms) == (2, 123.84, 2495.80, 52.89)
    assert first.err_per_s == 0 and first.reconn_per_s == 0


@pytest.mark.parametrize("path", WORKLOAD_FILES, ids=lambda p: p.stem)
def test_every_workload_parses_consistently(path: Path) -> None:
    out = parse_run(path.read_text())
    assert out.tps > 0 and out.qps >= out.tps and out.p95_ms > 0
    # the rates are the counts over the run's time (sysbench rounds to 2 decimals)
    assert out.tps == pytest.approx(out.transactions / out.seconds, rel=0.01)
    assert out.qps == pytest.approx(out.queries / out.seconds, rel=0.01)
    # the last interval may count fewer threads: some already finished
    assert out.intervals and out.intervals[0].threads == out.threads
    assert all(0 < i.threads <= out.threads for i in out.intervals)
    assert out.stalled_intervals == 0
    # interval throughput averages to roughly the final figure (the first second ramps up)
    assert statistics.fmean(i.tps for i in out.intervals) == pytest.approx(out.tps, rel=0.5)


def test_retried_transactions_are_counted_not_a_failure() -> None:
    out = parse_run((DATA / "deadlocks.txt").read_text())
    assert out.errors == 34 and out.tps == 182.84
    assert any(i.err_per_s > 0 for i in out.intervals)
    run = bench_run(out, "oltp_read_write", "uniform", 16, 1)
    assert run.ok  # deadlocks sysbench restarted are the workload meeting the server's isolation
    assert not replace(run, tps=0.0).ok  # a run that committed nothing failed


def test_a_failed_run_has_no_statistics_and_says_why() -> None:
    text = (DATA / "access_denied.txt").read_text()
    with pytest.raises(SysbenchOutputError, match="FATAL"):
        parse_run(text)
    assert fatal_line(text).startswith("FATAL: error 1045: Access denied")
    with pytest.raises(SysbenchOutputError):
        parse_run("")


def test_a_prepare_that_failed_with_exit_code_0_is_caught() -> None:
    # sysbench 1.0.20's prepare exits 0 when its CREATE TABLE is refused
    text = (DATA / "prepare_read_only_server.txt").read_text()
    assert failed_silently(text)
    assert fatal_line(text).startswith("FATAL: mysql_drv_query() returned error 1290 (The MariaDB server is running")
    assert not any(failed_silently(p.read_text()) for p in WORKLOAD_FILES)


def test_version_and_capabilities_of_1_0_20() -> None:
    caps = capabilities((DATA / "version-1.0.20.txt").read_text(), (DATA / "help-1.0.20.txt").read_text())
    assert caps == CAPS_1020
    assert caps.tool == "sysbench 1.0.20"


def test_a_sysbench_with_zipfian_is_detected() -> None:
    help_text = (DATA / "help-1.0.20.txt").read_text()
    newer = help_text.replace("{uniform,gaussian,special,pareto}", "{uniform,gaussian,special,pareto,zipfian}")
    newer += "  --rand-zipfian-exp=N shape parameter (exponent, theta) for the Zipfian distribution [0.8]\n"
    caps = capabilities("sysbench 1.1.0-df89d34 (using bundled LuaJIT 2.1.0-beta3)", newer)
    assert caps.native_zipfian and caps.zipfian_exp_option and caps.version == "1.1.0-df89d34"
    with pytest.raises(SysbenchOutputError):
        parse_version("sh: sysbench: not found")


# -- command lines ---------------------------------------------------------------------
CONN = Connection("server", 3306)


def _run(access: str, caps: Capabilities = CAPS_1020) -> list[str]:
    return run_argv(
        CONN,
        "oltp_read_only",
        access=access,
        threads=8,
        seconds=10,
        tables=4,
        table_size=10000,
        caps=caps,
        zipf_exp=0.8,
    )


def test_uniform_run_argv() -> None:
    argv = _run("uniform")
    assert argv[:2] == ["sysbench", "oltp_read_only"] and argv[-1] == "run"
    for option in (
        f"--config-file={CONFIG_FILE}",
        "--mysql-host=server",  # a name: TCP, never the socket
        "--mysql-port=3306",
        "--mysql-ignore-errors=1213,1020,1205",  # restarted, as sysbench does by default
        "--threads=8",
        "--time=10",
        "--tables=4",
        "--table_size=10000",
        "--rand-type=uniform",
        "--report-interval=1",
        "--percentile=95",
    ):
        assert option in argv


def test_zipfian_uses_the_lua_wrapper_without_native_support() -> None:
    argv = _run("zipfian")
    assert argv[1] == wrapper_stub_path("oltp_read_only")
    assert "--zipf_exp=0.8" in argv and "--rand-type=zipfian" not in argv


def test_zipfian_is_native_when_sysbench_has_it() -> None:
    argv = _run("zipfian", Capabilities("1.1.0", native_zipfian=True, zipfian_exp_option=True))
    assert argv[1] == "oltp_read_only"
    assert "--rand-type=zipfian" in argv and "--rand-zipfian-exp=0.8" in argv


def test_unknown_access_is_refused() -> None:
    with pytest.raises(ValueError, match="access"):
        _run("gaussian")


def test_the_password_is_never_on_a_command_line() -> None:
    password = "S3cretValueThatMustNotLeak0123"
    argvs = [_run("uniform"), _run("zipfian"), prepare_argv(CONN, 4, 10000, 4)]
    assert not any(password in arg or "--mysql-password" in arg for argv in argvs for arg in argv)
    # it goes into the config file sysbench reads
    assert config_file(password) == f"mysql-password={password}\n".encode()
    with pytest.raises(ValueError):
        config_file("two\nlines")


def test_user_sql_quotes_the_password() -> None:
    sql = user_sql("it's\\x").decode()
    assert "IDENTIFIED BY 'it\\'s\\\\x'" in sql
    assert "GRANT ALL PRIVILEGES ON ecoready_sb.*" in sql


def test_wrapper_stub_names_the_workload_and_loads_the_wrapper() -> None:
    stub = wrapper_stub("oltp_point_select").decode()
    assert stub == f'ECOREADY_WORKLOAD = "oltp_point_select"\ndofile("{ZIPFIAN_LUA}")\n'
    with pytest.raises(ValueError):
        wrapper_stub('x"); os.execute("id')


def test_the_wrapper_ships_with_the_package() -> None:
    lua = zipfian_lua().decode()
    assert "sysbench.rand.default = zipfian" in lua
    assert "zipf_exp" in lua and "dofile(script)" in lua


# -- statistics ----------------------------------------------------------------------
def _runs(tps: list[float], threads: int = 8) -> list[BenchRun]:
    return [
        BenchRun("oltp_read_only", "uniform", threads, i + 1, t, t * 14, 10.0 + i, 0, 0, 10.0)
        for i, t in enumerate(tps)
    ]


def test_series_medians_and_cv_follow_the_runs() -> None:
    s = series(_runs([1000.0, 1100.0, 900.0]))
    assert s.median_tps == 1000.0 and s.median_qps == 14000.0 and s.median_p95_ms == 11.0
    # sample standard deviation 100 over mean 1000
    assert s.cv == pytest.approx(0.1)
    assert [r.repeat for r in s.runs] == [1, 2, 3]


def test_single_run_series() -> None:
    s = series(_runs([500.0]))
    assert s.median_tps == 500.0 and s.cv == 0.0


def test_series_refuses_mixed_points_and_no_runs() -> None:
    with pytest.raises(ValueError):
        series([*_runs([1.0]), *_runs([2.0], threads=16)])
    with pytest.raises(ValueError):
        series([])


def test_cv_edge_cases() -> None:
    assert coefficient_of_variation([]) == 0.0
    assert coefficient_of_variation([0.0, 0.0]) == 0.0
    assert coefficient_of_variation([2.0, 4.0]) == pytest.approx(statistics.stdev([2, 4]) / 3)


def test_series_detail_is_one_readable_line() -> None:
    detail = series_detail([series(_runs([1000.0, 1100.0, 900.0])), series(_runs([50.0], threads=1))])
    assert detail == "8 thr 1,000 tps p95 11 ms cv 10.0%; 1 thr 50 tps p95 10 ms"


# -- the Zipf law ---------------------------------------------------------------------
def test_zipf_law_probabilities() -> None:
    probs = zipf_probabilities(4, 1.0 - 1e-12, 4)  # ~harmonic: 1, 1/2, 1/3, 1/4 over 25/12
    assert probs == pytest.approx([12 / 25, 6 / 25, 4 / 25, 3 / 25], rel=1e-6)


def test_gray_method_is_exact_for_the_two_hottest_ranks() -> None:
    zipf, gray = zipf_probabilities(1000, 0.8, 10), gray_probabilities(1000, 0.8, 10)
    assert gray[:2] == pytest.approx(zipf[:2], rel=1e-12)
    # later ranks: close, and the over-weight fades with the rank
    ratios = [g / z for g, z in zip(gray[2:], zipf[2:], strict=True)]
    assert all(1.0 < r < 1.2 for r in ratios) and ratios == sorted(ratios, reverse=True)
    assert sum(gray_probabilities(50, 0.8, 50)) == pytest.approx(1.0, abs=1e-9)


def test_cpu_model_from_cpuinfo() -> None:
    assert cpu_model_of("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n") == "AMD EPYC 7B13"
    graviton = "processor\t: 0\nBogoMIPS\t: 243.75\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"
    assert cpu_model_of(graviton) == "CPU implementer 0x41 part 0xd0c"
    assert cpu_model_of("") == ""


def test_bench_sections_survive_a_report_round_trip() -> None:
    import json

    from ecoready.report import json as json_report
    from ecoready.report.load import parse_report
    from tests.support.reports_sample import bench_report

    report = bench_report()
    again = parse_report(json_report.render(report))
    for cell_id, cell in report.cells.items():
        assert again.cells[cell_id].bench == cell.bench
    # a report written before cpusets/method existed still loads
    data = json.loads(json_report.render(report))
    for cell in data["cells"]:
        del cell["bench"]["cpusets"], cell["bench"]["method"]
    old = parse_report(json.dumps(data))
    assert all(c.bench is not None and c.bench.cpusets == {} and c.bench.method == "" for c in old.cells.values())
