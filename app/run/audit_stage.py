"""The build audit stage: a cell's main programs read from its image on the engine (a
container created, never started), parsed off the event loop (app/audit/), kept on disk by
image digest so a later run reads nothing, and its findings crossed with the platform
fitness of the cell's host and arch: again whenever that fitness arrives after the audit.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ecoready.audit.findings import findings, mislabelled, summary
from ecoready.audit.locate import candidates, search_dirs
from ecoready.audit.packages import database_paths, installed
from ecoready.audit.program import audit_program
from ecoready.audit.targets import program_fits
from ecoready.domain.codec import from_plain, to_plain
from ecoready.domain.cpus import Target
from ecoready.domain.errors import (
    ConfigError,
    DataError,
    DeadlineExceeded,
    DockerUnavailable,
    EngineError,
    MislabelledBinary,
    Skip,
)
from ecoready.domain.events import AuditReported, Event, FactsGathered
from ecoready.domain.flight import Flights
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import AuditResult, BinaryAudit, PlatformFitness
from ecoready.domain.parity import Facet, Facts
from ecoready.domain.parity_rules import kept
from ecoready.domain.reading import read_bounded
from ecoready.domain.specs import ImageFile
from ecoready.matrix.prices import instances
from ecoready.plan.cells import AUDIT_BUDGET_S, Plan
from ecoready.probe_api.run_context import RunContext, resource_labels

# Part of every cache key: entries written by another version of the audit are not read.
AUDIT_VERSION = 3
MAX_PROGRAM_BYTES = 512 << 20  # a main program larger than this is named, not read
MAX_CACHED_BYTES = 4 << 20  # one image's cached audit
READ_TIMEOUT = 90.0  # seconds for every file of one image

log = logging.getLogger("ecoready.audit")


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ecoready" / "audit"


class AuditCache:
    """Audits by key (image digest, arch, programs, audit version), one JSON file each.
    Written whole or not at all; anything unreadable is a miss; a disk problem turns it off."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def _path(self, key: str) -> Path | None:
        return None if self.root is None else self.root / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".json")

    def get(self, key: str) -> AuditResult | None:
        entry = self.entry(key)
        return None if entry is None else entry[0]

    def entry(self, key: str) -> tuple[AuditResult, Facts | None] | None:
        """The audit kept for `key`, and the image's packages read with it (parity)."""
        path = self._path(key)
        if path is None:
            return None
        try:
            data = json.loads(read_bounded(path, MAX_CACHED_BYTES, "cached audit"))
            if not isinstance(data, dict) or data.get("key") != key:
                return None
            packages = data.get("packages")
            return from_plain(AuditResult, data.get("audit")), (
                None if packages is None else from_plain(Facts, packages)
            )
        except (ConfigError, ValueError, DataError, RecursionError):
            return None

    def put(self, key: str, audit: AuditResult, packages: Facts | None = None) -> None:
        path = self._path(key)
        if path is None:
            return
        kept = {"key": key, "audit": to_plain(replace(audit, findings=(), platform=""))}
        text = json.dumps({**kept, "packages": None if packages is None else to_plain(packages)})
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.debug("audit cache off: %s", exc)
            self.root = None


def cache_key(digest: str, arch: str, programs: Sequence[Sequence[str]]) -> str:
    names = ",".join("|".join(names) for names in programs)
    return f"v{AUDIT_VERSION} {digest} {arch} {names}"


def audit_targets(plan: Plan) -> tuple[Target, ...]:
    """The targets each audit is answered for: the matrix's, then each host's instance of the
    price file (the cost view says when a host's instance cannot run the images)."""
    found = {t.name: t for t in plan.matrix.targets}
    for host in plan.hosts:
        known = instances().get(host.instance) if host.instance else None
        if known is not None and known.target and host.instance not in found:
            found[host.instance] = Target(host.instance, known.target)
    return tuple(found.values())


