"""Parity per tag, pure parts: what is left out and why, the comparison of two cells'
facts (whole, or from their fingerprints alone), the package databases read as files, the
ELF build ID, how the reducer keeps the facts and the finding, and the run's parity stage
comparing a component's cells once all have finished."""

from __future__ import annotations

import sqlite3
import struct
import subprocess
from pathlib import Path

import pytest

from ecoready.audit.elf import Elf
from ecoready.audit.packages import apk, dpkg, installed, rpm_header, rpm_sqlite
from ecoready.domain.events import (
    CellFinished,
    CellPlanned,
    CellStarted,
    Event,
    FactsGathered,
    ParityCompared,
    RunStarted,
)
from ecoready.domain.model import Profile, Report
from ecoready.domain.parity import (
    KEEP_DIFFERENCES,
    KEEP_VALUES,
    Difference,
    Facet,
    Facts,
    compare,
    compare_prints,
    print_of,
    reference_arch,
)
from ecoready.domain.parity_rules import LEFT_OUT, Why, arch_neutral, kept, left_out
from ecoready.domain.specs import ImageFile
from ecoready.domain.state import fold
from ecoready.report.parity_words import finding
from ecoready.run.parity_stage import ParityWatch, parity_wanted

DATA = Path(__file__).resolve().parents[1] / "data"


def facts(**facets: dict[str, str]) -> dict[Facet, Facts]:
    out = {}
    for name, items in facets.items():
        facet = Facet(name.replace("_", "-"))
        out[facet] = Facts(facet, items)
    return out


AMD = facts(
    version={"": "11.8.3-MariaDB"},
    engines={"InnoDB": "DEFAULT", "rocksdb": "YES", "Aria": "YES"},
    plugins={"online_alter_log": "ACTIVE", "InnoDB": "ACTIVE"},
    packages={"mariadb-server": "1:11.8.3-1", "libc6": "2.41-12"},
)


# -- what is left out -----------------------------------------------------------------
def test_every_rule_says_why_and_paths_host_names_and_sizes_are_left_out() -> None:
    assert all(rule.reason and rule.pattern for rule in LEFT_OUT)
    variables = {
        "datadir": "/var/lib/mysql/",
        "hostname": "b3c1",
        "general_log_file": "b3c1.log",
        "innodb_buffer_pool_size": "134217728",
        "version_compile_machine": "aarch64",
        "server_uuid": "x",
        "gtid_binlog_pos": "0-1-3",
        "max_allowed_packet": "16777216",
        "innodb_data_file_path": "ibdata1:12M:autoextend",
        "version_malloc_library": "system jemalloc for x86_64",
    }
    assert kept(Facet.VARIABLES, variables) == {
        "max_allowed_packet": "16777216",
        "innodb_data_file_path": "ibdata1:12M:autoextend",  # configuration, not a host path
        "version_malloc_library": "system jemalloc for <arch>",
    }
    rule = left_out(Facet.VARIABLES, "Innodb_Use_Native_AIO")
    assert rule is not None and rule.why is Why.HOST and "io_uring" in rule.reason
    assert left_out(Facet.PACKAGES, "datadir") is None  # the rules are per facet


def test_arch_words_in_what_a_program_says_of_itself_are_neutral() -> None:
    amd = "mariadbd  Ver 11.8.3-MariaDB-1 from Debian for debian-linux-gnu on x86_64 (Debian n/a)"
    arm = "mariadbd  Ver 11.8.3-MariaDB-1 from Debian for debian-linux-gnu on aarch64 (Debian n/a)"
    assert arch_neutral(amd) == arch_neutral(arm) and "x86_64" not in arch_neutral(amd)
    assert kept(Facet.PROGRAMS, {"mysqld": "Ver 9.7.4 for Linux on x86_64"}) == {
        "mysqld": "Ver 9.7.4 for Linux on <arch>"
    }


# -- the comparison ---------------------------------------------------------------------
def test_the_same_facts_compare_equal_and_count_what_was_compared() -> None:
    same = compare("amd64", AMD, AMD)
    assert not same.differs and same.differences == ()
    assert same.compared == 1 + 3 + 2 + 2
    assert same.facets == (Facet.VERSION, Facet.ENGINES, Facet.PLUGINS, Facet.PACKAGES)


