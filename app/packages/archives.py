"""What a package's own files say, read without unpacking anything to disk: the native
sources and build-time tools of a Python source distribution, the native libraries in a
jar, the cgo files of a Go module, the node-gyp file and prebuilt binaries of an npm
tarball. Pure and bounded: at most so many members, so many bytes read per file and in
all (a decompression bomb ends the look, it does not end the run).
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

MAX_MEMBERS = 20_000
MAX_READ = 256 << 10  # bytes read of one file whose text matters
MAX_TOTAL = 512 << 20  # bytes unpacked in all, whatever the members claim

NATIVE_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".pyx", ".rs", ".f90")
NATIVE_LIBRARIES = (".so", ".dll", ".dylib", ".jnilib")
# site.cfg: the build settings setuptools-era setups read (MariaDB Connector/Python names its
# mariadb_config there and in a helper module, not in setup.py)
_BUILD_FILES = ("setup.py", "setup.cfg", "site.cfg", "pyproject.toml", "build.py", "meson.build", "CMakeLists.txt")
# Words in build files that name what a build runs or links (lowercase).
_TOOLS = ("pkg-config", "mysql_config", "mariadb_config", "mysqlclient", "libmariadb", "perconaserverclient")
_CGO = re.compile(rb'^\s*import\s*(\(\s*(?:[^)]*\n)*?\s*)?"C"', re.M)
_GO_DIRECTIVE = re.compile(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", re.M)


@dataclass(frozen=True)
class Member:
    name: str  # the path inside the archive, without its top folder
    head: bytes  # the first bytes, for the files whose text matters (else empty)


@dataclass(frozen=True)
class SourceFacts:
    """A source distribution: its native sources, and what its build files name."""

    native: tuple[str, ...] = ()  # native source files (the first few)
    tools: frozenset[str] = frozenset()  # of _TOOLS, those the build files mention
    complete: bool = True  # False: the archive was too big to read to its end


def members(data: bytes, name: str, wanted: tuple[str, ...] = ()) -> tuple[list[Member], bool]:
    """The archive's regular files (tar, tar.gz, tgz, zip, whl, jar) and whether all were
    read; files whose name ends with one of `wanted` come with their first bytes."""
    if name.endswith((".zip", ".whl", ".jar")) or data[:4] == b"PK\x03\x04":
        return _zip_members(data, wanted)
    return _tar_members(data, wanted)


def _strip_top(path: str) -> str:
    parts = path.strip("/").split("/", 1)
    return parts[1] if len(parts) == 2 else parts[0]


def _tar_members(data: bytes, wanted: tuple[str, ...]) -> tuple[list[Member], bool]:
    found: list[Member] = []
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as tar:
            for info in _bounded(tar):
                total += max(info.size, 0)
                if total > MAX_TOTAL or len(found) >= MAX_MEMBERS:
                    return found, False
                if not info.isfile():
                    continue
                head = b""
                if info.name.endswith(wanted):
                    stream = tar.extractfile(info)
                    head = stream.read(MAX_READ) if stream is not None else b""
                found.append(Member(_strip_top(info.name), head))
    except (tarfile.TarError, EOFError, OSError, ValueError):
        return found, False
    return found, True


def _bounded(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    for count, info in enumerate(tar):
        if count >= MAX_MEMBERS:
            return
        yield info


def _zip_members(data: bytes, wanted: tuple[str, ...]) -> tuple[list[Member], bool]:
    found: list[Member] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            for info in infos[:MAX_MEMBERS]:
                if info.is_dir():
                    continue
                head = b""
                if info.filename.endswith(wanted) and info.file_size <= MAX_TOTAL:
                    with archive.open(info) as stream:
                        head = stream.read(MAX_READ)
                found.append(Member(info.filename, head))
            return found, len(infos) <= MAX_MEMBERS
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return found, False


def sdist_facts(data: bytes, name: str) -> SourceFacts:
    """A Python sdist: native sources, and the build tools its build files name."""
    files, complete = members(data, name, _BUILD_FILES)
    native = [m.name for m in files if m.name.endswith(NATIVE_SOURCES) and not _is_test(m.name)]
    text = b"\n".join(m.head for m in files if m.head).decode("utf-8", "replace").lower()
    return SourceFacts(tuple(native[:5]), frozenset(t for t in _TOOLS if t in text), complete)


def native_libraries(data: bytes, name: str = "x.jar") -> tuple[list[str], bool]:
    """Native libraries (.so, .dll, .dylib, .jnilib) inside a jar or other zip."""
    files, complete = members(data, name)
    return [m.name for m in files if m.name.lower().endswith(NATIVE_LIBRARIES)], complete


def cgo_files(data: bytes) -> tuple[list[str], bool]:
    """Go files of a module zip that import "C" (tests, testdata and examples aside), by
    their path in the module (the zip's `module@version/` prefix dropped)."""
    files, complete = members(data, "m.zip", (".go",))
    found = [m.name for m in files if m.name.endswith(".go") and not _is_test(m.name) and _CGO.search(m.head)]
    return [name.partition("@")[2].partition("/")[2] or name for name in found], complete


def go_directive(go_mod: str) -> str:
    """The `go` line of a go.mod: the oldest Go that builds the module ("" when absent)."""
    found = _GO_DIRECTIVE.search(go_mod)
    return found.group(1) if found else ""


@dataclass(frozen=True)
class NpmFacts:
    gyp: bool  # binding.gyp: node-gyp compiles it at install unless a prebuilt binary fits
    prebuilds: tuple[str, ...]  # platform folders of prebuilt binaries: "linux-arm64", ...


def npm_tarball_facts(data: bytes) -> tuple[NpmFacts, bool]:
    files, complete = members(data, "p.tgz")
    names = [m.name for m in files]
    prebuilds = sorted({n.split("/")[1] for n in names if n.startswith("prebuilds/") and n.count("/") >= 2})
    return NpmFacts("binding.gyp" in names, tuple(prebuilds)), complete


def _is_test(path: str) -> bool:
    parts = path.lower().split("/")
    return (
        any(p in ("test", "tests", "testdata", "_examples", "examples", "vendor") for p in parts[:-1])
        or parts[-1].endswith("_test.go")
        or parts[-1].startswith("test_")
    )