class Auditor:
    """The build audits of one run. An image and arch is read once however many cells share
    it; each cell's findings are crossed with its platform, now or when it arrives."""

    def __init__(
        self, emit: Callable[[Event], None], cache: AuditCache, targets: Sequence[Target] = (), *, parity: bool = True
    ) -> None:
        """`targets`: the target CPUs the matrix names; each audit is answered for each of
        them. `parity`: the image's package database is read with the programs, and the
        packages and the programs' build IDs are reported as the cell's facts."""
        self._emit = emit
        self._cache = cache
        self._targets = tuple(targets)
        self._parity = parity
        self._platforms: dict[tuple[str, str], PlatformFitness] = {}
        self._audited: dict[str, tuple[str, AuditResult]] = {}  # cell id -> (host, audit)
        self._reads: Flights[str, tuple[AuditResult, Facts | None]] = Flights(remember=True)  # by cache key

    async def audit(
        self, run: RunContext, cell_id: str, host: str, image: ImageInfo, programs: Sequence[Sequence[str]]
    ) -> str:
        """Audit the cell's image, report it, and say it in one line; MislabelledBinary when a
        program is built for another arch than the image's."""
        self._audited.pop(cell_id, None)
        result, packages = await self._read(run, cell_id, image, programs)
        self._audited[cell_id] = (host, result)
        self._report(cell_id, host, result)
        wrong = mislabelled(result.binaries, image.arch)
        if wrong:
            said = (f"{b.program} ({b.path}) is built for {b.machine}, the image says {image.arch}" for b in wrong)
            raise MislabelledBinary("; ".join(said))  # said as `mislabelled binary: …` (its cause's label)
        facts = program_facts(result.binaries, packages) if self._parity else ()  # of an image that is its arch's
        if facts:
            self._emit(FactsGathered(cell_id, facts))
        return summary(result.binaries) + (" (cached)" if result.cached else "")

    def forget(self, cell_id: str) -> None:
        """A cell starts again: its old audit is no longer its own."""
        self._audited.pop(cell_id, None)

    def observe(self, platform: PlatformFitness) -> None:
        """A platform's fitness arrived: cross the audits already done there with it."""
        self._platforms[(platform.host, platform.arch)] = platform
        for cell_id, (host, result) in list(self._audited.items()):
            if (host, result.arch) == (platform.host, platform.arch):
                self._report(cell_id, host, result)

    def _report(self, cell_id: str, host: str, result: AuditResult) -> None:
        platform = self._platforms.get((host, result.arch))
        crossed = replace(
            result,
            findings=findings(result.binaries, result.arch, platform),
            platform=f"{platform.host}/{platform.arch}" if platform is not None and platform.machine else "",
            targets=program_fits(result.binaries, self._targets),
        )
        self._emit(AuditReported(cell_id, crossed))

    async def _read(
        self, run: RunContext, cell_id: str, image: ImageInfo, programs: Sequence[Sequence[str]]
    ) -> tuple[AuditResult, Facts | None]:
        # without parity the image's packages are not read: its own entries, never taken for one that read them
        key = cache_key(image.digest or image.image_id, image.arch, programs) + ("" if self._parity else " -packages")
        shared = key in self._reads  # read (or being read) for another cell of this run
        result, packages = await self._reads.ask(key, lambda: self._cached_or_read(run, cell_id, image, programs, key))
        return (replace(result, cached=True) if shared else result), packages

    async def _cached_or_read(
        self, run: RunContext, cell_id: str, image: ImageInfo, programs: Sequence[Sequence[str]], key: str
    ) -> tuple[AuditResult, Facts | None]:
        kept = await asyncio.to_thread(self._cache.entry, key)
        if kept is not None:
            return replace(kept[0], cached=True), kept[1]
        began = time.monotonic()
        engine = run.host.images
        try:
            dirs = search_dirs(await engine.image_env(image.image_id))
            databases = database_paths() if self._parity else []
            files = await engine.read_files(
                image.image_id,
                [*(candidates(names, dirs) for names in programs), *databases],
                labels=resource_labels(run, cell_id, "audit"),
                max_bytes=MAX_PROGRAM_BYTES,
                timeout=READ_TIMEOUT,
            )
        except DockerUnavailable:
            raise
        except (DeadlineExceeded, EngineError) as exc:  # the audit is not worth the cell: it goes on
            raise Skip(f"the programs could not be read: {exc}") from None
        binaries = []
        deadline = began + AUDIT_BUDGET_S  # the stage's own: past it, no thread goes on reading
        packages = await asyncio.to_thread(package_facts, files[len(programs) :]) if self._parity else None
        for names, found in zip(programs, files[: len(programs)], strict=True):
            binaries.append(await asyncio.to_thread(_audit_file, names, found, deadline))
        result = AuditResult(
            arch=image.arch,
            image_digest=image.digest or image.image_id,
            binaries=tuple(binaries),
            seconds=round(time.monotonic() - began, 3),
        )
        await asyncio.to_thread(self._cache.put, key, result, packages)
        return result, packages


def package_facts(files: Sequence[ImageFile | None]) -> Facts:
    """The image's packages as a parity facet; an image with no database it can read has
    an empty one (its source says so), which compares equal only to another such."""
    found = installed(files)
    if found is None:
        return Facts(Facet.PACKAGES, {}, "none")
    kind, packages = found
    return Facts(Facet.PACKAGES, packages, kind)  # as read (and cached): the rules apply when reported


def program_facts(binaries: Sequence[BinaryAudit], packages: Facts | None) -> tuple[Facts, ...]:
    """What the audit learned for parity: the packages, and the programs' build IDs."""
    ids = {b.program: b.build_id for b in binaries if b.build_id}
    facts = [replace(packages, items=kept(Facet.PACKAGES, packages.items))] if packages is not None else []
    if ids:
        facts.append(Facts(Facet.BUILD_IDS, ids, "elf"))
    return tuple(facts)


def _audit_file(names: Sequence[str], found: ImageFile | None, deadline: float | None = None) -> BinaryAudit:
    if found is None:
        return BinaryAudit(program=" or ".join(names))
    program = os.path.basename(found.asked)
    if found.note:
        return BinaryAudit(program, found.path, note=f"not read: {found.path} is {found.note}, not a program file")
    if not found.complete:
        return BinaryAudit(program, found.path, size=found.size, note=f"not read: {found.size:,} bytes is too large")
    return audit_program(program, found.path, found.data, deadline)
