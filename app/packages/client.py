"""The packaging question of a driver row, asked of its own registry (PyPI, npm, Maven
Central, the Go module proxy; Debian's packages are not asked: app/packages/deb.py)
without any container: which version the pin resolves to,
and whether that version ships a prebuilt artifact for an arch or builds from source (and
what the build needs). One client per run; each (driver, arch) is asked once, and each
registry URL fetched once, so the cells of both arches share the answers.

A registry that cannot be asked raises `RegistryError` (infrastructure: the cell is
`error`); a pin that names no published version raises `MatrixMismatch` (the row is wrong).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType

import httpx

from ecoready.domain.drivers import DriverSpec
from ecoready.domain.flight import Flights
from ecoready.domain.images import RegistryStatus
from ecoready.domain.packaging import Packaging
from ecoready.packages import deb, goproxy, maven, npm, pypi
from ecoready.packages.http import PackageHttp

Assessor = Callable[[PackageHttp, DriverSpec, str], Awaitable[Packaging]]
ASSESSORS: Mapping[str, Assessor] = {
    "pypi": pypi.assess,
    "npm": npm.assess,
    "maven": maven.assess,
    "go": goproxy.assess,
    "deb": deb.assess,
}


class PackageClient:
    def __init__(
        self,
        *,
        on_status: Callable[[RegistryStatus], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.http = PackageHttp(on_status=on_status, transport=transport)
        self._answers: Flights[tuple[str, str, bool], Packaging] = Flights(remember=True)

    async def __aenter__(self) -> PackageClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._answers.aclose()
        await self.http.aclose()

    def statuses(self) -> tuple[RegistryStatus, ...]:
        """Every package registry asked so far: requests, the last failure."""
        return self.http.statuses()

    async def assess(self, spec: DriverSpec, arch: str, *, program: bool = False) -> Packaging:
        """The packaging verdict of `spec` on `arch` (asked once per run). `program`: the
        spec names a program's Go module, built from source (a tool's probe), not a driver."""
        return await self._answers.ask((spec.text, arch, program), lambda: self._assess(spec, arch, program))

    async def _assess(self, spec: DriverSpec, arch: str, program: bool) -> Packaging:
        if program:  # only Go programs are built so far (matrix/kinds.py `program`)
            return await goproxy.assess(self.http, spec, arch, builds=True)
        return await ASSESSORS[spec.registry](self.http, spec, arch)
