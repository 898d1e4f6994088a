"""`ecoready images` and the image stage against real registries: the lab's deliberate gaps
get the right verdict on each arch, a registry that does not answer is `error` with its
reason (never `missing`), Docker Hub's rate-limit headers reach the report, and the gaps
are built as documented (into a registry of the test's own)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ecoready.domain.errors import RegistryError
from ecoready.domain.images import Verdict
from ecoready.engine.docker_host import DockerHost
from ecoready.lab.gaps import GAPS, publish_gaps
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.client import RegistryClient
from ecoready.registry.image_store import ImageStore
from tests.support.cli import ecoready, one_image_matrix
from tests.support.registry_fronts import RateLimitedFront
from tests.support.registry_proxy import registry_proxy
from tests.support.registry_servers import Registry, push_tiny_image, start_registry

pytestmark = pytest.mark.docker

# (component, arch) -> (verdict, how it was found / why not): what the lab's gaps are for.
EXPECTED = {
    ("mariadb-10.11", "amd64"): ("available", "index"),
    ("mariadb-10.11", "arm64"): ("available", "index"),
    ("gap-amd64-only", "amd64"): ("available", "index"),
    ("gap-amd64-only", "arm64"): ("missing", "the index publishes amd64 only; no 1-aarch64 or 1-arm64 tag"),
    ("gap-arm64-only", "amd64"): ("missing", "a single-arch image for arm64; no 1-amd64 or 1-x86_64 tag"),
    ("gap-arm64-only", "arm64"): ("available", "single manifest"),
    ("gap-mislabelled", "amd64"): ("available", "index"),
    ("gap-mislabelled", "arm64"): ("mislabelled", "the index says arm64, the image's config says amd64"),
    ("gap-attestation", "amd64"): ("available", "index"),
    ("gap-attestation", "arm64"): ("available", "index"),
    ("gap-suffix-only", "amd64"): ("available", "index"),
    ("gap-suffix-only", "arm64"): ("available", "tag 1-aarch64"),
    # the index and the config agree: only the build audit tells (tests/integration/test_lab_audit.py)
    ("gap-binary-mislabelled", "amd64"): ("available", "index"),
    ("gap-binary-mislabelled", "arm64"): ("available", "index"),
    # two servers under one tag: both published, only parity tells (tests/integration/test_lab_matrix.py)
    ("gap-parity", "amd64"): ("available", "index"),
    ("gap-parity", "arm64"): ("available", "index"),
}


def images_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    result = ecoready("images", *args, "--json", "-", env=env)
    return result.returncode, json.loads(result.stdout), result.stderr  # stdout is JSON and only JSON


def test_every_gap_gets_its_verdict_on_each_arch(lab_gaps: Path, tmp_path: Path) -> None:
    code, report, _ = images_json("--matrix", str(lab_gaps), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 1  # some missing or mislabelled
    found = {
        (c["component"], c["arch"]): (c["verdict"], c["found_as"] if c["verdict"] == "available" else c["detail"])
        for c in report["checks"]
    }
    # every other lab image is a real multi-arch index: available on both arches
    expected = {key: EXPECTED.get(key, ("available", "index")) for key in found}
    assert set(EXPECTED) <= set(found)
    assert found == expected
    checks = {(c["component"], c["arch"]): c for c in report["checks"]}
    suffixed = checks[("gap-suffix-only", "arm64")]
    assert suffixed["detail"] == "available as 1-aarch64"
    assert suffixed["pull_reference"] == f"127.0.0.1:5000/lab/gap-suffix-only@{suffixed['digest']}"
    assert suffixed["digest"] == checks[("mariadb-10.11", "arm64")]["digest"]  # the same image, another tag
    assert checks[("gap-attestation", "arm64")]["arches"] == ["amd64", "arm64"]  # unknown/unknown skipped
    mislabelled = checks[("gap-mislabelled", "arm64")]
    assert mislabelled["digest"] and mislabelled["digest"] != checks[("gap-mislabelled", "amd64")]["digest"]
    verdicts: dict[str, int] = {}
    for verdict, _how in expected.values():
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    assert report["summary"] == verdicts and verdicts["missing"] == 2 and verdicts["mislabelled"] == 1


def test_requests_stay_within_two_per_reference_cold_and_warm(lab_gaps: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    counts = []
    for _ in range(2):  # cold cache, then warm
        _, report, _ = images_json("--matrix", str(lab_gaps), env=env)
        (lab,) = report["registries"]
        assert lab["registry"] == "127.0.0.1:5000" and lab["error"] == "" and lab["rate_limit"] is None
        counts.append(lab["requests"])
    references = len(report["checks"])  # (component, arch) pairs
    assert counts[0] <= 2 * references
    assert counts[1] < counts[0]
    assert counts[1] <= references  # a HEAD per tag, plus the suffix probes of missing arches


def test_the_table_goes_to_stdout_and_json_to_a_file(lab_gaps: Path, tmp_path: Path) -> None:
    out = tmp_path / "images.json"
    result = ecoready("images", "--matrix", str(lab_gaps), "--only", "gap-mislabelled", "--json", str(out))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["component", "arch", "verdict"]
    assert any(line.split()[:3] == ["gap-mislabelled", "arm64", "mislabelled"] for line in lines)
    assert lines[-1].startswith("2 checks: 1 available, 1 mislabelled")
    assert [c["component"] for c in json.loads(out.read_text())["checks"]] == ["gap-mislabelled"] * 2


def test_all_available_exits_0(lab_gaps: Path) -> None:
    code, report, _ = images_json("--matrix", str(lab_gaps), "--only", "mariadb-10.11,gap-attestation")
    assert code == 0 and report["summary"] == {"available": 4}


def test_a_registry_that_does_not_answer_is_an_error_with_its_reason(tmp_path: Path) -> None:
    matrix = one_image_matrix(tmp_path, "127.0.0.1:9/lab/mariadb:10.11")
    code, report, stderr = images_json("--matrix", str(matrix))
    assert code == 3
    assert {c["verdict"] for c in report["checks"]} == {"error"}
    assert all("127.0.0.1:9: unreachable (connection refused)" in c["detail"] for c in report["checks"])
    (far,) = report["registries"]
    assert far["requests"] == 1  # the second arch did not knock again on a registry that just failed
    notes = [line for line in stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and notes[0].endswith(": 2 images not checked")
    assert notes[0].startswith("ecoready: note: registry 127.0.0.1:9: unreachable (connection refused)")


async def test_a_registry_that_never_answers_times_out_as_an_error() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        host = f"127.0.0.1:{silent.getsockname()[1]}"
        timeout = httpx.Timeout(connect=2.0, read=0.5, write=2.0, pool=2.0)
        async with RegistryClient(timeout=timeout, cache=False) as client:
            with pytest.raises(RegistryError) as caught:
                await client.resolve(f"{host}/lab/x:1", "amd64")
            with pytest.raises(RegistryError) as again:
                await client.resolve(f"{host}/lab/x:1", "arm64")
    assert str(caught.value) == f"{host}: no answer in time (read timeout, 0.5 s) for lab/x"
    assert caught.value.registry == host and str(again.value) == str(caught.value)
    assert client.statuses()[0].requests == 1


def test_the_mirror_rewrites_references(lab_gaps: Path, tmp_path: Path) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'profile = "smoke"\n[registry]\nmirror = "127.0.0.1:5000"\n\n'
        '[[components]]\nid = "m"\ncategory = "server"\nprobe = "server"\nimage = "lab/mariadb:10.11"\n'
    )
    code, report, _ = images_json("--matrix", str(matrix))
    assert code == 0, report
    assert {c["registry"] for c in report["checks"]} == {"127.0.0.1:5000"}
    assert report["checks"][0]["reference"] == "lab/mariadb:10.11"
    assert report["checks"][0]["pull_reference"].startswith("127.0.0.1:5000/lab/mariadb@sha256:")


@pytest.fixture
def rate_limited(lab_gaps: Path) -> Iterator[RateLimitedFront]:
    front = RateLimitedFront("http://127.0.0.1:5000", remaining=40)
    yield front
    front.stop()


def test_docker_hub_rate_limit_headers_reach_the_report(rate_limited: RateLimitedFront, tmp_path: Path) -> None:
    matrix = one_image_matrix(tmp_path, f"{rate_limited.host}/lab/mariadb:10.11")
    code, report, _ = images_json("--matrix", str(matrix), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 0
    (status,) = report["registries"]
    assert status["rate_limit"] == {
        "limit": 100,
        "remaining": 40 - status["requests"],
        "window_s": 21600,
        "source": "ip",
    }
    table = ecoready("images", "--matrix", str(matrix), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert f"registry {rate_limited.host}: 1 request, rate limit 100 per 6 h" in table.stdout
    assert rate_limited.source not in json.dumps(report) + table.stdout + table.stderr  # the address stays out


def test_a_429_is_an_error_not_missing(rate_limited: RateLimitedFront, tmp_path: Path) -> None:
    rate_limited.remaining = 0
    matrix = one_image_matrix(tmp_path, f"{rate_limited.host}/lab/mariadb:10.11")
    code, report, stderr = images_json("--matrix", str(matrix), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 3
    assert {c["verdict"] for c in report["checks"]} == {"error"}
    (status,) = report["registries"]
    assert status["error"] == "rate limit reached (HTTP 429)" and status["rate_limit"]["remaining"] == 0
    assert f"registry {rate_limited.host}: rate limit reached (HTTP 429): 2 images not checked" in stderr


# -- the gaps are what labgaps.py says, built into a registry of the test's own --------------
@pytest.fixture
def scratch_registry(tmp_path: Path) -> Iterator[Registry]:
    storage = tmp_path / "storage"
    storage.mkdir()
    registry = start_registry(tmp_path, storage)
    yield registry
    registry.stop()


async def test_publish_gaps_builds_every_gap_once(scratch_registry: Registry, tmp_path: Path) -> None:
    writer = RegistryWriter(scratch_registry.url)
    try:
        for arch in ("amd64", "arm64"):  # tiny stand-ins for the lab's per-arch MariaDB
            push_tiny_image(writer, f"{arch}/mariadb", "10.11", arch)
        push_tiny_image(writer, "amd64/mariadb", "11.8", "amd64", build="11.8")  # gap-parity's amd64 entry
        logged: list[str] = []
        first = await asyncio.to_thread(publish_gaps, writer, logged.append)
        served = scratch_registry.requests()
        second = await asyncio.to_thread(publish_gaps, writer, logged.append)
        warm_requests = scratch_registry.requests() - served
    finally:
        writer.close()
    assert sorted(first) == sorted(
        [f"lab/{name}:1" for name in ("gap-amd64-only", "gap-arm64-only", "gap-mislabelled", "gap-attestation")]
        + [
            "lab/gap-suffix-only:1",
            "lab/gap-suffix-only:1-aarch64",
            "lab/gap-upgrade:1",
            "lab/gap-upgrade:2",
            "lab/gap-binary-mislabelled:1",
            "lab/gap-parity:1",
        ]
    )
    assert second == [] and len(logged) == 1
    assert warm_requests == 4 + 10  # the three sources and the amd64 config, one HEAD per gap tag
    async with RegistryClient(cache=False) as client:
        verdicts = {
            (gap, arch): (found.verdict, found.found_as)
            for gap in GAPS
            for arch in ("amd64", "arm64")
            for found in [await client.resolve(f"{scratch_registry.host}/lab/{gap}:1", arch)]
        }
        upgrade = {
            (tag, arch): (await client.resolve(f"{scratch_registry.host}/lab/gap-upgrade:{tag}", arch)).verdict
            for tag in ("1", "2")
            for arch in ("amd64", "arm64")
        }
    assert upgrade == {
        ("1", "amd64"): Verdict.AVAILABLE,
        ("1", "arm64"): Verdict.MISSING,
        ("2", "amd64"): Verdict.AVAILABLE,
        ("2", "arm64"): Verdict.AVAILABLE,
    }
    assert verdicts == {
        ("gap-amd64-only", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-amd64-only", "arm64"): (Verdict.MISSING, ""),
        ("gap-arm64-only", "amd64"): (Verdict.MISSING, ""),
        ("gap-arm64-only", "arm64"): (Verdict.AVAILABLE, "single manifest"),
        ("gap-mislabelled", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-mislabelled", "arm64"): (Verdict.MISLABELLED, ""),
        ("gap-attestation", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-attestation", "arm64"): (Verdict.AVAILABLE, "index"),
        ("gap-suffix-only", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-suffix-only", "arm64"): (Verdict.AVAILABLE, "tag 1-aarch64"),
        ("gap-upgrade", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-upgrade", "arm64"): (Verdict.MISSING, ""),
        ("gap-binary-mislabelled", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-binary-mislabelled", "arm64"): (Verdict.AVAILABLE, "index"),
        ("gap-parity", "amd64"): (Verdict.AVAILABLE, "index"),
        ("gap-parity", "arm64"): (Verdict.AVAILABLE, "index"),
    }


async def test_a_cell_stopped_mid_pull_leaves_the_pull_to_the_cell_still_waiting(scratch_registry: Registry) -> None:
    """The one single-flight with a real engine (tests/unit/test_flight_users.py has it
    without): two cells wait on one pull, whose layer the engine cannot get yet (a proxy
    stalls the engine's downloads); the first cell is cancelled mid-pull (as its budget
    would), the second still gets its image once the layer comes."""
    writer = RegistryWriter(scratch_registry.url)
    try:
        push_tiny_image(writer, "test/flight", "1", "amd64", text=f"flight {uuid.uuid4()}\n")
    finally:
        writer.close()
    host = await DockerHost.connect()
    client = RegistryClient(cache=False)
    image_id = ""
    try:
        with registry_proxy(scratch_registry.host) as proxy:
            proxy.stall_agent = "docker/"  # the engine's downloads stall; ecoready's own requests pass
            proxy.stall_blobs.set()
            store = ImageStore(host, client)
            reference = f"{proxy.address}/test/flight:1"
            first = asyncio.create_task(store.ensure(reference, "amd64"))
            second = asyncio.create_task(store.ensure(reference, "amd64"))
            async with asyncio.timeout(60):
                while not proxy.stalled:
                    await asyncio.sleep(0.05)
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            await asyncio.sleep(0.5)
            assert not second.done(), "the second cell was let go with the first"
            proxy.stall_blobs.clear()
            proxy.release.set()  # the stalled download is dropped: the engine asks again
            async with asyncio.timeout(120):
                info = await second
            image_id = info.image_id
            assert info.arch == "amd64" and image_id
    finally:
        await client.aclose()
        if image_id:
            await asyncio.to_thread(
                subprocess.run, ["docker", "rmi", "-f", image_id], capture_output=True, timeout=60, check=False
            )
        await host.close()
