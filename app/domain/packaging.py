"""A driver row's package for one arch: what its registry publishes (the packaging stage)
and how installing it went (the start stage). Plain frozen data, like the model."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PackagingVerdict(str, enum.Enum):
    """Can a driver's pinned version be installed on an arch? From its package registry
    (before any container), then from installing it (the start stage)."""

    READY = "ready"  # a prebuilt artifact for the arch (or none needed), or the source build worked
    SOURCE = "source"  # no prebuilt artifact: installing builds it from source (not tried yet)
    MISSING = "missing"  # nothing for the arch: no prebuilt artifact and no source, or the source build failed
    NOT_ASKED = "not-asked"  # a source whose index is not read (deb: Debian's packages): the install says


class InstallKind(str, enum.Enum):
    """How the start stage's install of a driver (or a program) went: what the views decide
    on; `Packaging.install` says it in words."""

    NOT_YET = "not-yet"  # the start stage has not installed it
    INSTALLED = "installed"  # as published: a prebuilt artifact (a wheel), Debian's package
    SOURCE = "source"  # the driver's source build, with the build tools it needs
    BUILT = "built"  # ecoready built the program itself, as its upstream's releases are (gh-ost)
    FAILED = "failed"  # it did not install: `install` says why


@dataclass(frozen=True)
class Packaging:
    """A driver row's package for one arch: what its registry publishes (the packaging
    stage) and how installing it went (the start stage)."""

    spec: str  # as the matrix wrote it: "pypi:mysqlclient==2.2.*"
    registry: str  # pypi | npm | maven | go
    package: str
    version: str  # what the spec resolved to
    arch: str
    verdict: PackagingVerdict
    artifact: str = ""  # the prebuilt artifact for the arch ("wheel", "pure JS", ...); "" none
    needs: tuple[str, ...] = ()  # what a source build needs, as Debian packages: gcc, libmariadb-dev
    detail: str = ""  # one line: the files behind the verdict
    install: str = ""  # how the start stage installed it, in words ("wheel (x.whl) in 3 s"), or why it failed
    cached: bool = False  # the start stage found it installed by an earlier run (nothing installed again)
    install_kind: InstallKind = InstallKind.NOT_YET

    @property
    def install_said(self) -> str:
        """The install in words as every view shows it: `failed: why` when it failed."""
        return f"failed: {self.install}" if self.install_kind is InstallKind.FAILED else self.install
