"""npm: the version a range or dist-tag resolves to, and whether installing it (with its
dependencies, as npm resolves them) runs native code: pure JavaScript, an addon with a
prebuilt binary for `linux-<arch>` in its tarball, or an addon node-gyp compiles at install
(python3, make and a C++ compiler in the image)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from ecoready.domain.drivers import DriverSpec, newest, parse_driver
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.domain.text import inert
from ecoready.packages.archives import npm_tarball_facts
from ecoready.packages.http import ARCHIVE_LIMIT, PackageHttp, base_url, host_of
from ecoready.packages.needs import NODE_GYP

# The abbreviated metadata npm itself installs from (it says `hasInstallScript`).
ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
MAX_PACKAGES = 200  # a dependency tree bigger than this is not walked to its end
NPM_CPU = {"amd64": "x64", "arm64": "arm64", "ppc64le": "ppc64", "s390x": "s390x"}
PREBUILT_LOADERS = ("node-gyp-build", "prebuild-install", "@mapbox/node-pre-gyp", "node-pre-gyp")


@dataclass(frozen=True)
class NpmVersion:
    """What one published version says about installing it."""

    name: str
    version: str
    dependencies: dict[str, str]  # name -> range (optional dependencies included)
    optional: frozenset[str]
    install_script: bool  # preinstall/install/postinstall, or a binding.gyp npm builds
    cpu: tuple[str, ...]
    os: tuple[str, ...]
    tarball: str


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """An object of a registry document, or {} when it is absent or not an object."""
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def version_facts(name: str, doc: dict[str, Any]) -> NpmVersion:
    scripts = _table(doc, "scripts")
    install = bool(doc.get("hasInstallScript")) or bool(doc.get("gypfile"))
    install = install or any(scripts.get(k) for k in ("preinstall", "install", "postinstall"))
    deps = {str(k): str(v) for k, v in _table(doc, "dependencies").items()}
    optional = {str(k): str(v) for k, v in _table(doc, "optionalDependencies").items()}
    dist = _table(doc, "dist")
    return NpmVersion(
        name,
        str(doc.get("version", "")),
        {**deps, **optional},
        frozenset(optional),
        install,
        tuple(str(c) for c in doc.get("cpu") or ()),
        tuple(str(o) for o in doc.get("os") or ()),
        str(dist.get("tarball", "")),
    )


def fits(package: NpmVersion, arch: str) -> bool:
    """npm's own `cpu`/`os` fields (`["x64"]`, `["!arm64"]`) allow linux on this arch."""

    def allowed(values: tuple[str, ...], mine: str) -> bool:
        if not values:
            return True
        if f"!{mine}" in values:
            return False
        positives = [v for v in values if not v.startswith("!")]
        return not positives or mine in positives

    return allowed(package.cpu, NPM_CPU.get(arch, arch)) and allowed(package.os, "linux")


def resolve(spec: DriverSpec, document: dict[str, Any]) -> str | None:
    """The version a range or dist-tag picks from a package document."""
    versions = _table(document, "versions")
    if spec.tag:
        chosen = _table(document, "dist-tags").get(spec.tag)
        return str(chosen) if chosen in versions else None
    return spec.pick(versions)


