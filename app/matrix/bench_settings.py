"""What a bench stage runs: the profiles, the `[sysbench]` overrides of a matrix, and the
settings one cell ends up with (pure; config and plan use it, the bench driver follows it).

Precedence, lowest first: the profile's built-in defaults, the `[sysbench]` table's own
keys, its `[sysbench.quick]` / `[sysbench.full]` table. Emulated cells then get a reduced
bench (`[sysbench.emulated]`, defaults below): emulated numbers are not performance, the
bench only proves that the path works on that arch, so it need not be long.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ecoready.domain.model import Profile

WORKLOADS: tuple[str, ...] = (
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
)
ACCESS_PATTERNS: tuple[str, ...] = ("uniform", "zipfian")
# Without `[sysbench] image`, sysbench runs in an image derived on first use from a public
# multi-arch base: Debian's slim image with the distribution's sysbench, per arch, kept as a
# local image (app/probe_api/tool_images.py). `[sysbench] base` names another Debian base.
DEFAULT_IMAGE = ""  # "": derived from SYSBENCH_BASE
SYSBENCH_BASE = "debian:trixie-slim"
DERIVE_S = 240.0  # seconds, native, for deriving it (apt-get update and install): the first run's only
DEFAULT_ZIPF_EXP = 0.8
MAX_THREADS = 1024


@dataclass(frozen=True)
class BenchOverrides:
    """What a matrix sets in one `[sysbench]` table; None = not set there."""

    workloads: tuple[str, ...] | None = None
    access: tuple[str, ...] | None = None
    threads: tuple[int, ...] | None = None
    time: int | None = None  # seconds per measured run
    warmup: int | None = None  # seconds of unmeasured run before each workload
    repeats: int | None = None
    tables: int | None = None
    table_size: int | None = None
    zipf_exp: float | None = None


KNOBS: tuple[str, ...] = tuple(f.name for f in fields(BenchOverrides))


@dataclass(frozen=True)
class SysbenchConfig:
    """The `[sysbench]` table of a matrix."""

    image: str = DEFAULT_IMAGE  # where sysbench runs (published for every benched arch); "" derived
    base: str = SYSBENCH_BASE  # the public Debian image sysbench is derived from, when no `image`
    common: BenchOverrides = field(default_factory=BenchOverrides)
    quick: BenchOverrides = field(default_factory=BenchOverrides)
    full: BenchOverrides = field(default_factory=BenchOverrides)
    emulated: BenchOverrides = field(default_factory=BenchOverrides)


@dataclass(frozen=True)
class BenchSettings:
    """Everything one cell's bench stage does."""

    profile: str
    image: str  # "": derived from `base` on first use
    workloads: tuple[str, ...]
    access: tuple[str, ...]
    threads: tuple[int, ...]
    time: int
    warmup: int
    repeats: int
    tables: int
    table_size: int
    zipf_exp: float = DEFAULT_ZIPF_EXP
    reduced: bool = False  # the emulated variant: proves the path, measures nothing
    base: str = SYSBENCH_BASE  # what a derived sysbench image is made from (when `image` is "")

    @property
    def tool_image(self) -> str:
        """The sysbench image as said in messages: the one named, or what it is derived from."""
        return self.image or f"sysbench on {self.base}"

    @property
    def points(self) -> int:
        """Measured runs: workloads x access x threads x repeats."""
        return len(self.workloads) * len(self.access) * len(self.threads) * self.repeats

    def describe(self) -> str:
        """One line on the method, for the report."""
        warm = f" after a {self.warmup} s warmup" if self.warmup else " without warmup"
        zipf = f", zipfian exponent {self.zipf_exp:g}" if "zipfian" in self.access else ""
        reduced = " (reduced: emulated, proves the path, not performance)" if self.reduced else ""
        threads = ",".join(str(t) for t in self.threads)
        return (
            f"{self.tables} tables x {self.table_size} rows; threads {threads}; {self.time} s runs{warm}; "
            f"{self.repeats} repeat{'s' if self.repeats != 1 else ''}{zipf}{reduced}"
        )


PROFILE_DEFAULTS: dict[Profile, BenchSettings] = {
    # A few minutes per server: 3 workloads x 2 thread counts x 10 s, one warmup each.
    Profile.QUICK: BenchSettings(
        profile="quick",
        image=DEFAULT_IMAGE,
        base=SYSBENCH_BASE,
        workloads=("oltp_point_select", "oltp_read_only", "oltp_read_write"),
        access=("uniform",),
        threads=(1, 8),
        time=10,
        warmup=5,
        repeats=1,
        tables=4,
        table_size=10_000,
    ),
    # The seeds' method: warmup, repeats, threads up to 256, both access patterns.
    Profile.FULL: BenchSettings(
        profile="full",
        image=DEFAULT_IMAGE,
        base=SYSBENCH_BASE,
        workloads=WORKLOADS,
        access=ACCESS_PATTERNS,
        threads=(1, 2, 4, 8, 16, 32, 64, 128, 256),
        time=30,
        warmup=30,
        repeats=3,
        tables=8,
        table_size=100_000,
    ),
}

# Emulated cells: short runs at one thread count, small tables, no warmup or repeats.
EMULATED_TIME = 5
EMULATED_TABLES = 2
EMULATED_TABLE_SIZE = 10_000


def _apply(base: BenchSettings, over: BenchOverrides) -> BenchSettings:
    changes = {name: getattr(over, name) for name in KNOBS if getattr(over, name) is not None}
    return replace(base, **changes)


def settings_for(profile: Profile, config: SysbenchConfig, *, emulated: bool) -> BenchSettings | None:
    """The bench of one cell, or None when the profile runs none (smoke)."""
    base = PROFILE_DEFAULTS.get(profile)
    if base is None:
        return None
    own = config.quick if profile is Profile.QUICK else config.full
    settings = _apply(_apply(replace(base, image=config.image, base=config.base), config.common), own)
    if not emulated:
        return settings
    reduced = replace(
        settings,
        threads=settings.threads[:1],
        time=min(settings.time, EMULATED_TIME),
        warmup=0,
        repeats=1,
        tables=min(settings.tables, EMULATED_TABLES),
        table_size=min(settings.table_size, EMULATED_TABLE_SIZE),
        reduced=True,
    )
    return _apply(reduced, config.emulated)


# Native seconds outside the measured time: each sysbench start (connect, thread start-up,
# exec round trip) and the set-up (container, user, version) of the stage.
RUN_OVERHEAD_S = 5.0
SETUP_S = 30.0
ROWS_PER_S = 10_000.0  # prepare's insert + index rate, conservatively (measured ~40k/s here)


def estimate_seconds(settings: BenchSettings, emulation_factor: float = 1.0) -> float:
    """How long the stage should take at most: measured time runs at wall-clock speed
    under emulation too, everything else is CPU-bound and scales with the emulator."""
    series = len(settings.workloads) * len(settings.access)
    measured = settings.points * settings.time + series * settings.warmup
    overhead = (settings.points + series) * RUN_OVERHEAD_S + SETUP_S
    prepare = 5.0 + settings.tables * settings.table_size / ROWS_PER_S
    return measured + (overhead + prepare) * emulation_factor