def test_a_variant_with_another_version_and_no_engine_differs_and_says_so() -> None:
    arm = facts(
        version={"": "11.8.4-MariaDB"},
        engines={"InnoDB": "DEFAULT", "Aria": "YES"},
        plugins={"InnoDB": "ACTIVE", "online_alter_log": "ACTIVE"},
        packages={"mariadb-server": "1:11.8.4-1", "libc6": "2.41-12"},
    )
    p = compare("amd64", AMD, arm)
    assert p.differs and p.counts == {"version": 1, "engines": 1, "packages": 1}
    assert Difference(Facet.ENGINES, "rocksdb", "YES", None) in p.differences
    assert finding("arm64", p) == (
        "arm64 differs from amd64: version 11.8.3-MariaDB vs 11.8.4-MariaDB; no `rocksdb` engine; "
        "`mariadb-server` 1:11.8.3-1 vs 1:11.8.4-1"
    )


def test_many_differences_are_counted_and_a_few_kept() -> None:
    many = {f"lib{i}": "1" for i in range(40)}
    other = {f"lib{i}": "2" for i in range(40)}
    p = compare("amd64", facts(packages=many), facts(packages=other))
    assert p.count(Facet.PACKAGES) == 40 and len(p.differences) == KEEP_DIFFERENCES
    said = finding("arm64", p)
    assert said.startswith("arm64 differs from amd64: 40 packages differ (`lib0` 1 vs 2, ") and said.endswith("…)")


def test_the_kept_differences_are_those_that_carry_the_server_s_own_version_first() -> None:
    libs = {f"lib{i}": "1" for i in range(20)}
    own = ("libmariadb3", "mariadb-backup", "mariadb-client", "mariadb-common", "mariadb-plugin-x", "mariadb-server")
    amd = facts(version={"": "11.8.3-MariaDB"}, packages={**libs, **{k: "1:11.8.3-1" for k in own}})
    arm = facts(
        version={"": "10.11.14-MariaDB"},
        packages={**{k: "2" for k in libs}, **{k: "1:10.11.14-1" for k in own}},
    )
    p = compare("amd64", amd, arm)
    kept = [d.name for d in p.differences if d.facet is Facet.PACKAGES]
    assert p.count(Facet.PACKAGES) == 26 and len(kept) == KEEP_DIFFERENCES
    # by name alone, lib0..lib5 would be kept and the server's package lost
    assert kept == [
        "mariadb-server",
        "libmariadb3",
        "mariadb-backup",
        "mariadb-client",
        "mariadb-common",
        "mariadb-plugin-x",
    ]


def test_build_ids_are_kept_but_never_compared_across_arches() -> None:
    amd = facts(build_ids={"mariadbd": "aa"}, version={"": "1"})
    arm = facts(build_ids={"mariadbd": "bb"}, version={"": "1"})
    p = compare("amd64", amd, arm)
    assert not p.differs and Facet.BUILD_IDS not in p.facets


def test_fingerprints_alone_compare_small_facets_by_value_and_large_ones_by_digest() -> None:
    big = {f"v{i}": "1" for i in range(KEEP_VALUES + 5)}
    a = [print_of(Facts(Facet.VERSION, {"": "1.0"})), print_of(Facts(Facet.VARIABLES, big))]
    b = [print_of(Facts(Facet.VERSION, {"": "1.1"})), print_of(Facts(Facet.VARIABLES, {**big, "v0": "2"}))]
    assert a[1].values == {} and a[0].values == {"": "1.0"}
    p = compare_prints("amd64", a, b)
    assert p.count(Facet.VERSION) == 1 and p.unknown == (Facet.VARIABLES,)
    assert p.compared == 1 + len(big)
    assert "its variables differ (digest" in finding("arm64", p)
    assert not compare_prints("amd64", a, a).differs


def test_the_reference_arch_is_amd64_when_there() -> None:
    assert reference_arch(["arm64", "amd64"]) == "amd64"
    assert reference_arch(["arm64", "s390x"]) == "arm64"


# -- package databases ------------------------------------------------------------------
DPKG = b"""Package: libc6
Status: install ok installed
Architecture: arm64
Version: 2.36-9+deb12u10

Package: removed-one
Status: deinstall ok config-files
Version: 1.0

Package: mariadb-server
Status: install ok installed
Architecture: arm64
Description: a server
 with a long description
Version: 1:10.11.14-0+deb12u2
"""


