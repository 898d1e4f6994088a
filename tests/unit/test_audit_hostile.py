"""The build audit against programs a stranger can publish: linear in the file's size
whatever its headers say, stopped when its budget ends, and a path that is no program
file (a loop, a directory, a device) said as such, never "not found"."""

from __future__ import annotations

import struct
import time
from pathlib import Path

from ecoready.audit.elf import MAX_PROGRAM_HEADERS, MAX_SECTIONS, Elf
from ecoready.audit.program import audit_program
from ecoready.domain.specs import ImageFile
from ecoready.run.audit_stage import _audit_file

DATA = Path(__file__).resolve().parents[1] / "data" / "audit"
BASE = (DATA / "amd64-x86-64").read_bytes()
SIZE = 3_700_000  # the size of the program the issue was found with


def code_of(program: bytes) -> bytes:
    return bytes(next(code for _, code in Elf(program).code()))


def padded(size: int = SIZE) -> bytearray:
    """The real program's header, then its code again and again up to `size`."""
    text = code_of(BASE)
    body = bytearray(BASE[:64])
    while len(body) < size:
        body += text
    return body[:size]


def with_program_headers(count: int, size: int = SIZE) -> bytes:
    """`count` executable PT_LOAD headers, each naming the whole file, and no sections."""
    body = padded(size)
    phoff = len(body)
    for _ in range(count):
        body += struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0, size, size, 0x1000)
    struct.pack_into("<QQ", body, 32, phoff, 0)  # e_phoff, e_shoff
    struct.pack_into("<HHHHH", body, 54, 56, count & 0xFFFF, 64, 0, 0)  # phentsize, phnum, shentsize, shnum, shstrndx
    return bytes(body)


def with_sections(count: int, size: int = SIZE) -> bytes:
    """`count` executable PROGBITS sections, each naming the whole file, and symbol tables
    as many, each the whole file too."""
    body = padded(size)
    shoff = len(body)
    for i in range(count):
        kind = 1 if i % 2 == 0 else 2  # PROGBITS (code) and SYMTAB, alternating
        body += struct.pack("<IIQQQQIIQQ", 0, kind, 6, 0x400000, 0, size, 0, 0, 16, 24)
    struct.pack_into("<QQ", body, 32, 0, shoff)
    struct.pack_into("<HHHHH", body, 54, 56, 0, 64, count, 0)
    return bytes(body)


def test_overlapping_program_headers_are_read_once_each_byte() -> None:
    program = with_program_headers(MAX_PROGRAM_HEADERS)
    assert sum(len(code) for _, code in Elf(program).code()) <= len(program)
    start = time.monotonic()
    found = audit_program("haproxy", "/usr/sbin/haproxy", program)
    assert time.monotonic() - start < 5  # 256 times the file would take a minute and more
    assert found.machine == "amd64" and not found.note


def test_65535_program_headers_are_no_program_a_compiler_made() -> None:
    start = time.monotonic()
    found = audit_program("haproxy", "/usr/sbin/haproxy", with_program_headers(65_535))
    assert time.monotonic() - start < 5  # refused before reading them
    assert found.note == f"65535 program headers: more than the {MAX_PROGRAM_HEADERS} the audit reads"


def test_overlapping_sections_and_symbol_tables_are_read_once_each_byte() -> None:
    program = with_sections(MAX_SECTIONS // 4)
    elf = Elf(program)
    assert sum(len(code) for _, code in elf.code()) <= len(program)
    start = time.monotonic()
    found = audit_program("haproxy", "/usr/sbin/haproxy", program)
    assert time.monotonic() - start < 10
    assert found.machine == "amd64"
    assert audit_program("x", "/x", with_sections(MAX_SECTIONS + 1, 100_000)).note == (
        f"{MAX_SECTIONS + 1} section headers: more than the {MAX_SECTIONS} the audit reads"
    )


def test_the_work_stops_when_its_budget_ends() -> None:
    found = audit_program("haproxy", "/usr/sbin/haproxy", with_program_headers(1), deadline=time.monotonic() - 1)
    assert found.note == "not read to its end: the audit's time budget ran out"
    assert found.size == SIZE + 56  # named, with its size


def test_a_path_that_is_no_program_file_is_said_as_such_not_as_missing() -> None:
    for note in ("a symlink loop", "a directory", "a device", "a chain of more than 8 symlinks"):
        said = _audit_file(["haproxy"], ImageFile("/usr/sbin/haproxy", "/usr/sbin/haproxy", 0, note=note))
        assert said.path == "/usr/sbin/haproxy"
        assert said.note == f"not read: /usr/sbin/haproxy is {note}, not a program file"
