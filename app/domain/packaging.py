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
    install: str = ""  # how the start stage installed it ("prebuilt", "built from source", "failed: ..."); "" not yet
    cached: bool = False  # the start stage found it installed by an earlier run (nothing installed again)