def test_dpkg_status_gives_installed_packages_only() -> None:
    assert dpkg(DPKG) == {"libc6": "2.36-9+deb12u10", "mariadb-server": "1:10.11.14-0+deb12u2"}


def test_apk_installed_database() -> None:
    text = b"C:Q1abc=\nP:musl\nV:1.2.5-r0\nA:aarch64\n\nP:mariadb\nV:11.4.5-r0\n"
    assert apk(text) == {"musl": "1.2.5-r0", "mariadb": "11.4.5-r0"}


def header(tags: dict[int, str | int]) -> bytes:
    """An rpm header as rpmdb keeps it: index count, data length, entries, data."""
    entries, data = b"", b""
    for tag, value in tags.items():
        if isinstance(value, int):
            data += b"\0" * (-len(data) % 4)
            entries += struct.pack(">iiii", tag, 4, len(data), 1)
            data += struct.pack(">I", value)
        else:
            entries += struct.pack(">iiii", tag, 6, len(data), 1)
            data += value.encode() + b"\0"
    return struct.pack(">II", len(tags), len(data)) + entries + data


def test_rpm_sqlite_database_headers(tmp_path: Path) -> None:
    assert rpm_header(header({1000: "mysql-community-server", 1001: "8.4.6", 1002: "1.el9"})) == {
        1000: "mysql-community-server",
        1001: "8.4.6",
        1002: "1.el9",
    }
    db = tmp_path / "rpmdb.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE Packages (hnum INTEGER PRIMARY KEY, blob BLOB NOT NULL)")
        conn.execute("INSERT INTO Packages (blob) VALUES (?)", (header({1000: "glibc", 1001: "2.34", 1002: "1"}),))
        conn.execute(
            "INSERT INTO Packages (blob) VALUES (?)", (header({1000: "perl", 1003: 4, 1001: "5.32", 1002: "2"}),)
        )
    data = db.read_bytes()
    assert rpm_sqlite(data) == {"glibc": "2.34-1", "perl": "4:5.32-2"}
    assert rpm_sqlite(b"\0" * 100) == {}  # Berkeley DB or anything else: nothing read
    files = [None, None, ImageFile("/var/lib/rpm/rpmdb.sqlite", "/var/lib/rpm/rpmdb.sqlite", len(data), data)]
    assert installed(files) == ("rpm", {"glibc": "2.34-1", "perl": "4:5.32-2"})
    assert installed([None, None, None]) is None


# -- the build ID -----------------------------------------------------------------------
def test_the_build_id_is_read_from_the_elf_notes() -> None:
    data = (DATA / "audit" / "arm64-lse").read_bytes()
    expected = subprocess.run(["readelf", "-n", str(DATA / "audit" / "arm64-lse")], capture_output=True, text=True)
    if expected.returncode != 0:
        pytest.skip("readelf is not installed")
    said = next(line.split(":", 1)[1].strip() for line in expected.stdout.splitlines() if "Build ID" in line)
    assert Elf(data).build_id == said and len(said) == 40


# -- the reducer and the run's parity stage ----------------------------------------------
def planned(component: str, *arches: str) -> tuple[CellPlanned, ...]:
    return tuple(CellPlanned(f"{component}/{a}", component, component, "server", a, "local", False) for a in arches)


START = RunStarted(
    "r", "2026-12-03T00:00:00Z", "m.toml", Profile.SMOKE, ("amd64", "arm64"), planned("db", "amd64", "arm64")
)


def gathered(cell_id: str, found: dict[Facet, Facts]) -> FactsGathered:
    return FactsGathered(cell_id, tuple(found.values()))


