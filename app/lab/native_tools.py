"""The build machine's own tools for a foreign arch's maintainer scripts.

Under qemu every process start costs about 30 ms of CPU before the program does anything,
and Debian's maintainer scripts start thousands of short processes (ucf, debconf's Perl,
sed, coreutils). So while a foreign arch's base is made (containers/base/native-chroot) or
an image's packages are installed (containers/base/apt-into), those tools
(containers/base/native-tools) are the machine's own, taken from its base of the same
Debian suite, so each behaves as the target's would.

They are laid out as a root: the tools under `.ecoready-native/usr/{bin,sbin}`, with their
ELF interpreter rewritten to `/.ecoready-native/ld.so` (a link to this machine's loader),
and the machine's multiarch library directory at its own path (`usr/lib/x86_64-linux-gnu`),
which the target's never use. Nothing else of the target is touched: usr-is-merged removes
a /lib64 it does not expect, so the usual loader path cannot be borrowed.
"""

from __future__ import annotations

import io
import shutil
import struct
import tarfile
from collections.abc import Sequence
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.engine.platform import host_arch

NATIVE_DIR = ".ecoready-native"
INTERPRETER = f"/{NATIVE_DIR}/ld.so"

# the machine's multiarch library directory and its loader's name there
RUNTIME = {
    "amd64": ("usr/lib/x86_64-linux-gnu", "ld-linux-x86-64.so.2"),
    "arm64": ("usr/lib/aarch64-linux-gnu", "ld-linux-aarch64.so.1"),
}

_PT_INTERP = 3


def with_interpreter(elf: bytes, interpreter: str) -> bytes:
    """A 64-bit little-endian ELF executable whose PT_INTERP names `interpreter` (no longer
    than the one it has: the string is rewritten in place, NUL-padded)."""
    if elf[:6] != b"\x7fELF\x02\x01":
        raise EnvironmentProblem("not a 64-bit little-endian ELF file")
    (phoff,) = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for index in range(phnum):
        header = phoff + index * phentsize
        (kind,) = struct.unpack_from("<I", elf, header)
        if kind != _PT_INTERP:
            continue
        (offset,) = struct.unpack_from("<Q", elf, header + 8)
        (size,) = struct.unpack_from("<Q", elf, header + 32)
        new = interpreter.encode()
        if len(new) >= size:
            raise EnvironmentProblem(f"the interpreter {interpreter} is longer than the one it replaces")
        return elf[:offset] + new.ljust(size, b"\0") + elf[offset + size :]
    raise EnvironmentProblem("no ELF interpreter: a static program")


def lay_out(archive: bytes, dest: Path, tools: Sequence[str]) -> None:
    """Under `dest`, as in a root: the tools named, taken from the machine's own base
    (`archive`, its file system as the engine gives it), and the loader and libraries
    they need."""
    lib, loader = RUNTIME[host_arch()]
    wanted = {f"usr/{d}/{tool}" for tool in tools for d in ("bin", "sbin")}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            name = member.name.lstrip("/")
            tool = name in wanted and (member.isfile() or member.islnk())
            if tool:
                target = dest / NATIVE_DIR / name
            elif name == lib or name.startswith(lib + "/"):
                target = dest / name
            else:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.isdir():
                target.mkdir(exist_ok=True)
            elif member.issym():
                target.symlink_to(member.linkname)
            elif member.isfile() or member.islnk():
                data = tar.extractfile(member)  # a hard link reads as its target's bytes
                if data is None:
                    raise EnvironmentProblem(f"unreadable {member.name!r} in the machine's own base")
                content = data.read()
                target.write_bytes(with_interpreter(content, INTERPRETER) if tool else content)
                target.chmod(member.mode & 0o755)
    (dest / INTERPRETER.lstrip("/")).symlink_to(f"/{lib}/{loader}")


def remove(rootfs: Path) -> None:
    """Take out of a target what `lay_out` made (copied into it by native-chroot)."""
    shutil.rmtree(rootfs / NATIVE_DIR)
    shutil.rmtree(rootfs / RUNTIME[host_arch()][0])
