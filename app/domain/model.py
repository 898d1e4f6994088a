"""The domain model: frozen dataclasses and enums shared by every layer.

Nothing here does I/O. The report is rebuilt (never mutated) by `state.reduce`, so the TUI
and the headless path always look at the same values.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ecoready.domain.blame import Blame, Trouble, blame_for, said
from ecoready.domain.blame import Outcome as Outcome  # said in blame.py, taken from here by most
from ecoready.domain.blame import Stage as Stage
from ecoready.domain.blame import Status as Status
from ecoready.domain.cpus import ProgramFit, Target
from ecoready.domain.images import ImageInfo, RegistryStatus
from ecoready.domain.packaging import Packaging
from ecoready.domain.parity import ArchParity, FacetPrint


class Category(str, enum.Enum):
    SERVER = "server"
    LOAD_BALANCER = "load-balancer"
    MONITORING = "monitoring"
    HA = "ha"
    BACKUP = "backup"
    CONNECTOR = "connector"
    SHELL = "shell"
    TOOLKIT = "toolkit"
    APP = "app"  # the user's own services, checked by the generic `command` probe


class Profile(str, enum.Enum):
    SMOKE = "smoke"
    QUICK = "quick"
    FULL = "full"


ARCH_ALIASES: Mapping[str, str] = {
    "amd64": "amd64",
    "x86_64": "amd64",
    "x86-64": "amd64",
    "arm64": "arm64",
    "aarch64": "arm64",
    "arm64/v8": "arm64",
    "arm64v8": "arm64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
}

# uname -m as the kernel (and @@version_compile_machine) reports it, per Docker arch.
UNAME_MACHINE: Mapping[str, str] = {
    "amd64": "x86_64",
    "arm64": "aarch64",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
}


def normalize_arch(name: str) -> str | None:
    """Docker arch name for any common spelling, or None when unknown."""
    return ARCH_ALIASES.get(name.strip().lower())


@dataclass(frozen=True)
class TlsFiles:
    """Client certificates for a tcp:// engine (the ca.pem, cert.pem, key.pem of DOCKER_CERT_PATH)."""

    ca: str
    cert: str
    key: str


@dataclass(frozen=True)
class Host:
    """A Docker engine that runs cells, from [[hosts]]. `arches`: the ones it may serve
    (empty: its native arch, plus what it can emulate when `emulate`)."""

    name: str
    docker: str = ""  # empty: the local engine (DOCKER_HOST or the default socket)
    arches: tuple[str, ...] = ()
    emulate: bool = True
    price_per_hour: float | None = None
    cpu_ghz: float | None = None
    tls: TlsFiles | None = None  # tcp:// with client certificates
    concurrency: int | None = None  # cells at once on this host (default: from its CPUs)
    # the cost model: one price unit of the three (hour, month, year), as the user gave it
    # or from the price file for `instance`; vCPUs and memory for the same-cost view
    price_per_month: float | None = None
    price_per_year: float | None = None
    vcpus: int | None = None
    memory_gib: float | None = None
    instance: str = ""  # "aws:m8g.2xlarge": its numbers came from the price file
    price_source: str = ""  # where the price file took them from (a provider's page)
    price_date: str = ""  # when it did (YYYY-MM-DD)


@dataclass(frozen=True)
class Component:
    id: str
    name: str
    category: Category
    probe: str
    image: str
    backend: str | None = None
    arches: tuple[str, ...] = ()
    timeout_s: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    service: str = ""  # the compose service (or container) `ecoready init` made it from
    platform: str = ""  # that service's `platform:` pin ("linux/amd64"); the plan says if it can go
    pinned_at: tuple[str, ...] = ()  # where that pin is written (Kubernetes: file, object, YAML path)
    bench: bool = True  # False: a row that only tests publishing (`bench = false`) gets no bench stage
    # `cpus = 0.5`: the CPU time its own containers may use, as a share of CPUs (the engine's
    # quota, NanoCpus); None: no quota. ecoready's tools (sysbench) are never limited by it.
    cpus: float | None = None