def test_the_parity_stage_compares_once_every_cell_of_the_component_finished() -> None:
    watch = ParityWatch()
    arm = {**AMD, Facet.VERSION: Facts(Facet.VERSION, {"": "10.11.14-MariaDB"})}
    events: list[Event] = [START, CellStarted("db/amd64", "t"), CellStarted("db/arm64", "t")]
    events += [gathered("db/amd64", AMD), gathered("db/arm64", arm)]
    out = [more for e in [*events, CellFinished("db/amd64", "t", 1.0)] for more in watch.see(e)]
    assert out == []  # the arm64 cell is still under way
    (compared,) = watch.see(CellFinished("db/arm64", "t", 1.0))
    assert isinstance(compared, ParityCompared) and set(compared.by_arch) == {"arm64"}
    report = fold([*events, CellFinished("db/amd64", "t", 1.0), CellFinished("db/arm64", "t", 1.0), compared])
    assert report.cells["db/amd64"].parity is None  # the reference
    p = report.cells["db/arm64"].parity
    assert p is not None and p.count(Facet.VERSION) == 1 and p.compared == 8
    prints = {fp.facet: fp for fp in report.cells["db/arm64"].facts}
    assert prints[Facet.VERSION].values == {"": "10.11.14-MariaDB"} and prints[Facet.PACKAGES].count == 2
    note = watch.note()
    assert note is not None and note.text == "parity: things compared per component across arches: db 8"
    # a re-run: the cell's facts and finding go; when it ends without facts, the finding goes too
    report = fold([CellStarted("db/arm64", "t2")], report)
    assert report.cells["db/arm64"].parity is None and report.cells["db/arm64"].facts == ()
    watch.see(CellStarted("db/arm64", "t2"))
    (cleared,) = watch.see(CellFinished("db/arm64", "t2", 1.0))
    assert isinstance(cleared, ParityCompared) and cleared.by_arch == {}
    assert watch.note() is None


def test_a_component_with_one_arch_or_without_facts_is_not_compared() -> None:
    watch = ParityWatch()
    start = RunStarted("r", "t", "m", Profile.SMOKE, ("amd64",), planned("db", "amd64"))
    one: list[Event] = [start, gathered("db/amd64", AMD), CellFinished("db/amd64", "t", 1)]
    assert [m for e in one for m in watch.see(e)] == []
    watch = ParityWatch()
    bare: list[Event] = [START, CellFinished("db/amd64", "t", 1), CellFinished("db/arm64", "t", 1)]
    assert [m for e in bare for m in watch.see(e)] == []


def test_parity_can_be_turned_off_for_a_run() -> None:
    assert parity_wanted({}) and parity_wanted({"ECOREADY_PARITY": "on"})
    assert not parity_wanted({"ECOREADY_PARITY": "off"}) and not parity_wanted({"ECOREADY_PARITY": "0"})


def test_reports_run_apart_are_compared_from_their_fingerprints_when_merged() -> None:
    from dataclasses import replace

    from ecoready.report.merge import merge
    from tests.support.reports_sample import lab_report

    base = lab_report("lab-run")

    def only(arch: str, version: str) -> Report:
        prints = (
            print_of(Facts(Facet.VERSION, {"": version})),
            print_of(Facts(Facet.PACKAGES, {f"p{i}": version for i in range(20)})),
        )
        cells = {k: replace(c, facts=prints, parity=None) for k, c in base.cells.items() if c.arch == arch}
        return replace(base, cells=cells, arches=(arch,))

    merged = merge([("amd64.json", only("amd64", "1.0")), ("arm64.json", only("arm64", "1.1"))])
    p = merged.cells["mariadb-10.11/arm64"].parity
    assert p is not None and p.count(Facet.VERSION) == 1 and p.unknown == (Facet.PACKAGES,)
    assert merged.cells["mariadb-10.11/amd64"].parity is None
    same = merge([("amd64.json", only("amd64", "1.0")), ("arm64.json", only("arm64", "1.0"))])
    assert not any(c.parity is not None and c.parity.differs for c in same.cells.values())


def test_what_the_lab_showed_differs_by_nature_is_left_out() -> None:
    # seen in the lab: binNMUs on arm64 (MySQL 9.7, Debian unstable), libunwind and libipt on amd64 only
    amd = {"dash": "0.5.12-12", "libunwind8": "1.8.1-0.4", "libipt2": "2.0.5-1", "mysql-server-core": "9.7.4-2"}
    arm = {"dash": "0.5.12-12+b1", "mysql-server-core": "9.7.4-2"}
    assert (
        kept(Facet.PACKAGES, amd) == kept(Facet.PACKAGES, arm) == {"dash": "0.5.12-12", "mysql-server-core": "9.7.4-2"}
    )
    assert kept(Facet.VARIABLES, {"server_uid": "hLHc4Q", "build_id": "cc8a18", "port": "3306"}) == {"port": "3306"}
