"""Parity per tag, pure: what each cell's image and server really are (`Facts`, one per
facet: the server's version, its engines and plugins, character sets and collations,
global variables, the image's packages, its main programs' version output and build IDs),
the compact fingerprint a cell keeps of them (`FacetPrint`: a digest per facet, plus the
values of the small ones), and how the cells of one component on two arches differ
(`compare`, `compare_prints`): an `ArchParity` on the cell of the other arch.

What is left out of the comparison (paths, memory sizes, ids, what is arch by nature) is
`parity_rules.LEFT_OUT`, applied when facts are gathered (`parity_rules.kept`).
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field


class Facet(str, enum.Enum):
    """One kind of fact about a cell; in the order findings are said."""

    VERSION = "version"  # the server's @@version
    VERSION_COMMENT = "version-comment"  # its @@version_comment
    ENGINES = "engines"  # storage engine -> its support (SHOW ENGINES)
    PLUGINS = "plugins"  # plugin -> its status (SHOW PLUGINS)
    CHARSETS = "charsets"  # character set names
    COLLATIONS = "collations"  # collation names
    VARIABLES = "variables"  # global variable -> its value at start (SHOW GLOBAL VARIABLES), the host's left out
    PROGRAMS = "programs"  # main program -> its version output (arch words neutral)
    PACKAGES = "packages"  # package -> version (the image's dpkg, rpm or apk database)
    BUILD_IDS = "build-ids"  # main program -> its ELF build ID: arch by nature, kept, never compared


# Facets compared across arches: a build ID differs between arches by nature.
COMPARED: tuple[Facet, ...] = tuple(f for f in Facet if f is not Facet.BUILD_IDS)
KEEP_VALUES = 8  # a facet of at most this many items keeps its values on the cell's fingerprint
KEEP_DIFFERENCES = 6  # differences kept per facet in a finding; the rest are counted
DIGEST_HEX = 16
VERSION_NUMBER = re.compile(r"\d+\.\d+\.\d+")  # the server's own version in its @@version
MAIN_PACKAGE_WORD = "server"  # of the items carrying that version, those named so are kept first


@dataclass(frozen=True)
class Facts:
    """One facet of a cell, whole: name -> value (a set's members map to "")."""

    facet: Facet
    items: Mapping[str, str]
    source: str = ""  # where it was read: "sql", "dpkg", "rpm", "apk", "elf", "exec"


@dataclass(frozen=True)
class FacetPrint:
    """What a cell keeps of one facet: its digest and size, and its values when few."""

    facet: Facet
    digest: str
    count: int
    source: str = ""
    values: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Difference:
    """One item that differs: its value on the reference arch and on the other (None: absent)."""

    facet: Facet
    name: str  # the item ("rocksdb", "mariadb-server"); the facet's own value: ""
    reference: str | None
    other: str | None


@dataclass(frozen=True)
class ArchParity:
    """A cell compared with its component's cell on the reference arch (amd64 when it has
    one): how many things were compared, and what differs."""

    reference: str  # the arch compared with
    compared: int  # items compared over every facet both cells have
    facets: tuple[Facet, ...] = ()  # the facets both cells have
    differences: tuple[Difference, ...] = ()  # at most KEEP_DIFFERENCES per facet
    counts: Mapping[str, int] = field(default_factory=dict)  # facet value -> differences in all
    unknown: tuple[Facet, ...] = ()  # differ by digest, what differs not known (a merged report)

    @property
    def differs(self) -> bool:
        return bool(self.counts) or bool(self.unknown)

    def count(self, facet: Facet) -> int:
        return self.counts.get(facet.value, 0)


def digest(items: Mapping[str, str]) -> str:
    text = "\n".join(f"{name}\t{value}" for name, value in sorted(items.items()))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:DIGEST_HEX]


def print_of(facts: Facts) -> FacetPrint:
    values = dict(sorted(facts.items.items())) if len(facts.items) <= KEEP_VALUES else {}
    return FacetPrint(facts.facet, digest(facts.items), len(facts.items), facts.source, values)


