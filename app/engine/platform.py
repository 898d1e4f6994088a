"""The machine under the engine: its arch, the emulators it has registered, CPU facts.

Only reads files (/proc, /sys); the engine's own view comes from docker_host.
"""

from __future__ import annotations

import os
import platform as _platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.model import normalize_arch

BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")

# binfmt handler names that run a foreign arch, per Docker arch
_HANDLERS: dict[str, tuple[str, ...]] = {
    "arm64": ("qemu-aarch64", "aarch64"),
    "amd64": ("qemu-x86_64", "x86_64", "rosetta"),
    "ppc64le": ("qemu-ppc64le",),
    "s390x": ("qemu-s390x",),
}


@dataclass(frozen=True)
class Emulator:
    arch: str
    handler: str
    interpreter: str
    flags: str
    enabled: bool
    version: str  # "qemu-aarch64 version 10.0.13", or "" when unknown

    @property
    def fix_binary(self) -> bool:
        """F flag: the kernel keeps the interpreter open, so it works inside containers."""
        return "F" in self.flags

    @property
    def qemu_major(self) -> int | None:
        match = re.search(r"version (\d+)\.", self.version)
        return int(match.group(1)) if match else None

    def problem(self) -> str | None:
        """Why this emulator cannot be trusted for database servers, or None."""
        if not self.enabled:
            return f"binfmt handler {self.handler} is disabled"
        if not self.fix_binary:
            return f"binfmt handler {self.handler} lacks the F flag, so it does not work inside containers"
        major = self.qemu_major
        if major is not None and major < 8:
            return (
                f"{self.version} is too old (qemu < 8 OOM-kills MariaDB and lacks x86-64-v2); "
                "register qemu >= 8 (see `ecoready doctor`)"
            )
        return None


# The CPU qemu-user is told to be (QEMU_CPU) for an arch's emulated cells and the lab's
# emulated build steps. arm64: Neoverse N1 (AWS Graviton2, Ampere Altra: Armv8.2 with LSE
# and CRC32), the core most rented arm64 servers have. qemu's default `max` offers SVE,
# SME, pointer authentication and MTE too, which glibc and the servers take when offered
# and which cost a fifth to a quarter more emulated CPU to start MySQL or MariaDB
# (bench/emulated_cpu.py; the whole lab run: 583 s -> 457 s).
# A program that needs more stops on an illegal instruction; the runner then retries the
# cell with `max` and says so (run/runner.py).
EMULATED_CPU: dict[str, str] = {"arm64": "neoverse-n1"}
WIDEST_CPU = "max"  # every feature qemu can emulate


def emulated_cpu_env(arch: str) -> dict[str, str]:
    """The environment that picks the emulated CPU of `arch` (empty: qemu's default)."""
    cpu = EMULATED_CPU.get(arch)
    return {"QEMU_CPU": cpu} if cpu else {}


def host_arch() -> str:
    return normalize_arch(_platform.machine()) or _platform.machine()


def emulators(binfmt_dir: Path = BINFMT_DIR) -> dict[str, Emulator]:
    """Registered binfmt handlers that can run a foreign Docker arch, by arch."""
    found: dict[str, Emulator] = {}
    if not binfmt_dir.is_dir():
        return found
    for arch, names in _HANDLERS.items():
        for name in names:
            entry = binfmt_dir / name
            try:
                text = entry.read_text()
            except OSError:
                continue
            fields = dict(_binfmt_fields(text))
            interpreter = fields.get("interpreter", "")
            found[arch] = Emulator(
                arch=arch,
                handler=name,
                interpreter=interpreter,
                flags=fields.get("flags", ""),
                enabled=text.startswith("enabled"),
                version=_interpreter_version(interpreter),
            )
            break
    return found


def _binfmt_fields(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key in ("interpreter", "flags:"):
            out.append((key.rstrip(":"), value.strip()))
    return out


def _interpreter_version(path: str) -> str:
    if not path or not os.access(path, os.X_OK):
        return ""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    first = out.stdout.splitlines()[0] if out.stdout else ""
    return first.strip()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "CPU part", "Model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or ""


def page_size() -> int:
    return os.sysconf("SC_PAGE_SIZE")
