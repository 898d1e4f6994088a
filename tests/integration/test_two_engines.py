"""One run over two real Docker engines: this machine's and a second dockerd of the test's
own (tests/support/second_engine.py), reached over tcp:// with TLS client certificates and
over ssh:// through a loopback sshd. Cells go to the host their plan names, every cell
reports its host, and killing the second engine mid-run fails only its cells."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.events import BenchReported
from ecoready.domain.model import BenchResult, BenchRun, BenchSeries
from ecoready.domain.state import reduce
from ecoready.report.cost import compare
from ecoready.report.load import report_from_dict
from tests.support.cli import docker_labelled, ecoready
from tests.support.runs import Run
from tests.support.second_engine import SecondEngine

pytestmark = pytest.mark.docker  # and `alone`: it uses the second engine (tests/conftest.py)

MARIADB = "127.0.0.1:5000/lab/mariadb:10.11"
MARIADB_118 = "127.0.0.1:5000/lab/mariadb:11.8"
EMPTY: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}


def component(cid: str, image: str) -> str:
    return f'[[components]]\nid = "{cid}"\ncategory = "server"\nprobe = "server"\nimage = "{image}"\n'


def host(name: str, *, docker: str = "", arches: tuple[str, ...] = (), extra: str = "") -> str:
    lines = ["[[hosts]]", f'name = "{name}"']
    if docker:
        lines.append(f'docker = "{docker}"')
    if arches:
        lines.append("arches = [" + ", ".join(f'"{a}"' for a in arches) + "]")
    return "\n".join(lines) + "\n" + extra + "\n"


def write(path: Path, *parts: str) -> Path:
    path.write_text('profile = "smoke"\n' + "".join(parts))
    return path


def run_report(matrix: Path, out: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), timeout=900, env=env)
    report: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    return result.returncode, report, result.stderr


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in report["cells"]}


def assert_nothing_left(engine: SecondEngine, run_id: str) -> None:
    assert engine.labelled(f"ecoready.run={run_id}") == EMPTY, "left on the second engine"
    assert docker_labelled(f"ecoready.run={run_id}") == EMPTY, "left on the local engine"


@pytest.fixture(scope="module")
def tls_run(lab: Path, second_engine: SecondEngine, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """amd64 natively on the local engine, arm64 emulated on the second one over TLS."""
    second_engine.ensure_running()
    folder = tmp_path_factory.mktemp("tls")
    matrix = write(
        folder / "m.toml",
        host("local", arches=("amd64",), extra="price_per_hour = 0.192\ncpu_ghz = 3.1"),
        host(
            "second",
            docker=second_engine.tls_url,
            arches=("arm64",),
            extra=f'tls_dir = "{second_engine.tls_dir}"\nprice_per_hour = 0.1632\ncpu_ghz = 2.6',
        ),
        component("mariadb-10.11", MARIADB),
    )
    code, report, stderr = run_report(matrix, folder / "r.json")
    assert code == 0, stderr[-3000:]
    assert_nothing_left(second_engine, report["run_id"])
    return report


def test_cells_spread_over_both_engines_and_report_their_host(tls_run: dict[str, Any]) -> None:
    cells = by_id(tls_run)
    assert cells["mariadb-10.11/amd64"]["host"] == "local" and not cells["mariadb-10.11/amd64"]["emulated"]
    assert cells["mariadb-10.11/arm64"]["host"] == "second" and cells["mariadb-10.11/arm64"]["emulated"]
    assert {c["status"] for c in cells.values()} == {"ready"}
    hosts = {h["name"]: h for h in tls_run["hosts"]}
    assert hosts["second"]["docker"].startswith("tcp://127.0.0.1:")
    assert hosts["second"]["serves"] == ["arm64"] and hosts["local"]["serves"] == ["amd64"]
    assert hosts["second"]["emulated_arches"] == ["arm64"] and hosts["second"]["error"] == ""


def test_the_arm64_image_was_pulled_by_the_second_engine(tls_run: dict[str, Any], second_engine: SecondEngine) -> None:
    arm = by_id(tls_run)["mariadb-10.11/arm64"]["image"]
    pulled = second_engine.docker("image", "inspect", "--format", "{{.Architecture}}", arm["image_id"])
    assert pulled.stdout.strip() == "arm64"


def test_platform_fitness_of_each_host_and_arch(tls_run: dict[str, Any]) -> None:
    platforms = {(p["host"], p["arch"]): p for p in tls_run["platforms"]}
    assert set(platforms) == {("local", "amd64"), ("second", "arm64")}
    local, second = platforms[("local", "amd64")], platforms[("second", "arm64")]
    assert local["machine"] == "x86_64" and not local["emulated"] and local["error"] == ""
    assert local["x86_level"].startswith("x86-64") and local["page_size"] == 4096
    assert second["machine"] == "aarch64" and second["emulated"]
    assert [h["code"] for h in second["hazards"]][:1] == ["emulated"]
    assert set(second["features"]) | set(second["missing"]) == {"lse", "crc32", "pmull", "sha1", "sha2"}


def bench(tps: float, *, emulated: bool) -> BenchResult:
    runs = tuple(BenchRun("oltp_point_select", "uniform", 8, r, tps, tps, 1.0, 0, 0, 10.0) for r in (1, 2, 3))
    series = BenchSeries("oltp_point_select", "uniform", 8, runs, tps, tps, 1.0, 0.0)
    return BenchResult("sysbench 1.0.20", "", "server", emulated, "quick", series=(series,))


def test_emulated_arm64_cells_stay_out_of_the_cost_comparison(tls_run: dict[str, Any]) -> None:
    """The bench stage is not on this branch: the numbers are constructed, the report
    (hosts, prices, which cell ran where and how) is the real two-engine run's."""
    report = report_from_dict(tls_run)
    report = reduce(report, BenchReported("mariadb-10.11/amd64", bench(10000.0, emulated=False)))
    report = reduce(report, BenchReported("mariadb-10.11/arm64", bench(900.0, emulated=True)))
    result = compare(report)
    assert result.tables == ()
    assert "mariadb-10.11/arm64: ran emulated, so its numbers are not performance" in result.absent