def merged_prints(old: Iterable[FacetPrint], new: Iterable[FacetPrint]) -> tuple[FacetPrint, ...]:
    """A cell's fingerprint with `new` facets added (a facet gathered again replaces its
    print), in facet order."""
    by_facet = {p.facet: p for p in old}
    by_facet.update((p.facet, p) for p in new)
    return tuple(by_facet[f] for f in Facet if f in by_facet)


def merged_facts(old: Mapping[Facet, Facts], new: Iterable[Facts]) -> dict[Facet, Facts]:
    out = dict(old)
    out.update((f.facet, f) for f in new)
    return out


def reference_arch(arches: Sequence[str]) -> str:
    """The arch others are compared with: amd64 when there, else the first."""
    return "amd64" if "amd64" in arches else arches[0]


def own_versions(ref: Mapping[Facet, Facts], other: Mapping[Facet, Facts]) -> frozenset[str]:
    """The server's own version numbers on both arches (`11.8.3` of `11.8.3-MariaDB-1`)."""
    found = set()
    for facts in (ref.get(Facet.VERSION), other.get(Facet.VERSION)):
        for value in facts.items.values() if facts else ():
            match = VERSION_NUMBER.search(value)
            if match:
                found.add(match.group(0))
    return frozenset(found)


def telling_first(
    names: Sequence[str], a: Mapping[str, str], b: Mapping[str, str], versions: frozenset[str]
) -> list[str]:
    """Differing items, those whose values carry the server's own version first and of
    these a server package first (`mariadb-server 1:11.8.3-…`, not `libmariadb3` or a
    library that happens to sort before it), then by name."""

    def carries(name: str) -> bool:
        return any(v in (a.get(name) or "") or v in (b.get(name) or "") for v in versions)

    return sorted(names, key=lambda name: (not carries(name), MAIN_PACKAGE_WORD not in name, name))


def compare(reference: str, ref: Mapping[Facet, Facts], other: Mapping[Facet, Facts]) -> ArchParity:
    """`other` (a cell's facts) against `ref` (the reference arch's cell's), facet by facet."""
    compared = 0
    facets: list[Facet] = []
    differences: list[Difference] = []
    counts: dict[str, int] = {}
    versions = own_versions(ref, other)
    for facet in COMPARED:
        if facet not in ref or facet not in other:
            continue
        facets.append(facet)
        a, b = ref[facet].items, other[facet].items
        names = sorted(set(a) | set(b))
        compared += len(names)
        differ = [n for n in names if a.get(n) != b.get(n)]
        if differ:
            counts[facet.value] = len(differ)
            kept = telling_first(differ, a, b, versions)[:KEEP_DIFFERENCES]
            differences.extend(Difference(facet, n, a.get(n), b.get(n)) for n in kept)
    return ArchParity(reference, compared, tuple(facets), tuple(differences), counts)


def compare_prints(reference: str, ref: Iterable[FacetPrint], other: Iterable[FacetPrint]) -> ArchParity:
    """The same from two fingerprints alone (cells of reports run apart, then merged): a
    facet whose values were kept is compared item by item, any other by its digest."""
    a_prints, b_prints = {p.facet: p for p in ref}, {p.facet: p for p in other}
    whole_a = {f: Facts(f, p.values, p.source) for f, p in a_prints.items() if p.count == len(p.values)}
    whole_b = {f: Facts(f, p.values, p.source) for f, p in b_prints.items() if p.count == len(p.values)}
    found = compare(reference, whole_a, whole_b)
    compared, facets, unknown = found.compared, list(found.facets), []
    for facet in COMPARED:
        if facet in facets or facet not in a_prints or facet not in b_prints:
            continue
        facets.append(facet)
        compared += max(a_prints[facet].count, b_prints[facet].count)
        if a_prints[facet].digest != b_prints[facet].digest:
            unknown.append(facet)
    ordered = tuple(f for f in Facet if f in facets)
    return ArchParity(reference, compared, ordered, found.differences, found.counts, tuple(unknown))