def judge(
    spec: DriverSpec,
    root: NpmVersion,
    tree: list[NpmVersion],
    arch: str,
    tarballs: dict[str, tuple[bool, tuple[str, ...]]],
    unresolved: list[str],
) -> Packaging:
    """The verdict from the resolved tree; `tarballs`: name@version -> (binding.gyp, prebuilt
    platforms) of the packages with install scripts."""
    base = Packaging(spec.text, "npm", spec.package, root.version, arch, PackagingVerdict.READY)
    platform = f"linux-{NPM_CPU.get(arch, arch)}"
    if not fits(root, arch):
        limits = ", ".join([*(f"cpu {c}" for c in root.cpu), *(f"os {o}" for o in root.os)])
        return replace(base, verdict=PackagingVerdict.MISSING, detail=f"{root.name} {root.version} is for {limits}")
    scripted = [p for p in tree if p.install_script]
    extra = f"; not resolved: {', '.join(unresolved[:3])}" if unresolved else ""
    if not scripted:
        return replace(
            base,
            artifact="pure JS",
            detail=f"{root.name} {root.version} and {len(tree) - 1} dependencies: no install script, no native code"
            + extra,
        )
    compiled, downloads, prebuilt, scripts = [], [], [], []
    for package in scripted:
        gyp, prebuilds = tarballs.get(f"{package.name}@{package.version}", (False, ()))
        label = f"{package.name} {package.version}"
        if any(p.startswith(platform) for p in prebuilds):
            prebuilt.append(label)
        elif gyp and any(loader in package.dependencies for loader in PREBUILT_LOADERS):
            downloads.append(label)
        elif gyp:
            compiled.append(label)
        else:
            scripts.append(label)
    if compiled or downloads:
        said = [f"node-gyp compiles {', '.join(compiled)} at install"] if compiled else []
        if downloads:  # node-pre-gyp or prebuild-install: a binary from the project's own host
            said.append(
                f"{', '.join(downloads)} may download a prebuilt binary from outside the registry at install, "
                "else node-gyp compiles it"
            )
        return replace(
            base,
            verdict=PackagingVerdict.SOURCE,
            needs=NODE_GYP,
            detail=f"{'; '.join(said)} (no prebuilt {platform} binary in the registry){extra}",
        )
    if scripts:
        return replace(
            base,
            verdict=PackagingVerdict.SOURCE,
            detail=f"install scripts of {', '.join(scripts)} decide at install (no binding.gyp, no prebuilds)" + extra,
        )
    return replace(base, artifact=f"prebuilt {platform} binary", detail=f"prebuilt in {', '.join(prebuilt)}{extra}")


async def _document(http: PackageHttp, name: str) -> dict[str, Any] | None:
    url = f"{base_url('npm')}/{quote(name, safe='@')}"
    body = await http.get(url, accept=ACCEPT)
    if body is None:
        return None
    try:
        document = json.loads(body)
    except ValueError:
        raise RegistryError(host_of(url), f"unreadable package document from {url}") from None
    if not isinstance(document, dict):
        raise RegistryError(host_of(url), f"unreadable package document from {url}")
    return document


async def assess(http: PackageHttp, spec: DriverSpec, arch: str) -> Packaging:
    document = await _document(http, spec.package)
    if document is None:
        raise MatrixMismatch(f"{spec.text}: npm has no package {spec.package!r}")
    version = resolve(spec, document)
    if version is None:
        latest = newest("npm", _table(document, "versions")) or "none"
        raise MatrixMismatch(f"{spec.text}: npm has no version of {spec.package} matching it (newest: {latest})")
    root = version_facts(spec.package, document["versions"][version])
    tree, unresolved = await _walk(http, root, arch)
    tarballs: dict[str, tuple[bool, tuple[str, ...]]] = {}
    for package in (p for p in tree if p.install_script and p.tarball):
        data = await http.get(package.tarball, limit=ARCHIVE_LIMIT, via=f"{base_url('npm')}/{package.name}")
        if data is not None:
            facts, _ = npm_tarball_facts(data)
            tarballs[f"{package.name}@{package.version}"] = (facts.gyp, facts.prebuilds)
    return judge(spec, root, tree, arch, tarballs, unresolved)


async def _walk(http: PackageHttp, root: NpmVersion, arch: str) -> tuple[list[NpmVersion], list[str]]:
    """The dependency tree as npm would install it for linux on `arch` (optional
    dependencies for other platforms left out), one version per name and range."""
    seen: dict[tuple[str, str], NpmVersion] = {(root.name, root.version): root}
    unresolved: list[str] = []
    level = [root]
    while level and len(seen) < MAX_PACKAGES:
        wanted = [(name, rng, name in parent.optional) for parent in level for name, rng in parent.dependencies.items()]
        found = await asyncio.gather(*(_one(http, name, rng) for name, rng, _ in wanted))
        level = []
        for (name, rng, optional), package in zip(wanted, found, strict=True):
            if package is None:
                if not optional:
                    unresolved.append(inert(f"{name}@{rng}", 80))
                continue
            if optional and not fits(package, arch):
                continue  # npm skips an optional dependency for another platform
            key = (package.name, package.version)
            if key not in seen and len(seen) < MAX_PACKAGES:
                seen[key] = package
                level.append(package)
    return list(seen.values()), unresolved


async def _one(http: PackageHttp, name: str, rng: str) -> NpmVersion | None:
    try:
        spec = parse_driver(f"npm:{name}@{rng}" if rng.strip() else f"npm:{name}")
    except ValueError:
        return None  # aliases, git and file dependencies are not followed
    document = await _document(http, spec.package)
    version = resolve(spec, document) if document is not None else None
    if document is None or version is None:
        return None
    return version_facts(spec.package, document["versions"][version])
