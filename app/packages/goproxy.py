"""The Go module proxy: the version a query resolves to (`@v/list`, `@latest`), and whether
the module and the modules it requires use cgo. Pure Go cross-compiles for every arch
with no C compiler; cgo needs one of the target arch."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace

from ecoready.domain.drivers import DriverSpec, newest, semver
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.domain.text import inert
from ecoready.packages.archives import cgo_files, go_directive
from ecoready.packages.http import ARCHIVE_LIMIT, PackageHttp, base_url, host_of

_REQUIRE = re.compile(r"^\s*(?:require\s+)?([A-Za-z0-9][^\s]*\.[^\s]+)\s+(v\S+)(?:\s*//.*)?$")


def escape(path: str) -> str:
    """The proxy's case encoding: an upper-case letter becomes `!` and its lower case."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


def requires(go_mod: str) -> list[tuple[str, str]]:
    """(module, version) of the go.mod's require lines (indirect ones included)."""
    out = []
    inside = False
    for line in go_mod.splitlines():
        stripped = line.strip()
        if stripped.startswith("require ("):
            inside = True
            continue
        if inside and stripped == ")":
            inside = False
            continue
        if inside or stripped.startswith("require "):
            found = _REQUIRE.match(stripped if inside else stripped.removeprefix("require").strip())
            if found:
                out.append((found.group(1), found.group(2)))
    return out


def judge(spec: DriverSpec, version: str, arch: str, go: str, modules: dict[str, list[str]]) -> Packaging:
    """`modules`: "module version" -> its cgo files (the driver first)."""
    base = Packaging(spec.text, "go", spec.package, version, arch, PackagingVerdict.READY)
    needs_go = f"; needs Go >= {go}" if go else ""
    with_cgo = {m: files for m, files in modules.items() if files}
    if not with_cgo:
        return replace(base, artifact="pure Go", detail=f"no cgo in {', '.join(modules)}{needs_go}")
    first = next(iter(with_cgo.items()))
    return replace(
        base,
        verdict=PackagingVerdict.SOURCE,
        needs=("gcc",),
        detail=f"cgo in {first[0]} ({first[1][0]}): a C compiler for the arch and CGO_ENABLED=1{needs_go}",
    )


def program(spec: DriverSpec, version: str, arch: str, go: str) -> Packaging:
    """A program built from its module (`go build`, as `go install` does): always a source
    build, with CGO_ENABLED=0 (the build then needs no C compiler for any arch); its
    requirements' archives are not read (gh-ost's are 83 MB: its build says more)."""
    needs_go = f"; needs Go >= {go}" if go else ""
    return Packaging(
        spec.text,
        "go",
        spec.package,
        version,
        arch,
        PackagingVerdict.SOURCE,
        detail=f"the Go module proxy serves source: built with go build, CGO_ENABLED=0{needs_go}",
    )


async def assess(http: PackageHttp, spec: DriverSpec, arch: str, *, builds: bool = False) -> Packaging:
    """`builds`: the module holds a program ecoready builds (`program`), not a driver."""
    root = f"{base_url('go')}/{escape(spec.package)}/@v"
    version = await _exact(http, spec, root) if spec.constraint.count(".") == 2 else await _query(http, spec, root)
    go_mod = await http.get(f"{root}/{version}.mod")
    mod_text = (go_mod or b"").decode("utf-8", "replace")
    if builds:
        if go_mod is None:
            raise MatrixMismatch(f"{spec.text}: the Go module proxy lists {version} but serves no go.mod for it")
        return program(spec, version, arch, go_directive(mod_text))
    wanted = [(spec.package, version), *requires(mod_text)]
    zips = await asyncio.gather(
        *(http.get(f"{base_url('go')}/{escape(m)}/@v/{v}.zip", limit=ARCHIVE_LIMIT) for m, v in wanted)
    )
    if zips[0] is None:
        raise MatrixMismatch(f"{spec.text}: the Go module proxy lists {version} but serves no zip for it")
    modules = {inert(f"{m} {v}", 120): cgo_files(z)[0] for (m, v), z in zip(wanted, zips, strict=True) if z is not None}
    return judge(spec, version, arch, go_directive(mod_text), modules)


async def _exact(http: PackageHttp, spec: DriverSpec, root: str) -> str:
    """An exact version, asked as `go get` asks it (`@v/VERSION.info`), not through the list
    (a proxy may serve a module's versions and not its list)."""
    url = f"{root}/{spec.constraint}.info"
    info = await http.get(url)
    if info is None or _info_version(info, url) != spec.constraint:
        raise MatrixMismatch(f"{spec.text}: the Go module proxy has no version {spec.constraint} of {spec.package}")
    return spec.constraint


async def _query(http: PackageHttp, spec: DriverSpec, root: str) -> str:
    """The newest listed version a query (`v1.9`, `latest`) takes, as `go get` picks it."""
    listed = await http.get(f"{root}/list")
    if listed is None:
        raise MatrixMismatch(f"{spec.text}: the Go module proxy has no module {spec.package}")
    versions = [v for v in listed.decode("utf-8", "replace").split() if semver(v)]
    version = spec.pick(versions)
    if version is None and not spec.constraint:
        info = await http.get(f"{base_url('go')}/{escape(spec.package)}/@latest")
        version = _info_version(info, root) if info is not None else None
    if version is None:
        latest = newest("go", versions) or "none"
        raise MatrixMismatch(
            f"{spec.text}: the Go module proxy has no version of {spec.package} matching it (newest: {latest})"
        )
    return version


def _info_version(body: bytes, url: str) -> str | None:
    try:
        info = json.loads(body)
    except ValueError:
        raise RegistryError(host_of(url), f"unreadable version info from {url}") from None
    version = info.get("Version") if isinstance(info, dict) else None
    return str(version) if isinstance(version, str) and semver(version) else None
