"""The build audit on the lab's real images: Debian's mariadbd read from the arm64 and amd64
images of real runs (what it is, in the report, crossed with the platform), cached by
digest for the next run, and an arm64-labelled image whose server is amd64 ending
`broken: mislabelled binary`; the engine's reads of image files on their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION, docker_labelled, ecoready

pytestmark = pytest.mark.docker


def run(lab: Path, cache: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = ecoready(
        "run", "--headless", "--matrix", str(lab), "--profile", "smoke", *args, "--json", "-",
        env={"XDG_CACHE_HOME": str(cache)},
    )  # fmt: skip
    return result.returncode, json.loads(result.stdout), result.stderr


def stage(cell: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in cell["stages"] if s["stage"] == name)


def test_debian_mariadbd_is_audited_on_both_arches_and_cached_by_digest(
    lab: Path, tmp_path: Path, no_leaks: None
) -> None:
    code, report, stderr = run(lab, tmp_path, "--only", "mariadb-10.11")
    assert code == 0, stderr
    cells = {c["arch"]: c for c in report["cells"]}
    for arch, cell in cells.items():
        assert [s["stage"] for s in cell["stages"]] == ["image", "audit", "start", "smoke"]
        audit = cell["audit"]
        assert audit["arch"] == arch and audit["image_digest"] == cell["image"]["digest"]
        assert audit["cached"] is False
        assert audit["platform"] == f"local/{arch}"  # crossed with the platform fitness of this run
        (server,) = audit["binaries"]
        assert (server["program"], server["path"], server["machine"]) == ("mariadbd", "/usr/sbin/mariadbd", arch)
        assert server["interpreter"] and server["size"] > 10_000_000
        assert server["crc32_count"] > 0 and server["pmull_count"] > 0  # CRC-32C in hardware, chosen at run time
    arm = cells["arm64"]["audit"]["binaries"][0]
    # Debian's GCC 12 builds arm64 with outline atomics, and 64 KiB-aligned segments
    assert arm["lse"] == "outline" and arm["lse_count"] > 0 and arm["llsc_count"] > 0
    assert arm["load_align"] == 65536
    amd = cells["amd64"]["audit"]["binaries"][0]
    # a baseline build with SSE4.2/AVX2/AVX-512 CRC paths it picks at run time
    assert (amd["x86_needs"], amd["x86_uses"]) == ("x86-64", "x86-64-v4")
    assert amd["load_align"] == 4096 and amd["lse"] == ""
    findings = {f["code"]: f for f in cells["arm64"]["audit"]["findings"]}
    assert findings["lse-outline"]["text"].startswith("mariadbd picks LSE atomics at run time (outline atomics); ")
    assert findings["page-align"]["severity"] == "fine"
    level = next(f for f in cells["amd64"]["audit"]["findings"] if f["code"] == "x86-level")
    assert level["text"].startswith("mariadbd needs x86-64, this CPU offers x86-64-v")
    assert stage(cells["arm64"], "audit")["detail"] == "mariadbd: arm64, LSE at run time, CRC32, PMULL, 64 KiB segments"

    code, again, stderr = run(lab, tmp_path, "--only", "mariadb-10.11", "--arch", "amd64")
    assert code == 0, stderr
    (cell,) = again["cells"]
    assert cell["audit"]["cached"] is True  # nothing read from the image this time
    assert cell["audit"]["binaries"] == cells["amd64"]["audit"]["binaries"]
    assert stage(cell, "audit")["detail"].endswith(" (cached)")


def test_an_arm64_image_holding_an_amd64_server_is_broken_mislabelled_binary(
    lab_gaps: Path, tmp_path: Path, no_leaks: None
) -> None:
    code, report, stderr = run(lab_gaps, tmp_path, "--only", "gap-binary-mislabelled", "--arch", "arm64")
    assert code == 1, stderr
    (cell,) = report["cells"]
    detail = "mislabelled binary: mariadbd (/usr/sbin/mariadbd) is built for amd64, the image says arm64"
    assert (cell["status"], cell["detail"]) == ("broken", detail)
    # the index and the image's config both say arm64: the image stage passes, nothing starts
    assert [(s["stage"], s["outcome"]) for s in cell["stages"]] == [("image", "pass"), ("audit", "fail")]
    assert stage(cell, "audit")["blame"]["cause"] == "mislabelled-binary"  # who is blamed, as data
    assert cell["image"]["arch"] == "arm64"
    (finding,) = cell["audit"]["findings"]
    assert (finding["code"], finding["severity"]) == ("mislabelled", "fatal")
    assert cell["audit"]["binaries"][0]["machine"] == "amd64"


async def test_the_engine_reads_image_files_following_links_and_bounded() -> None:
    from ecoready.engine.docker_host import DockerHost
    from ecoready.lab.recipes import IMAGES, image_tag

    image = image_tag(next(i for i in IMAGES if i.name == "mariadb" and i.tag == "10.11"), "amd64")
    host = await DockerHost.connect()
    labels = {TEST_LABEL_KEY: TEST_SESSION, "ecoready.role": "audit"}
    try:
        env = await host.images.image_env(image)
        linked, missing, folder, large = await host.images.read_files(
            image,
            [["/usr/bin/nothere", "/usr/sbin/mysqld"], ["/nothere"], ["/usr/sbin"], ["/usr/sbin/mariadbd"]],
            labels=labels,
            max_bytes=1 << 20,
            timeout=60,
        )
        (small,) = await host.images.read_files(
            image, [["/etc/debian_version"]], labels=labels, max_bytes=1 << 20, timeout=60
        )
    finally:
        await host.close()
    assert any(item.startswith("PATH=") for item in env)
    assert linked is not None and (linked.asked, linked.path) == ("/usr/sbin/mysqld", "/usr/sbin/mariadbd")
    assert linked.size > 1 << 20 and linked.data == b"" and not linked.complete  # over max_bytes: named, not read
    assert missing is None
    assert folder is not None and folder.note == "a directory"  # said as such, not "not found"
    assert large is not None and not large.complete
    assert small is not None and small.complete and small.data.strip()[:2].isdigit()
    assert docker_labelled(f"{TEST_LABEL_KEY}={TEST_SESSION}")["containers"] == []  # created, never started, removed


async def test_a_symlink_loop_or_a_directory_at_a_programs_path_is_said_as_such(tmp_path: Path) -> None:
    """A stranger's image: the program's path is a symlink loop, or a folder. The audit reads
    neither, says which, and the engine's error never reaches the user raw."""
    import subprocess
    import uuid

    from ecoready.engine.docker_host import DockerHost
    from ecoready.lab.recipes import IMAGES, image_tag
    from ecoready.run.audit_stage import _audit_file

    base = image_tag(next(i for i in IMAGES if i.name == "mariadb" and i.tag == "10.11"), "amd64")
    context = tmp_path / "context"
    (context / "loop").mkdir(parents=True)
    (context / "loop" / "mysqld").symlink_to("mariadbd")
    (context / "loop" / "mariadbd").symlink_to("mysqld")
    (context / "Dockerfile").write_text(f"FROM {base}\nCOPY loop/ /opt/loop/\n")
    tag = f"ecoready-test/audit-loop:{uuid.uuid4().hex[:12]}"
    subprocess.run(["docker", "build", "-q", "-t", tag, str(context)], capture_output=True, timeout=300, check=True)
    host = await DockerHost.connect()
    labels = {TEST_LABEL_KEY: TEST_SESSION, "ecoready.role": "audit"}
    try:
        loop, folder = await host.images.read_files(
            tag, [["/opt/loop/mysqld"], ["/opt/loop", "/usr/bin/nothere"]], labels=labels, max_bytes=1 << 20, timeout=60
        )
    finally:
        await host.close()
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
    assert loop is not None and loop.note in ("a symlink loop", "a chain of more than 8 symlinks"), loop
    assert folder is not None and folder.note == "a directory"
    said = _audit_file(["mysqld"], loop)
    assert said.note.startswith("not read: /opt/loop/") and "symlink" in said.note
    assert docker_labelled(f"{TEST_LABEL_KEY}={TEST_SESSION}")["containers"] == []