@dataclass(frozen=True)
class Check:
    name: str
    outcome: Outcome
    detail: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class StageResult:
    stage: Stage
    outcome: Outcome | None = None  # None while running
    seconds: float = 0.0
    detail: str = ""
    checks: tuple[Check, ...] = ()
    blame: Blame | None = None  # why it did not pass (None: it passed or is under way)

    @property
    def blamed(self) -> Blame | None:
        """Its blame, or the one its outcome implies (a stage ended by hand-made events)."""
        return blame_for(self.stage, self.outcome, self.blame)

    @property
    def shown(self) -> str:
        """Its detail as every view shows it: its cause's words first (`missing: …`)."""
        return said(self.blamed, self.detail)


@dataclass(frozen=True)
class BenchRun:
    """One sysbench run (after its warmup)."""

    workload: str  # oltp_point_select, oltp_read_only, ...
    access: str  # uniform | zipfian
    threads: int
    repeat: int  # 1-based
    tps: float
    qps: float
    p95_ms: float
    # transactions sysbench restarted after a deadlock, lock wait timeout or snapshot conflict
    # (its "ignored errors"): shown beside the numbers, not a failure (probe_api/sysbench.py)
    errors: int
    reconnects: int
    seconds: float

    @property
    def ok(self) -> bool:
        return self.tps > 0


@dataclass(frozen=True)
class BenchSeries:
    """The repeats of one (workload, access, threads) point and their statistics."""

    workload: str
    access: str
    threads: int
    runs: tuple[BenchRun, ...]
    median_tps: float
    median_qps: float
    median_p95_ms: float
    cv: float  # coefficient of variation of tps over the repeats (0.0 for one run)
    # `cell stage` of every other cell's stage that ran on the host while these runs did:
    # () = measured alone; None = not recorded (a report older than the record)
    shared_with: tuple[str, ...] | None = None

    @property
    def alone(self) -> bool:
        """Measured with nothing else of the run on its host."""
        return self.shared_with == ()


@dataclass(frozen=True)
class BenchResult:
    """The bench stage's outcome for one cell: what ran, where, and the numbers."""

    tool: str  # "sysbench 1.0.20"
    zipfian: str  # "native" | "lua" | "" (not used)
    target: str  # "server" | "through <proxy>"
    emulated: bool  # emulated numbers are never performance
    profile: str
    cpu_model: str = ""
    cpus: int = 0
    page_size: int = 0
    image_digests: Mapping[str, str] = field(default_factory=dict)  # role -> digest
    series: tuple[BenchSeries, ...] = ()
    # role -> CPUs it was pinned to ({"server": "0", "sysbench": "1"}); empty: not pinned
    cpusets: Mapping[str, str] = field(default_factory=dict)
    method: str = ""  # one line: tables x rows, threads, run length, warmup, repeats


class Severity(str, enum.Enum):
    """How much a finding of the build audit matters where the cell runs."""

    FINE = "fine"  # a good property, or one this platform has what it needs for
    NOTE = "note"  # worth knowing: a build choice, a property of other platforms
    HAZARD = "hazard"  # it runs, but costs performance or will fail on some platforms
    FATAL = "fatal"  # it cannot run here (or is not what the image says it is)


@dataclass(frozen=True)
class Finding:
    """One sentence of the build audit about one program, crossed with the platform."""

    program: str
    code: str  # stable: "lse", "no-lse", "crc32", "page-4k", "x86-level", "mislabelled", "not-found", ...
    severity: Severity
    text: str


@dataclass(frozen=True)
class BinaryAudit:
    """What the build audit read in one of a cell's main programs, without running it."""

    program: str  # the name looked for ("mariadbd")
    path: str = ""  # where it is in the image, links followed ("" = not found)
    machine: str = ""  # its ELF machine as Docker names arches ("amd64", "arm64"; "EM 8" when unknown)
    size: int = 0  # bytes
    load_align: int = 0  # the largest PT_LOAD alignment: 4096 will not load on 64 KiB-page kernels
    interpreter: str = ""  # the dynamic loader it asks for ("" = static)
    build: str = ""  # what it records of its build: compiler, -march/-mcpu options
    lse: str = ""  # arm64 atomics: "inline" (LSE), "outline" (LSE chosen at run time), "none"
    lse_count: int = 0  # LSE instructions (CAS, LDADD, SWP, ...)
    llsc_count: int = 0  # exclusive loads: one per load/store-exclusive loop
    crc32_count: int = 0  # CRC32 instructions (arm64 CRC32/CRC32C, amd64 SSE4.2 crc32)
    pmull_count: int = 0  # carry-less multiplies (arm64 PMULL on 64-bit polynomials, amd64 PCLMULQDQ)
    sve_count: int = 0  # arm64: instructions of the SVE encoding space (SVE, SVE2)
    bti: bool = False  # arm64: built for branch target identification
    pac: bool = False  # arm64: built with pointer authentication
    x86_needs: str = ""  # amd64: the x86-64 level its code needs ("x86-64" is the baseline)
    x86_uses: str = ""  # amd64: the highest level of any instruction (paths chosen at run time too)
    x86_basis: str = ""  # how x86_needs was decided
    note: str = ""  # why there is nothing more: not found, not an ELF program, too large
    build_id: str = ""  # its GNU build ID in hex ("" = none recorded): which build this is


