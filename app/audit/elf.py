"""A small ELF reader: what the build audit needs and nothing more.

The header (class, byte order, machine), program headers (PT_LOAD alignment, the
interpreter, PT_GNU_PROPERTY), section headers by name, `.note.gnu.property` (the
AArch64 BTI/PAC bits, the x86 ISA level a build declares), the strings of `.comment` and
`.GCC.command.line`, symbol names, and function starts (from `.eh_frame_hdr`'s search
table, which stripped programs keep, else from symbols). Every offset read from the file
is checked against its size: a truncated or hostile file raises NotAProgram, never
IndexError or struct.error.

Linear in the file's size whatever its headers say: at most `MAX_PROGRAM_HEADERS` program
headers and `MAX_SECTIONS` section headers are read (more is no program a compiler made:
NotAProgram), code that sections or segments name twice (overlapping ranges) is handed out
once, and symbol tables are read up to the file's size in all.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

from ecoready.domain.errors import NotAProgram

MAGIC = b"\x7fELF"
PT_LOAD, PT_INTERP, PT_GNU_PROPERTY = 1, 3, 0x6474E553
PF_X = 1
SHT_PROGBITS, SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 1, 2, 7, 11
SHF_EXECINSTR = 4
STT_FUNC, STT_GNU_IFUNC = 2, 10
NT_GNU_PROPERTY_TYPE_0 = 5
NT_GNU_BUILD_ID = 3
PT_NOTE = 4
MAX_BUILD_ID = 64  # bytes: a linker writes 20 (sha1) or 16 (md5, uuid)
GNU_PROPERTY_AARCH64_FEATURE_1_AND = 0xC0000000
GNU_PROPERTY_X86_ISA_1_NEEDED = 0xC0008002
GNU_PROPERTY_X86_ISA_1_USED = 0xC0010002

# e_machine -> the arch as Docker names it (64-bit ELF; 32-bit gets its own names below)
MACHINES_64: Mapping[int, str] = {62: "amd64", 183: "arm64", 21: "ppc64le", 22: "s390x", 243: "riscv64", 258: "loong64"}
MACHINES_32: Mapping[int, str] = {3: "386", 40: "arm", 8: "mips", 20: "ppc", 243: "riscv32"}
MAX_PROGRAM_HEADERS = 256  # a linked program has about ten
MAX_SECTIONS = 4096  # a linked program has tens (sections per function are merged by the linker)


@dataclass(frozen=True)
class Segment:
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    align: int


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    align: int


class Elf:
    """A parsed ELF file over its bytes (kept, not copied)."""

    def __init__(self, data: bytes) -> None:
        if len(data) < 52 or data[:4] != MAGIC:
            raise NotAProgram("not an ELF file" + (" (a script)" if data[:2] == b"#!" else ""))
        if data[4] not in (1, 2) or data[5] not in (1, 2):
            raise NotAProgram("an ELF file of an unknown class or byte order")
        self.data = memoryview(data)
        self.bits = 64 if data[4] == 2 else 32
        self.little = data[5] == 1
        self._end = "<" if self.little else ">"
        if self.bits == 64:
            fields = self._unpack("HHIQQQIHHHHHH", 16)
            self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx = fields
        else:
            fields = self._unpack("HHIIIIIHHHHHH", 16)
            self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, shstrndx = fields
        if phnum > MAX_PROGRAM_HEADERS:
            raise NotAProgram(f"{phnum} program headers: more than the {MAX_PROGRAM_HEADERS} the audit reads")
        if shoff and shnum > MAX_SECTIONS:
            raise NotAProgram(f"{shnum} section headers: more than the {MAX_SECTIONS} the audit reads")
        self.segments = tuple(self._segment(phoff + i * phentsize) for i in range(phnum))
        rows = [self._section(shoff + i * shentsize) for i in range(shnum)] if shoff else []
        names_at = rows[shstrndx][4] if 0 < shstrndx < len(rows) else None
        self.sections = tuple(
            Section(self._cstring(names_at + row[0]) if names_at is not None else "", *row[1:]) for row in rows
        )

    # -- raw reads ----------------------------------------------------------------------
    def _unpack(self, fmt: str, offset: int) -> tuple[int, ...]:
        layout = struct.Struct(self._end + fmt)
        if offset < 0 or offset + layout.size > len(self.data):
            raise NotAProgram("a truncated ELF file (a header points past its end)")
        values: tuple[int, ...] = layout.unpack_from(self.data, offset)
        return values

    def _segment(self, offset: int) -> Segment:
        if self.bits == 64:
            ptype, flags, off, vaddr, _, filesz, _, align = self._unpack("IIQQQQQQ", offset)
        else:
            ptype, off, vaddr, _, filesz, _, flags, align = self._unpack("IIIIIIII", offset)
        return Segment(ptype, flags, off, vaddr, filesz, align)

    def _section(self, offset: int) -> tuple[int, ...]:
        """(name offset, type, flags, addr, offset, size, link, align): a `Section` once the
        name is looked up."""
        if self.bits == 64:
            name, stype, flags, addr, off, size, link, _, align, _ = self._unpack("IIQQQQIIQQ", offset)
        else:
            name, stype, flags, addr, off, size, link, _, align, _ = self._unpack("IIIIIIIIII", offset)
        return name, stype, flags, addr, off, size, link, align

    def _cstring(self, offset: int, limit: int = 4096) -> str:
        if not 0 <= offset < len(self.data):
            return ""
        chunk = bytes(self.data[offset : offset + limit])
        return chunk.split(b"\0", 1)[0].decode("utf-8", "replace")

    def bytes_of(self, section: Section) -> memoryview:
        if section.type == 8:  # SHT_NOBITS (.bss): nothing in the file
            return self.data[0:0]
        if section.offset + section.size > len(self.data):
            raise NotAProgram(f"a truncated ELF file ({section.name} points past its end)")
        return self.data[section.offset : section.offset + section.size]

    # -- what the audit asks ------------------------------------------------------------
    @property
    def arch(self) -> str:
        """The arch as Docker names it, or `EM <n>` for a machine not in the tables."""
        if self.machine == 21 and self.bits == 64 and not self.little:
            return "ppc64"
        table = MACHINES_64 if self.bits == 64 else MACHINES_32
        return table.get(self.machine, f"EM {self.machine}")

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def code(self) -> Iterator[tuple[int, memoryview]]:
        """(address, bytes) of each executable section; of each executable segment when the
        file has no section headers. Each byte of the file at most once: a range that
        overlaps one handed out already is cut to what is new (the sum is the file's size
        at most, however many headers name the same bytes)."""
        found = [s for s in self.sections if s.type == SHT_PROGBITS and s.flags & SHF_EXECINSTR and s.size]
        if found:
            for section in found:
                self.bytes_of(section)  # a section past the end is a truncated file
            ranges = [(s.offset, s.offset + s.size, s.addr) for s in found]
        else:
            ranges = [
                (g.offset, min(g.offset + g.filesz, len(self.data)), g.vaddr)
                for g in self.segments
                if g.type == PT_LOAD and g.flags & PF_X and g.offset < len(self.data)
            ]
        covered = 0  # the file is handed out up to here, in offset order
        for start, end, address in sorted(ranges):
            begin = max(start, covered)
            if begin < end:
                yield address + (begin - start), self.data[begin:end]
                covered = end

    @property
    def load_align(self) -> int:
        """The largest alignment of a PT_LOAD segment (0 when there is none)."""
        return max((s.align for s in self.segments if s.type == PT_LOAD), default=0)

    @property
    def interpreter(self) -> str:
        segment = next((s for s in self.segments if s.type == PT_INTERP), None)
        return self._cstring(segment.offset, 256) if segment else ""

    @cached_property
    def properties(self) -> dict[int, int]:
        """GNU property type -> its 32-bit value, from `.note.gnu.property` (or PT_GNU_PROPERTY)."""
        found: dict[int, int] = {}
        section = self.section(".note.gnu.property")
        if section is not None:
            where, size = section.offset, section.size
        else:
            segment = next((s for s in self.segments if s.type == PT_GNU_PROPERTY), None)
            if segment is None:
                return found
            where, size = segment.offset, segment.filesz
        align = 8 if self.bits == 64 else 4
        end = where + size
        while where + 12 <= end:
            namesz, descsz, ntype = self._unpack("III", where)
            name_at = where + 12
            desc_at = name_at + _round(namesz, 4)
            if ntype == NT_GNU_PROPERTY_TYPE_0 and bytes(self.data[name_at : name_at + namesz]) == b"GNU\0":
                found.update(self._gnu_properties(desc_at, descsz, align))
            where = desc_at + _round(descsz, align)
        return found

    @cached_property
    def build_id(self) -> str:
        """The GNU build ID in hex (`.note.gnu.build-id`, or a PT_NOTE segment), "" when none."""
        section = self.section(".note.gnu.build-id")
        places = [(section.offset, section.size)] if section is not None else []
        places += [(s.offset, s.filesz) for s in self.segments if s.type == PT_NOTE and not places]
        for where, size in places:
            end = min(where + size, len(self.data))
            while where + 12 <= end:
                namesz, descsz, ntype = self._unpack("III", where)
                name_at = where + 12
                desc_at = name_at + _round(namesz, 4)
                if ntype == NT_GNU_BUILD_ID and bytes(self.data[name_at : name_at + namesz]) == b"GNU\0":
                    return bytes(self.data[desc_at : desc_at + min(descsz, MAX_BUILD_ID)]).hex()
                where = desc_at + _round(descsz, 4)
        return ""

    def _gnu_properties(self, where: int, size: int, align: int) -> Iterator[tuple[int, int]]:
        end = where + size
        while where + 8 <= end:
            ptype, datasz = self._unpack("II", where)
            if datasz == 4:
                yield ptype, self._unpack("I", where + 8)[0]
            where += 8 + _round(datasz, align)

    def strings(self, name: str, limit: int = 64) -> list[str]:
        """The NUL-separated strings of a section (`.comment`, `.GCC.command.line`)."""
        section = self.section(name)
        if section is None:
            return []
        raw = bytes(self.bytes_of(section)[: 64 * 1024])
        return [s.decode("utf-8", "replace") for s in raw.split(b"\0") if s.strip()][:limit]

    def _tables(self) -> Iterator[Section]:
        """The symbol tables, each once, until their sizes add up to the file's."""
        seen: set[tuple[int, int]] = set()
        budget = len(self.data)
        for table in self.sections:
            if table.type not in (SHT_SYMTAB, SHT_DYNSYM) or (table.offset, table.size) in seen:
                continue
            seen.add((table.offset, table.size))
            budget -= table.size
            if budget < 0:
                return
            yield table

    def has_symbol(self, name: bytes) -> bool:
        """Whether a symbol table names `name` (exact, searched in the string tables)."""
        needle = b"\0" + name + b"\0"
        searched: set[int] = set()
        for table in self._tables():
            if 0 < table.link < len(self.sections) and table.link not in searched:
                searched.add(table.link)
                if _contains(self.bytes_of(self.sections[table.link]), needle):
                    return True
        return False

    def function_starts(self) -> list[int]:
        """Sorted addresses where functions begin: `.eh_frame_hdr`'s table, else the symbols."""
        starts = self._eh_frame_starts() or self._symbol_starts()
        return sorted(set(starts))

    def _eh_frame_starts(self) -> list[int]:
        header = self.section(".eh_frame_hdr")
        if header is None or header.size < 12:
            return []
        raw = self.bytes_of(header)
        version, ptr_enc, count_enc, table_enc = raw[0], raw[1], raw[2], raw[3]
        ptr_size = _ENCODED_SIZE.get(ptr_enc & 0x0F)
        # the usual form: the count as udata4, the table as datarel sdata4 pairs
        if version != 1 or ptr_size is None or count_enc != 0x03 or table_enc != 0x3B:
            return []
        count = self._unpack("I", header.offset + 4 + ptr_size)[0]
        table = 4 + ptr_size + 4
        if table + count * 8 > header.size:
            return []
        pairs = struct.unpack_from(f"{self._end}{count * 2}i", raw, table)
        return [header.addr + pairs[i] for i in range(0, len(pairs), 2)]

    def _symbol_starts(self) -> list[int]:
        size = 24 if self.bits == 64 else 16
        starts = []
        for table in self._tables():
            raw = self.bytes_of(table)
            for at in range(0, len(raw) - size + 1, size):
                if self.bits == 64:
                    info, value = raw[at + 4], struct.unpack_from(self._end + "Q", raw, at + 8)[0]
                else:
                    value, info = struct.unpack_from(self._end + "I", raw, at + 4)[0], raw[at + 12]
                if info & 0x0F in (STT_FUNC, STT_GNU_IFUNC) and value:
                    starts.append(value)
        return starts


_ENCODED_SIZE = {0x00: 8, 0x02: 2, 0x03: 4, 0x04: 8, 0x0A: 2, 0x0B: 4, 0x0C: 8}


def _contains(data: memoryview, needle: bytes) -> bool:
    """`needle in data` without copying `data` (a regex searches a buffer in place)."""
    return re.search(re.escape(needle), data) is not None


def _round(value: int, align: int) -> int:
    return (value + align - 1) // align * align
