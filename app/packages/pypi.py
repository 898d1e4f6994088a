"""PyPI: which files a version ships (its JSON API), and whether one is a wheel for the
arch (`manylinux_*_aarch64`, `musllinux_*_aarch64`, or a pure-Python `none-any`); when
none is, what building its sdist needs (read from the sdist itself: C sources, and the
build tools its setup files name)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from urllib.parse import quote, urljoin

from ecoready.domain.drivers import DriverSpec, newest
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.model import UNAME_MACHINE
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.domain.text import inert
from ecoready.packages.archives import SourceFacts, sdist_facts
from ecoready.packages.http import ARCHIVE_LIMIT, PackageHttp, base_url, host_of
from ecoready.packages.needs import MYSQL_CLIENT, PYTHON_EXTENSION

_MYSQL_TOOLS = frozenset({"mysql_config", "mariadb_config", "mysqlclient", "libmariadb", "perconaserverclient"})


@dataclass(frozen=True)
class PyFile:
    filename: str
    kind: str  # "bdist_wheel" | "sdist" | ...
    url: str
    size: int = 0
    yanked: str | None = None  # PEP 592: None, else why it was yanked ("" when not said)


@dataclass(frozen=True)
class Wheels:
    """The wheels of a version, sorted by what they mean for one arch."""

    fitting: tuple[str, ...]  # manylinux wheels for the arch
    musl: tuple[str, ...]  # musllinux wheels for the arch (Alpine-style images only)
    pure: tuple[str, ...]  # none-any wheels
    other_platforms: tuple[str, ...]  # the platform tags of the rest


def wheel_tags(filename: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(python tags, abi tag, platform tags) of a wheel's file name; None for another file."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    return parts[-3], parts[-2], tuple(parts[-1].split("."))


def sort_wheels(files: list[PyFile], arch: str) -> Wheels:
    machine = UNAME_MACHINE.get(arch, arch)
    fitting: list[str] = []
    musl: list[str] = []
    pure: list[str] = []
    other: list[str] = []
    for f in files:
        tags = wheel_tags(f.filename)
        if tags is None:
            continue
        platforms = tags[2]
        if "any" in platforms:
            pure.append(f.filename)
        elif any(p.startswith(("manylinux", "linux_")) and p.endswith(f"_{machine}") for p in platforms):
            fitting.append(f.filename)
        elif any(p.startswith("musllinux") and p.endswith(f"_{machine}") for p in platforms):
            musl.append(f.filename)
        else:
            other.extend(platforms)
    return Wheels(tuple(fitting), tuple(musl), tuple(pure), tuple(dict.fromkeys(other)))


def source_needs(facts: SourceFacts) -> tuple[str, ...]:
    """What building an sdist with these facts needs (nothing for pure Python)."""
    if not facts.native:
        return ()
    needs = list(PYTHON_EXTENSION)
    if facts.tools & _MYSQL_TOOLS:
        needs.extend(MYSQL_CLIENT if "pkg-config" in facts.tools else MYSQL_CLIENT[1:])
    return tuple(needs)


def judge(spec: DriverSpec, version: str, files: list[PyFile], arch: str, source: SourceFacts | None) -> Packaging:
    """The verdict for one arch from a version's files (and its sdist's facts, when asked)."""
    machine = UNAME_MACHINE.get(arch, arch)
    wheels = sort_wheels(files, arch)
    sdist = next((f for f in files if f.kind == "sdist"), None)
    base = Packaging(spec.text, "pypi", spec.package, version, arch, PackagingVerdict.READY)
    if wheels.fitting:
        tags = sorted({(wheel_tags(w) or ("", "", ()))[0] for w in wheels.fitting})
        platform = next(p for p in (wheel_tags(wheels.fitting[0]) or ("", "", ()))[2] if p.endswith(machine))
        return _with(base, artifact="wheel", detail=f"{platform} wheels for {', '.join(tags)}")
    if wheels.pure:
        return _with(base, artifact="pure-Python wheel", detail=wheels.pure[0])
    others = f"wheels only for {', '.join(wheels.other_platforms[:6])}" if wheels.other_platforms else "no wheels"
    if wheels.musl:
        others = f"only musllinux {machine} wheels (musl images only); {others}"
    if sdist is None:
        return _with(
            base, verdict=PackagingVerdict.MISSING, detail=f"no {machine} wheel and no source distribution; {others}"
        )
    if source is None:
        raise AssertionError("the sdist's facts are needed for this verdict")
    needs = source_needs(source)
    if not needs:
        what = "pure Python" if source.complete else "no native sources seen (the archive was not read to its end)"
        return _with(base, artifact="pure-Python sdist", detail=f"{sdist.filename}: {what}; {others}")
    native = ", ".join(source.native[:2])
    named = " and links the MySQL client library" if source.tools & _MYSQL_TOOLS else ""
    named += " (found with pkg-config)" if named and "pkg-config" in source.tools else ""
    return _with(
        base,
        verdict=PackagingVerdict.SOURCE,
        needs=needs,
        detail=f"no {machine} wheel ({others}); {sdist.filename} has native sources ({native}){named}",
    )


def _with(base: Packaging, **changes: object) -> Packaging:
    return replace(base, **changes)  # type: ignore[arg-type]


def releases(document: bytes, url: str) -> dict[str, list[PyFile]]:
    """Version -> its files from PyPI's JSON API answer, yanked ones marked (PEP 592)."""
    try:
        data = json.loads(document)
        raw = data["releases"]
        assert isinstance(raw, dict)
    except (ValueError, KeyError, TypeError, AssertionError, RecursionError):
        raise RegistryError(host_of(url), f"unreadable JSON API answer from {url}") from None
    out: dict[str, list[PyFile]] = {}
    for version, items in raw.items():
        files = [
            PyFile(
                inert(str(f.get("filename", "")), 200),
                str(f.get("packagetype", "")),
                urljoin(url, str(f["url"])),
                yanked=inert(str(f.get("yanked_reason") or ""), 200) if f.get("yanked") else None,
            )
            for f in items or []
            if isinstance(f, dict) and "url" in f
        ]
        if files:
            out[str(version)] = files
    return out