async def test_a_large_program_is_held_once_in_memory(tmp_path: Path) -> None:
    """The bytes of a program read for the audit are one buffer, not chunks and their join
    (a 500 MB program took ecoready past 1.3 GB)."""
    import os
    import subprocess
    import tracemalloc
    import uuid

    from ecoready.engine.docker_host import DockerHost
    from ecoready.lab.recipes import IMAGES, image_tag

    size = 64 << 20
    base = image_tag(next(i for i in IMAGES if i.name == "mariadb" and i.tag == "10.11"), "amd64")
    context = tmp_path / "context"
    context.mkdir()
    (context / "big").write_bytes(os.urandom(size))
    (context / "Dockerfile").write_text(f"FROM {base}\nCOPY big /usr/sbin/big\n")
    tag = f"ecoready-test/audit-big:{uuid.uuid4().hex[:12]}"
    subprocess.run(["docker", "build", "-q", "-t", tag, str(context)], capture_output=True, timeout=300, check=True)
    host = await DockerHost.connect()
    labels = {TEST_LABEL_KEY: TEST_SESSION, "ecoready.role": "audit"}
    tracemalloc.start()
    try:
        (big,) = await host.images.read_files(tag, [["/usr/sbin/big"]], labels=labels, max_bytes=size, timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await host.close()
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)
    assert big is not None and big.complete and len(big.data) == size
    assert peak < size * 1.25, f"peak {peak / 2**20:.0f} MiB for a {size >> 20} MiB program"