@dataclass(frozen=True)
class AuditResult:
    """The build audit of one cell's image: its main programs and the findings about them,
    crossed with the platform fitness of the cell's host and arch once that is known."""

    arch: str
    image_digest: str  # what was read: the per-arch manifest digest (or the image id)
    binaries: tuple[BinaryAudit, ...] = ()
    findings: tuple[Finding, ...] = ()
    platform: str = ""  # "host/arch" whose fitness the findings take into account ("" = none yet)
    seconds: float = 0.0  # reading and parsing (what the cache saves)
    cached: bool = False  # read from the audit cache: nothing read from the image
    targets: tuple[ProgramFit, ...] = ()  # each program on each target CPU the matrix names (app/audit/targets.py)


class Verification(str, enum.Enum):
    """How far a probe kind has been checked against the software it probes."""

    LAB = "lab"  # verified here against the real software (the lab's images, built to the upstream contracts)
    CONTRACT = "contract"  # written from the image's documented contract only: never run against it here


CONTRACT_CAVEAT = "this probe has not been verified against the real image; the failure may be ecoready's"


@dataclass(frozen=True)
class CellResult:
    id: str  # "component/arch"
    component: str
    name: str
    category: Category
    arch: str
    host: str
    emulated: bool
    status: Status = Status.PENDING
    stage: Stage | None = None  # the stage under way while running
    stages: tuple[StageResult, ...] = ()
    image: ImageInfo | None = None
    detail: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    seconds: float = 0.0
    log_tail: tuple[str, ...] = ()
    bench: BenchResult | None = None
    packaging: Packaging | None = None  # driver rows: the driver's package for this arch
    audit: AuditResult | None = None
    # the probe's verification (app/matrix/kinds.py); None in reports written before it was said
    verification: Verification | None = None
    # parity (domain/parity.py): what the cell's image and server are, a digest per facet;
    # and, on a cell of another arch than its component's reference, how it compares with it
    facts: tuple[FacetPrint, ...] = ()
    parity: ArchParity | None = None

    @property
    def queued(self) -> bool:
        """Under way but waiting for its turn (a slot or a pull): no stage runs now."""
        return self.status is Status.RUNNING and self.stage is None

    def stage_result(self, stage: Stage) -> StageResult | None:
        for result in self.stages:
            if result.stage is stage:
                return result
        return None


@dataclass(frozen=True)
class HostFacts:
    """What a host turned out to be: native arch, emulators, engine version."""

    name: str
    native_arch: str
    emulated_arches: tuple[str, ...] = ()
    emulators: Mapping[str, str] = field(default_factory=dict)  # arch -> emulator description
    docker_version: str = ""
    api_version: str = ""
    cpus: int = 0
    memory_bytes: int = 0
    kernel: str = ""
    price_per_hour: float | None = None  # USD, from [[hosts]] (cost model)
    cpu_ghz: float | None = None
    # one price unit of the three as [[hosts]] gave it (or the price file, per hour), the
    # vCPUs and memory the host is billed for, and where the numbers of an `instance` came from
    price_per_month: float | None = None
    price_per_year: float | None = None
    vcpus: int | None = None
    memory_gib: float | None = None
    instance: str = ""
    price_source: str = ""
    price_date: str = ""
    docker: str = ""  # the engine's address from [[hosts]] ("" = the local engine)
    # The arches it runs cells for, native first when it serves it; () = native + emulated.
    serves: tuple[str, ...] = ()
    # Why it ran no cell ("unreachable: ...") or stopped running them ("lost mid-run: ...").
    error: str = ""
    # Which engine answered and how it was found ("Docker Engine 26.1.5 at unix://... (the
    # default socket)"), and its kind (engine/engine_kinds.py: the remedies said for it).
    engine: str = ""
    engine_kind: str = ""

    @property
    def arches(self) -> tuple[str, ...]:
        """The arches this host runs cells for."""
        if self.serves:
            return self.serves
        return tuple(a for a in (self.native_arch, *self.emulated_arches) if a)


