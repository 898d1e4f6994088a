"""Seen, not assumed: programs built here for known targets (Debian's gcc and
gcc-aarch64-linux-gnu: -march=armv8.2-a with LSE, -moutline-atomics, +sve, 4 KiB segments,
-march=x86-64-v3), whose per-target verdicts (app/audit/targets.py) must agree with what GNU
objdump reads in them: its disassembly (LSE outside libgcc's outline helpers, SVE registers,
ymm/zmm registers) and its program headers (segment alignment), joined with the same target
file. scripts/setup-host.sh --test installs the compilers and binutils; a machine without
them skips these tests. About 3 s (six small builds)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ecoready.audit.program import audit_program
from ecoready.audit.targets import fit_on
from ecoready.domain.cpus import Cpu, Fit, cpus, level_rank

DATA = Path(__file__).resolve().parents[1] / "data" / "audit"
ARM_GCC, ARM_OBJDUMP, GCC, OBJDUMP = "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-objdump", "gcc", "objdump"

# (name, compiler, source, options)
BUILDS = (
    ("lse", ARM_GCC, "atomics.c", ("-O2", "-march=armv8.2-a", "-mno-outline-atomics")),
    ("outline", ARM_GCC, "atomics.c", ("-O2", "-march=armv8-a", "-moutline-atomics")),
    ("sve", ARM_GCC, "sve.c", ("-O3", "-march=armv8.2-a+sve")),
    ("v8.0-4k", ARM_GCC, "atomics.c", ("-O2", "-march=armv8-a", "-mno-outline-atomics", "-Wl,-z,max-page-size=4096")),
    ("x86-64-v3", GCC, "levels.c", ("-O3", "-march=x86-64-v3")),
    ("x86-64", GCC, "levels.c", ("-O3", "-march=x86-64")),
)
LSE = re.compile(
    r"(cas|casp|swp|ld(add|clr|eor|set|smax|smin|umax|umin)|st(add|clr|eor|set|smax|smin|umax|umin))(a|l|al)?[bh]?"
)
INSN = re.compile(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
SVE_OPERAND = re.compile(r"\b[zp]\d+(\.[bhsdq]|/[zm])")
ALIGN = re.compile(r"^\s*LOAD\s.*align 2\*\*(\d+)")

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in (ARM_GCC, ARM_OBJDUMP, GCC, OBJDUMP)),
    reason="needs gcc, objdump, gcc-aarch64-linux-gnu and binutils-aarch64-linux-gnu (scripts/setup-host.sh --test)",
)


@dataclass(frozen=True)
class Seen:
    """What objdump shows of a program."""

    arch: str
    inline_lse: bool  # an LSE instruction outside libgcc's __aarch64_* helpers
    sve: bool
    x86_level: str  # from the widest vector registers used
    align: int


def objdump(path: Path, arch: str) -> Seen:
    tool = ARM_OBJDUMP if arch == "arm64" else OBJDUMP
    code = subprocess.run([tool, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True, check=True)
    headers = subprocess.run([tool, "-p", str(path)], capture_output=True, text=True, check=True)
    function, inline_lse, sve, ymm, zmm = "", False, False, False, False
    for line in code.stdout.splitlines():
        if found := FUNCTION.match(line):
            function = found.group(1)
        elif found := INSN.match(line):
            mnemonic, operands = found.groups()
            inline_lse |= bool(LSE.fullmatch(mnemonic)) and not function.startswith("__aarch64_")
            sve |= bool(SVE_OPERAND.search(operands))
            ymm |= "%ymm" in operands
            zmm |= "%zmm" in operands
    align = max(2 ** int(m.group(1)) for line in headers.stdout.splitlines() if (m := ALIGN.match(line)))
    level = "x86-64-v4" if zmm else "x86-64-v3" if ymm else "x86-64"
    return Seen(arch, inline_lse, sve, level, align)


def objdump_says_it_cannot_run(seen: Seen, cpu: Cpu) -> set[str]:
    """What keeps the program off `cpu`, by objdump's reading and the target file alone."""
    why = set()
    if seen.align < cpu.usual_page:
        why.add("page-size")
    if seen.arch == "arm64":
        if seen.inline_lse and "lse" not in cpu.features:
            why.add("lse")
        if seen.sve and "sve" not in cpu.features:
            why.add("sve")
    elif level_rank(seen.x86_level) > level_rank(cpu.level):
        why.add("x86-level")
    return why


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("targets")
    found = {}
    for name, compiler, source, options in BUILDS:
        found[name] = out / name
        subprocess.run([compiler, *options, str(DATA / source), "-o", str(found[name])], check=True)
    return found


@pytest.mark.parametrize("name", [b[0] for b in BUILDS])
def test_verdicts_per_target_agree_with_objdump(built: dict[str, Path], name: str) -> None:
    audited = audit_program("p", f"/usr/sbin/{name}", built[name].read_bytes())
    seen = objdump(built[name], audited.machine)
    targets = [cpu for cpu in cpus().values() if cpu.arch == audited.machine]
    assert targets
    for cpu in targets:
        fit = fit_on(audited, cpu)
        assert fit is not None
        ours = {lack.code for lack in fit.lacks if lack.fit is Fit.NOT}
        assert ours == objdump_says_it_cannot_run(seen, cpu), (name, cpu.id)
        assert (fit.fit is Fit.NOT) == bool(ours), (name, cpu.id)


def test_the_builds_differ_as_their_options_say(built: dict[str, Path]) -> None:
    """The oracle itself: each build shows objdump what its options ask for."""
    seen = {name: objdump(path, "amd64" if name.startswith("x86") else "arm64") for name, path in built.items()}
    assert seen["lse"].inline_lse and not seen["outline"].inline_lse and not seen["v8.0-4k"].inline_lse
    assert seen["sve"].sve and not seen["lse"].sve
    assert seen["v8.0-4k"].align == 4096 and seen["lse"].align == 65536
    assert seen["x86-64-v3"].x86_level == "x86-64-v3" and seen["x86-64"].x86_level == "x86-64"
    fits = {
        name: fit_on(audit_program("p", "/p", built[name].read_bytes()), cpus()["graviton1"])
        for name in ("lse", "outline", "sve")
    }
    assert {name: f.fit for name, f in fits.items() if f} == {"lse": Fit.NOT, "outline": Fit.SLOWER, "sve": Fit.NOT}