def test_vice_versa_over_ssh(lab: Path, second_engine: SecondEngine, tmp_path: Path, no_leaks: None) -> None:
    """amd64 natively on the second engine through sshd, arm64 emulated locally."""
    second_engine.ensure_running()
    matrix = write(
        tmp_path / "m.toml",
        host("local", arches=("arm64",)),
        host("second", docker=second_engine.ssh_url(), arches=("amd64",)),
        component("mariadb-10.11", MARIADB),
    )
    code, report, stderr = run_report(matrix, tmp_path / "r.json", env=second_engine.ssh_env())
    assert code == 0, stderr[-3000:]
    cells = by_id(report)
    assert (cells["mariadb-10.11/amd64"]["host"], cells["mariadb-10.11/amd64"]["emulated"]) == ("second", False)
    assert (cells["mariadb-10.11/arm64"]["host"], cells["mariadb-10.11/arm64"]["emulated"]) == ("local", True)
    assert {h["name"]: h["docker"] for h in report["hosts"]}["second"].startswith("ssh://")
    platforms = {(p["host"], p["arch"]): p for p in report["platforms"]}
    assert platforms[("second", "amd64")]["machine"] == "x86_64" and not platforms[("second", "amd64")]["emulated"]
    assert platforms[("local", "arm64")]["emulated"]
    assert_nothing_left(second_engine, report["run_id"])


