"""The CPU qemu emulates for arm64 cells, through the real engine and the real qemu-user:
Neoverse N1 (engine/platform.EMULATED_CPU), and a program that needs a newer core retried
with QEMU_CPU=max and said so, never blamed on the image.

The newer-core program is made here, 136 bytes of aarch64 machine code in a static ELF:
`mrs x0, RNDR` (the Armv8.5 random number register, which N1 lacks and qemu's `max` has),
then exit(0). Under N1 it dies of SIGILL as it would on a Graviton2."""

from __future__ import annotations

import base64
import os
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import cell_checks, report_cell, run_to_report

pytestmark = pytest.mark.docker

MRS_X0_RNDR, MOV_X0_0, MOV_X8_EXIT, SVC_0 = 0xD53B2400, 0xD2800000, 0xD2800BA8, 0xD4000001


def newer_core_program() -> bytes:
    """A static aarch64 ELF: one loadable segment, read RNDR, exit 0."""
    code = struct.pack("<4I", MRS_X0_RNDR, MOV_X0_0, MOV_X8_EXIT, SVC_0)
    base, header, segment = 0x400000, 64, 56
    size = header + segment + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)  # 64-bit, little-endian, SysV
    elf = ident + struct.pack(
        "<HHIQQQIHHHHHH", 2, 183, 1, base + header + segment, header, 0, 0, header, segment, 1, 0, 0, 0
    )
    program = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)  # PT_LOAD, R+X
    return elf + program + code


def matrix() -> str:
    program = base64.b64encode(newer_core_program()).decode()
    write = f"printf %s {program} | base64 -d > /tmp/rndr && chmod +x /tmp/rndr"
    return f"""
title = "the emulated arm64 CPU"
arches = ["arm64"]
profile = "smoke"

[[components]]
id = "any-program"
category = "app"
probe = "command"
image = "127.0.0.1:5000/lab/app-client:1"

[components.options]
command = ["sh", "-c", "echo \\"ok cpu $QEMU_CPU\\"; grep -qw sve /proc/cpuinfo && echo 'fail sve' || echo 'ok no-sve'"]

[[components]]
id = "newer-core"
category = "app"
probe = "command"
image = "127.0.0.1:5000/lab/app-client:1"

[components.options]
mode = "service"
command = ["sh", "-c", "{write} && /tmp/rndr && echo 'ok rndr read' && exec sleep 600"]
"""


@pytest.fixture(scope="module")
def report(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_to_report(tmp_path_factory.mktemp("cpu"), matrix(), timeout=900)


def cell(report: dict[str, Any], component: str) -> dict[str, Any]:
    return report_cell(report, f"{component}/arm64")


def test_emulated_arm64_runs_as_neoverse_n1_without_sve(report: dict[str, Any], no_leaks: None) -> None:
    c = cell(report, "any-program")
    assert c["emulated"] and c["status"] == "ready", (c["detail"], c["log_tail"][-5:])
    seen = cell_checks(c)
    assert seen["cpu"]["detail"] == "neoverse-n1" and seen["no-sve"]["outcome"] == "pass", seen


def test_a_program_for_a_newer_core_is_retried_with_max_and_ready(report: dict[str, Any], no_leaks: None) -> None:
    c = cell(report, "newer-core")
    assert c["status"] == "ready", (c["detail"], c["log_tail"][-5:])
    start = next(s for s in c["stages"] if s["stage"] == "start")
    assert "with QEMU_CPU=max" in start["detail"], start
    assert "arm64 emulated CPU (neoverse-n1) lacks an instruction" in start["detail"], start
    assert cell_checks(c)["rndr"]["outcome"] == "pass"
    assert "arm64 emulated CPU (neoverse-n1)" in report["_stderr"]  # the run's note says it too


def test_the_program_really_needs_the_newer_core(tmp_path: Path) -> None:
    """The test's premise, on the machine's own qemu: N1 refuses RNDR, `max` has it."""
    program = tmp_path / "rndr"
    program.write_bytes(newer_core_program())
    program.chmod(0o755)
    codes = {
        cpu: subprocess.run(
            [str(program)], env={**os.environ, "QEMU_CPU": cpu}, capture_output=True, timeout=30
        ).returncode
        for cpu in ("neoverse-n1", "max")
    }
    assert codes == {"neoverse-n1": -4, "max": 0}, codes  # -4: killed by SIGILL
