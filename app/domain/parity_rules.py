"""What parity leaves out, in one place, each with its reason: items that depend on the
host or on the run rather than on the image (paths, memory and CPU-derived sizes, ids, the
host's name), and what differs between arches by nature. Applied when facts are gathered
(`kept`), so the fingerprints of two arches compare like with like. docs/parity.md lists
this table.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ecoready.domain.parity import Facet


class Why(str, enum.Enum):
    PATH = "path"  # where the host or the entrypoint put a file
    SIZED = "sized"  # sized by the server from the host's memory, CPUs or file limit
    HOST = "host"  # the host's name, time zone, file system or kernel
    RUN = "run"  # this run's ids and positions
    ARCH = "arch"  # differs between arches by nature
    FACET = "facet"  # compared as a facet of its own


@dataclass(frozen=True)
class LeftOut:
    facet: Facet
    pattern: str  # an fnmatch pattern on the item's name (lower case)
    why: Why
    reason: str


_V = Facet.VARIABLES
LEFT_OUT: tuple[LeftOut, ...] = (
    LeftOut(_V, "version", Why.FACET, "the server's version is its own facet"),
    LeftOut(_V, "version_comment", Why.FACET, "the version comment is its own facet"),
    LeftOut(_V, "version_compile_machine", Why.ARCH, "the CPU the server was built for: x86_64 or aarch64"),
    LeftOut(_V, "*dir", Why.PATH, "a folder (basedir, datadir, tmpdir, plugin_dir, ...)"),
    LeftOut(_V, "*_dir_path", Why.PATH, "a folder (aria_log_dir_path)"),
    LeftOut(_V, "*directory", Why.PATH, "a folder (innodb_undo_directory)"),
    LeftOut(_V, "*directories", Why.PATH, "folders (innodb_directories)"),
    LeftOut(_V, "*_file", Why.PATH, "a file, named after the host (general_log_file, pid_file, ...)"),
    LeftOut(_V, "*socket", Why.PATH, "a socket file"),
    LeftOut(_V, "log_error", Why.PATH, "the error log's file"),
    LeftOut(_V, "*_basename", Why.PATH, "log file names, named after the host"),
    LeftOut(_V, "*_index", Why.PATH, "log index files, named after the host"),
    LeftOut(_V, "relay_log", Why.PATH, "relay log file name, named after the host"),
    LeftOut(_V, "secure_file_priv", Why.PATH, "a folder the entrypoint chooses"),
    LeftOut(_V, "wsrep_provider", Why.PATH, "a library's path"),
    LeftOut(_V, "hostname", Why.HOST, "the container's host name"),
    LeftOut(_V, "report_host", Why.HOST, "the container's host name"),
    LeftOut(_V, "wsrep_node_*", Why.HOST, "the node's name and address"),
    LeftOut(_V, "system_time_zone", Why.HOST, "the host's time zone"),
    LeftOut(_V, "lower_case_file_system", Why.HOST, "the data directory's file system"),
    LeftOut(_V, "large_page_size", Why.HOST, "the kernel's huge page size"),
    LeftOut(_V, "log_tc_size", Why.HOST, "a multiple of the kernel's page size (4 KiB, 16 KiB or 64 KiB on arm64)"),
    LeftOut(
        _V,
        "innodb_use_native_aio",
        Why.HOST,
        "off where the kernel (or an emulator) offers neither io_uring nor libaio",
    ),
    LeftOut(_V, "innodb_linux_aio", Why.HOST, "io_uring or libaio, whichever the kernel offers"),
    LeftOut(_V, "innodb_log_file_buffering", Why.HOST, "chosen from the file system's O_DIRECT support"),
    LeftOut(_V, "innodb_log_file_mmap", Why.HOST, "chosen from the file system (persistent memory or not)"),
    LeftOut(_V, "server_uuid", Why.RUN, "generated at the first start"),
    LeftOut(_V, "server_uid", Why.RUN, "generated at the first start (MariaDB)"),
    LeftOut(_V, "build_id", Why.ARCH, "the server program's build ID (MySQL): differs between arches by nature"),
    LeftOut(_V, "gtid_*", Why.RUN, "the positions of what this run wrote"),
    LeftOut(_V, "open_files_limit", Why.SIZED, "the container's file limit"),
    LeftOut(_V, "table_open_cache", Why.SIZED, "lowered to fit the file limit"),
    LeftOut(_V, "table_definition_cache", Why.SIZED, "sized from table_open_cache"),
    LeftOut(_V, "innodb_open_files", Why.SIZED, "sized from table_open_cache"),
    LeftOut(_V, "max_connections", Why.SIZED, "lowered to fit the file limit"),
    LeftOut(_V, "host_cache_size", Why.SIZED, "sized from max_connections"),
    LeftOut(_V, "back_log", Why.SIZED, "sized from max_connections"),
    LeftOut(_V, "thread_cache_size", Why.SIZED, "sized from max_connections"),
    LeftOut(_V, "performance_schema_*", Why.SIZED, "sized from max_connections and the caches"),
    LeftOut(_V, "thread_pool_size", Why.SIZED, "the number of CPUs"),
    LeftOut(_V, "innodb_buffer_pool_size*", Why.SIZED, "sized from memory (innodb_dedicated_server, 11.x's maximum)"),
    LeftOut(_V, "innodb_buffer_pool_instances", Why.SIZED, "sized from the pool and the CPUs (MySQL 8.4)"),
    LeftOut(_V, "innodb_buffer_pool_chunk_size", Why.SIZED, "sized from the pool"),
    LeftOut(_V, "innodb_page_cleaners", Why.SIZED, "the pool's instances"),
    LeftOut(_V, "innodb_redo_log_capacity", Why.SIZED, "sized from memory with innodb_dedicated_server"),
    LeftOut(_V, "innodb_purge_threads", Why.SIZED, "1 up to 16 CPUs, else 4 (MySQL 8.4)"),
    LeftOut(_V, "innodb_read_io_threads", Why.SIZED, "half the CPUs (MySQL 8.4)"),
    LeftOut(_V, "innodb_parallel_read_threads", Why.SIZED, "an eighth of the CPUs (MySQL 8.4)"),
    LeftOut(_V, "innodb_doublewrite_files", Why.SIZED, "two per buffer pool instance (MySQL 8.4)"),
    LeftOut(_V, "innodb_buffer_pool_in_core_file", Why.HOST, "off where the kernel supports MADV_DONTDUMP (MySQL 8.4)"),
    LeftOut(_V, "temptable_max_ram", Why.SIZED, "3% of the host's memory (MySQL 8.4)"),
    LeftOut(Facet.BUILD_IDS, "*", Why.ARCH, "a build ID differs between arches by nature (kept, compared across runs)"),
    LeftOut(
        Facet.PACKAGES,
        "libunwind*",
        Why.ARCH,
        "Debian's gperftools links libunwind on amd64 only (on arm64 it unwinds with its own code)",
    ),
    LeftOut(Facet.PACKAGES, "libipt*", Why.ARCH, "Intel Processor Trace's decoder: x86 only (gdb uses it on amd64)"),
)


@dataclass(frozen=True)
class Neutral:
    """A part of a value said the same on every arch (a regex and what it reads as)."""

    facet: Facet
    pattern: str
    said: str
    why: Why
    reason: str


_ARCH_WORDS = r"\b(x86[_-]64|amd64|aarch64|arm64(?:v8)?|ppc64le|s390x)\b"
NEUTRAL: tuple[Neutral, ...] = (
    Neutral(Facet.PROGRAMS, _ARCH_WORDS, "<arch>", Why.ARCH, "a program's version output names the CPU it runs on"),
    Neutral(Facet.VARIABLES, _ARCH_WORDS, "<arch>", Why.ARCH, "a value may name the CPU (version_malloc_library)"),
    Neutral(
        Facet.PACKAGES,
        r"\+b\d+$",
        "",
        Why.ARCH,
        "a Debian binNMU (+bN): the same source rebuilt on some arches only",
    ),
)

# Words that name the arch, in a value: said as <arch> so `mysqld Ver 9.7.4 for Linux on
# x86_64` and `... on aarch64` compare equal.
ARCH_WORDS = re.compile(_ARCH_WORDS, re.IGNORECASE)
_NEUTRAL = {
    facet: [(re.compile(n.pattern, re.IGNORECASE), n.said) for n in NEUTRAL if n.facet is facet] for facet in Facet
}


def left_out(facet: Facet, name: str) -> LeftOut | None:
    lowered = name.lower()
    return next((r for r in LEFT_OUT if r.facet is facet and fnmatch.fnmatchcase(lowered, r.pattern)), None)


def arch_neutral(text: str) -> str:
    return ARCH_WORDS.sub("<arch>", text)


def _neutral(facet: Facet, value: str) -> str:
    for pattern, said in _NEUTRAL[facet]:
        value = pattern.sub(said, value)
    return value


def kept(facet: Facet, items: Mapping[str, str]) -> dict[str, str]:
    """`items` without what `LEFT_OUT` leaves out of `facet`, their values made the same on
    every arch where `NEUTRAL` says how (arch words, a Debian binNMU's suffix)."""
    return {name: _neutral(facet, value) for name, value in items.items() if left_out(facet, name) is None}
