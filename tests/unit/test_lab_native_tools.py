"""The machine's own tools laid out for a foreign arch's builds (lab/native_tools.py): taken
from a file system as the engine's archive gives it (names with a leading /, hard links,
library links), their ELF interpreter moved to a path of their own, and taken out again."""

from __future__ import annotations

import io
import shutil
import struct
import sys
import tarfile
from pathlib import Path

import pytest

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine import platform
from ecoready.lab import native_tools
from ecoready.lab.native_tools import INTERPRETER, NATIVE_DIR, RUNTIME, lay_out, remove, with_interpreter
from ecoready.lab.recipes import native_tool_names

# a real dynamically linked program of this machine
PROGRAM = Path(shutil.which("sed") or "/usr/bin/sed").resolve().read_bytes()


def _interpreter(elf: bytes) -> bytes:
    (phoff,) = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for index in range(phnum):
        kind, _flags, offset = struct.unpack_from("<IIQ", elf, phoff + index * phentsize)
        if kind == 3:
            (size,) = struct.unpack_from("<Q", elf, phoff + index * phentsize + 32)
            return elf[offset : offset + size].rstrip(b"\0")
    raise AssertionError("no PT_INTERP")


def test_the_interpreter_is_rewritten_in_place_and_nothing_else() -> None:
    patched = with_interpreter(PROGRAM, INTERPRETER)
    assert _interpreter(patched) == INTERPRETER.encode()
    assert len(patched) == len(PROGRAM)
    changed = [i for i, (a, b) in enumerate(zip(PROGRAM, patched, strict=True)) if a != b]
    assert changed and changed[-1] - changed[0] < 32  # one short string
    with pytest.raises(EnvironmentProblem, match="longer"):
        with_interpreter(PROGRAM, "/" + "x" * 64)
    with pytest.raises(EnvironmentProblem, match="not a 64-bit"):
        with_interpreter(b"#!/bin/sh\n", INTERPRETER)


def _archive(lib: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def add(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o755) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode, info.size = kind, link, mode, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("/usr/bin", kind=tarfile.DIRTYPE)
        add("/usr/bin/perl5.36.0", PROGRAM)
        add("/usr/bin/perl", kind=tarfile.LNKTYPE, link="/usr/bin/perl5.36.0")
        add("/usr/bin/sed", PROGRAM)
        add("/usr/bin/uname", PROGRAM)  # not a tool: it tells the arch
        add("/usr/bin/sh", kind=tarfile.SYMTYPE, link="dash")
        add("/usr/sbin/useradd", PROGRAM, mode=0o4755)
        add(f"/{lib}", kind=tarfile.DIRTYPE)
        add(f"/{lib}/libc.so.6", b"libc", mode=0o644)
        add(f"/{lib}/libfoo.so.1", kind=tarfile.SYMTYPE, link="libfoo.so.1.2")
        add("/etc/passwd", b"root:x:0:0::/root:/bin/sh\n", mode=0o644)
    return buffer.getvalue()


@pytest.mark.parametrize("arch", sorted(RUNTIME))
def test_tools_and_their_libraries_are_laid_out_and_taken_out_again(
    arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native_tools, "host_arch", lambda: arch)
    lib, loader = RUNTIME[arch]
    native = tmp_path / "native"
    lay_out(_archive(lib), native, native_tool_names())

    tools = native / NATIVE_DIR / "usr"
    for tool in ("bin/perl", "bin/sed", "sbin/useradd"):  # perl: a hard link, as its bytes
        assert _interpreter((tools / tool).read_bytes()) == INTERPRETER.encode()
    assert (tools / "sbin" / "useradd").stat().st_mode & 0o7777 == 0o755  # never setuid
    assert not (tools / "bin" / "uname").exists() and not (tools / "bin" / "sh").exists()
    assert not (native / "etc").exists()  # nothing else of the machine's base
    assert (native / lib / "libc.so.6").read_bytes() == b"libc"
    assert (native / lib / "libfoo.so.1").readlink() == Path("libfoo.so.1.2")
    assert (native / INTERPRETER.lstrip("/")).readlink() == Path(f"/{lib}/{loader}")

    # a target after native-chroot's `cp -a NATIVE/. TARGET/`, beside its own files
    rootfs = tmp_path / "rootfs"
    (rootfs / "usr" / "bin").mkdir(parents=True)
    (rootfs / "usr" / "lib" / "other-linux-gnu").mkdir(parents=True)
    (rootfs / "usr" / "bin" / "sed").write_bytes(b"the target's sed")
    mine = {p.relative_to(rootfs) for p in rootfs.rglob("*")}
    shutil.copytree(native, rootfs, symlinks=True, dirs_exist_ok=True)
    remove(rootfs)
    assert {p.relative_to(rootfs) for p in rootfs.rglob("*")} == mine
    assert (rootfs / "usr" / "bin" / "sed").read_bytes() == b"the target's sed"


def test_the_tool_list_names_no_program_that_tells_an_arch() -> None:
    tools = native_tool_names()
    assert {"dash", "perl", "sed"} <= set(tools)
    assert not {"uname", "arch", "dpkg", "ldconfig", "dpkg-architecture"} & set(tools)
    assert platform.host_arch() in RUNTIME or sys.platform != "linux"