@dataclass(frozen=True)
class Hazard:
    """A known risk of a platform for databases: a stable code and one sentence."""

    code: str  # "page-64k", "no-lse", "thp-always", "x86-64-level", "numa", "emulated", ...
    text: str


@dataclass(frozen=True)
class PlatformFitness:
    """One host and arch as a container of that arch sees it: the view the database gets
    (under emulation: what qemu shows). Gathered through the engine, interpreted by
    app/run/fitness.py."""

    host: str
    arch: str
    emulated: bool
    image: str = ""  # whose container was asked
    machine: str = ""  # uname -m inside
    kernel: str = ""
    cpu_model: str = ""
    cpu_part: str = ""  # MIDR "0x41:0xd0c" or x86 "GenuineIntel:0x6:0x55" ("" emulated): named by domain/cpus.py
    cpus: int = 0  # online CPUs the container may use
    mhz: float | None = None  # maximum (cpufreq) or current (cpuinfo) clock
    features: tuple[str, ...] = ()  # the CPU features that matter to databases, present
    missing: tuple[str, ...] = ()  # ... and absent
    x86_level: str = ""  # highest x86-64 microarchitecture level ("x86-64-v3"); amd64 only
    cache_line: int | None = None  # bytes
    page_size: int | None = None  # bytes
    thp: str = ""  # transparent huge pages: always, madvise or never
    numa_nodes: int | None = None
    hazards: tuple[Hazard, ...] = ()
    error: str = ""  # why it could not be asked (then the facts above are empty)


@dataclass(frozen=True)
class ComponentOrigin:
    """A component as the matrix pinned it: its image reference and, when `ecoready init`
    wrote the row, the compose service (or Kubernetes workload) and its arch pin, with where
    the pin is written. Input of the migration plan."""

    component: str
    image: str
    service: str = ""
    platform: str = ""
    pinned_at: tuple[str, ...] = ()


@dataclass(frozen=True)
class TagSearch:
    """What a repository's tag list offered a cell whose image was missing for its arch: a
    tag of the same version that publishes the arch (`use_tag`), else the oldest newer
    version that does (`upgrade_to`). Searched during the run and kept in the report, so
    the migration plan is rendered from the report alone."""

    component: str
    arch: str
    reference: str
    tags_listed: int = 0  # tags in the repository's list
    looked_at: int = 0  # tags whose manifests were asked (bounded)
    use_tag: str = ""
    upgrade_to: str = ""
    error: str = ""  # why the search could not finish (the registry); the cell stays missing


@dataclass(frozen=True)
class Migration:
    """What the migration plan is made from, besides the cells."""

    origins: tuple[ComponentOrigin, ...] = ()
    searches: tuple[TagSearch, ...] = ()


@dataclass(frozen=True)
class Note:
    """A run-wide fact worth a line in the report. `about`: the trouble many cells share
    that it says (a registry not asked), for the views that say that trouble once already."""

    text: str
    about: Trouble | None = None


@dataclass(frozen=True)
class Report:
    schema_version: int
    run_id: str
    tool_version: str
    matrix: str
    profile: Profile
    started_at: str
    finished_at: str | None = None
    interrupted: bool = False
    hosts: tuple[HostFacts, ...] = ()
    arches: tuple[str, ...] = ()
    cells: Mapping[str, CellResult] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    registries: tuple[RegistryStatus, ...] = ()  # as last observed, in order of first contact
    platforms: tuple[PlatformFitness, ...] = ()  # platform fitness per (host, arch)
    migration: Migration = field(default_factory=Migration)
    title: str = ""  # the matrix's `title` (reports of older runs have none: then the file)
    # the run ids of the reports `report --merge` made this one of (() = one run): numbers of
    # cells from different runs ran under different conditions and are never set side by side
    merged_from: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()  # the target CPUs the matrix names (`targets = [...]`)
    # which matrix, whatever path named it: its text's digest and its resolved path's digest
    # ("" in reports of older runs: then `matrix`, the path as given, is all there is)
    matrix_content: str = ""
    matrix_place: str = ""


REPORT_SCHEMA_VERSION = 1
