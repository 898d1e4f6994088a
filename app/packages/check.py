"""`ecoready drivers`: the packaging question alone, for a list of driver pins and arches,
asked of the package registries at once, without any container."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from ecoready.domain.drivers import DriverCheck, DriverSpec, DriversReport
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.packaging import PackagingVerdict
from ecoready.packages.client import PackageClient


async def check_drivers(
    drivers: Sequence[tuple[str, DriverSpec]], arches: Sequence[str], client: PackageClient
) -> DriversReport:
    """`drivers`: (matrix row or "", spec); one check per driver and arch, in that order."""
    started = time.monotonic()
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    async def one(row: str, spec: DriverSpec, arch: str) -> DriverCheck:
        try:
            return DriverCheck(spec.text, arch, row, await client.assess(spec, arch))
        except MatrixMismatch as exc:
            return DriverCheck(spec.text, arch, row, error=str(exc), config_error=True)
        except RegistryError as exc:
            return DriverCheck(spec.text, arch, row, error=f"registry {exc}")

    checks = await asyncio.gather(*(one(row, spec, arch) for row, spec in drivers for arch in arches))
    return DriversReport(at, round(time.monotonic() - started, 3), tuple(checks), client.statuses())


def exit_code(report: DriversReport) -> int:
    """0 every pin ships a prebuilt artifact for every arch; 2 a pin names no published
    version; 3 a registry could not be asked; 1 otherwise (a source build, or nothing)."""
    if any(c.config_error for c in report.checks):
        return 2
    if any(c.packaging is None for c in report.checks):
        return 3
    ready = all(c.packaging is not None and c.packaging.verdict is PackagingVerdict.READY for c in report.checks)
    return 0 if ready else 1
