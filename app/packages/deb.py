"""Debian's packages (`deb:php8.4-cli,php8.4-mysql`): the drivers of the languages whose own
registries cannot be reached from where ecoready is developed (CPAN, RubyGems, PECL) and C's,
as a user of a Debian-based image installs them, with apt. Their index is not read before
the install: Debian's Packages files are tens of megabytes per suite and arch, and which
suite applies is the image's (its sources list), known only inside it. So the packaging
stage answers `not asked`, and the install says what apt took (its versions, as labels of
the cached image)."""

from __future__ import annotations

from ecoready.domain.drivers import DriverSpec
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.packages.http import PackageHttp

NOT_ASKED = "Debian's index is not read before the install: apt resolves the packages in the image"


async def assess(http: PackageHttp, spec: DriverSpec, arch: str) -> Packaging:
    """No request: the verdict is the install's."""
    return Packaging(
        spec=spec.text,
        registry="deb",
        package=spec.package,
        version="",
        arch=arch,
        verdict=PackagingVerdict.NOT_ASKED,
        artifact="Debian packages",
        detail=NOT_ASKED,
    )