def exact_pin(spec: DriverSpec) -> bool:
    """Whether the spec pins one version exactly (`==1.2.3`, `===1.2.3`): PEP 592 lets such a
    pin take a yanked release, as pip does; a range (or `==1.2.*`) skips yanked ones."""
    parts = [p.strip() for p in spec.constraint.split(",") if p.strip()]
    return len(parts) == 1 and parts[0].startswith("==") and "*" not in parts[0]


def choose(spec: DriverSpec, published: dict[str, list[PyFile]]) -> tuple[str | None, list[PyFile]]:
    """The version the spec takes and the files it installs from, as pip chooses (PEP 592):
    yanked files are not used; a release with only yanked files only for an exact pin."""
    kept = {v: [f for f in files if f.yanked is None] for v, files in published.items()}
    kept = {v: files for v, files in kept.items() if files}
    version = spec.pick(kept)
    if version is not None:
        return version, kept[version]
    if exact_pin(spec):
        version = spec.pick(published)
        if version is not None:
            return version, published[version]
    return None, []


async def assess(http: PackageHttp, spec: DriverSpec, arch: str) -> Packaging:
    url = f"{base_url('pypi')}/pypi/{quote(spec.package)}/json"
    document = await http.get(url)
    if document is None:
        raise MatrixMismatch(f"{spec.text}: PyPI has no project {spec.package!r}")
    published = releases(document, url)
    version, files = choose(spec, published)
    if version is None:
        latest = newest("pypi", {v: f for v, f in published.items() if any(x.yanked is None for x in f)}) or "none"
        yanked = [v for v, f in published.items() if spec.accepts(v) and all(x.yanked is not None for x in f)]
        also = f"; {', '.join(yanked[:3])} yanked (only an exact == pin takes a yanked release)" if yanked else ""
        raise MatrixMismatch(f"{spec.text}: PyPI has no release of {spec.package} matching it (newest: {latest}){also}")
    wheels = sort_wheels(files, arch)
    sdist = next((f for f in files if f.kind == "sdist"), None)
    source = None
    if not wheels.fitting and not wheels.pure and sdist is not None:
        data = await http.get(sdist.url, limit=ARCHIVE_LIMIT, via=url)
        if data is None:
            raise RegistryError(host_of(sdist.url), f"{sdist.filename} is listed but not served")
        source = sdist_facts(data, sdist.filename)
    verdict = judge(spec, version, files, arch, source)
    reason = next((f.yanked for f in files if f.yanked is not None), None)
    if reason is not None:
        why = f": {reason}" if reason else ""
        detail = f"{verdict.detail}; {version} is yanked{why} (taken for the exact pin, as pip does)"
        verdict = _with(verdict, detail=detail)
    return verdict