def test_killing_the_second_engine_mid_run_fails_only_its_cells(
    lab: Path, second_engine: SecondEngine, tmp_path: Path, no_leaks: None
) -> None:
    second_engine.ensure_running()
    matrix = write(
        tmp_path / "m.toml",
        host("local", arches=("amd64",)),
        # one cell at a time there: the second one is still waiting when the engine dies
        host(
            "second",
            docker=second_engine.tls_url,
            arches=("arm64",),
            extra=f'tls_dir = "{second_engine.tls_dir}"\nconcurrency = 1',
        ),
        component("mariadb-10.11", MARIADB),
        component("mariadb-11.8", MARIADB_118),
    )
    run = Run(matrix, tmp_path)
    try:
        started = run.wait_for(
            lambda e: e["event"] == "StageStarted" and e["stage"] == "start" and e["cell_id"].endswith("/arm64"),
            timeout=600,
            what="an arm64 cell starting on the second engine",
        )
        deadline = time.monotonic() + 120
        while not second_engine.labelled(run.owner)["containers"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert second_engine.labelled(run.owner)["containers"], "the second engine should run a container by now"
        second_engine.kill()
        code, report = run.finish(timeout=600)
    finally:
        if run.proc.poll() is None:
            run.proc.send_signal(signal.SIGTERM)
            run.proc.wait(timeout=120)
        second_engine.ensure_running()  # it sweeps nothing of ours: the run's leftovers are checked below
    assert code == 3, report["_stderr"][-3000:]
    cells = by_id(report)
    assert cells["mariadb-10.11/amd64"]["status"] == "ready", cells["mariadb-10.11/amd64"]
    assert cells["mariadb-11.8/amd64"]["status"] == "ready", cells["mariadb-11.8/amd64"]
    for arm in ("mariadb-10.11/arm64", "mariadb-11.8/arm64"):
        assert cells[arm]["host"] == "second"
        assert cells[arm]["status"] == "error" and "docker daemon unavailable" in cells[arm]["detail"], cells[arm]
    assert started["cell_id"] in cells
    second = {h["name"]: h for h in report["hosts"]}["second"]
    assert second["error"].startswith("lost mid-run")
    assert any("host second was lost mid-run" in note["text"] for note in report["notes"])


def test_a_host_that_cannot_be_reached_fails_only_its_cells(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = write(
        tmp_path / "m.toml",
        host("local", arches=("amd64",)),
        host("gone", docker=f"unix://{tmp_path}/no-such.sock", arches=("arm64",)),
        component("mariadb-10.11", MARIADB),
    )
    code, report, stderr = run_report(matrix, tmp_path / "r.json")
    assert code == 3, stderr[-3000:]
    cells = by_id(report)
    assert cells["mariadb-10.11/amd64"]["status"] == "ready"
    arm = cells["mariadb-10.11/arm64"]
    assert arm["status"] == "error" and arm["host"] == "gone"
    assert "host gone: unreachable" in arm["detail"] and "No such file or directory" in arm["detail"]
    assert any(n["text"].startswith("host gone could not be reached") for n in report["notes"])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never says a word (no SSH banner, no
    TLS handshake): what a wedged host looks like."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


@pytest.mark.parametrize("transport", ["ssh", "tls"])
def test_connecting_has_a_deadline_on_every_transport(
    silent_port: int, second_engine: SecondEngine, tmp_path: Path, transport: str
) -> None:
    if transport == "ssh":
        url, extra = f"ssh://root@127.0.0.1:{silent_port}", ""
    else:
        url, extra = f"tcp://127.0.0.1:{silent_port}", f'tls_dir = "{second_engine.tls_dir}"'
    matrix = write(tmp_path / "m.toml", host("wedged", docker=url, extra=extra), component("m", MARIADB))
    # the subprocess timeout fails the test if the hung attempt kept ecoready from exiting
    result = ecoready("run", "--headless", "--matrix", str(matrix), timeout=120, env=second_engine.ssh_env())
    assert result.returncode == 3, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "did not answer within" in lines[0], result.stderr
