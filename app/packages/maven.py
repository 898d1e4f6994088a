"""Maven Central: the version a pin resolves to (maven-metadata.xml), its POM's runtime
dependencies, and whether the jars carry native libraries: a pure-Java jar runs on every
arch's JVM; JNI libraries must be there for linux on the arch."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

from ecoready.domain.drivers import DriverSpec, newest
from ecoready.domain.errors import MatrixMismatch, RegistryError
from ecoready.domain.model import UNAME_MACHINE
from ecoready.domain.packaging import Packaging, PackagingVerdict
from ecoready.domain.text import inert
from ecoready.packages.archives import native_libraries
from ecoready.packages.http import ARCHIVE_LIMIT, PackageHttp, base_url, host_of

_PROPERTY = re.compile(r"\$\{([^}]+)\}")
_VERSION = re.compile(r"^[0-9][A-Za-z0-9._-]{0,80}\Z")  # what a version may hold (it goes into URLs and a POM)
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,120}\Z")
_ARCH_WORDS = {"arm64": ("aarch64", "arm64"), "amd64": ("x86_64", "x86-64", "amd64", "x64")}


@dataclass(frozen=True)
class Dependency:
    group: str
    artifact: str
    version: str  # "" when the POM leaves it to a parent or a BOM


def xml_root(body: bytes, url: str) -> ET.Element:
    """Parsed XML; documents with a DTD are refused (entities are no part of these files)."""
    if b"<!DOCTYPE" in body[:4096] or b"<!ENTITY" in body:
        raise RegistryError(host_of(url), f"refusing an XML document with a DTD from {url}")
    try:
        return ET.fromstring(body)  # noqa: S314 - bounded, DTDs refused above
    except ET.ParseError:
        raise RegistryError(host_of(url), f"unreadable XML from {url}") from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(node: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in node if _local(c.tag) == name), None)


def _text(node: ET.Element | None, name: str) -> str:
    child = _child(node, name) if node is not None else None
    return (child.text or "").strip() if child is not None else ""


def metadata_versions(root: ET.Element) -> list[str]:
    """The versions the metadata lists (anything that is not a plain version left out)."""
    versioning = _child(root, "versioning")
    versions = _child(versioning, "versions") if versioning is not None else None
    listed = [(v.text or "").strip() for v in versions or [] if _local(v.tag) == "version"]
    return [v for v in listed if _VERSION.match(v)]


def runtime_dependencies(pom: ET.Element) -> list[Dependency]:
    """The POM's own non-optional compile and runtime dependencies, versions filled in
    from its <properties> (a version its parent or a BOM manages stays "")."""
    properties = {_local(p.tag): (p.text or "").strip() for p in _child(pom, "properties") or []}
    properties["project.version"] = _text(pom, "version")
    out = []
    for dep in _child(pom, "dependencies") or []:
        if _local(dep.tag) != "dependency" or _text(dep, "optional") == "true":
            continue
        if (_text(dep, "scope") or "compile") not in ("compile", "runtime"):
            continue
        version = _PROPERTY.sub(lambda m: properties.get(m.group(1), m.group(0)), _text(dep, "version"))
        group, artifact = _text(dep, "groupId"), _text(dep, "artifactId")
        if not all(_NAME.match(part) for part in (group, artifact)):
            continue  # not a plain coordinate: nothing to fetch
        out.append(Dependency(group, artifact, version if _VERSION.match(version) else ""))
    return out


def judge(spec: DriverSpec, version: str, arch: str, jars: dict[str, list[str]], unversioned: list[str]) -> Packaging:
    """`jars`: file name -> the native libraries inside (the driver's jar first)."""
    base = Packaging(spec.text, "maven", spec.package, version, arch, PackagingVerdict.READY)
    names = list(jars)
    also = f" (versions left to a parent POM, not looked at: {', '.join(unversioned)})" if unversioned else ""
    natives = {jar: libs for jar, libs in jars.items() if libs}
    if not natives:
        return replace(base, artifact="pure-Java jar", detail=f"{', '.join(names)}: bytecode only{also}")
    words = _ARCH_WORDS.get(arch, (UNAME_MACHINE.get(arch, arch),))
    mine = [lib for libs in natives.values() for lib in libs if "linux" in lib.lower() and _names_arch(lib, words)]
    if mine:
        return replace(base, artifact=f"jar with linux-{UNAME_MACHINE.get(arch, arch)} natives", detail=mine[0] + also)
    listed = ", ".join(lib for libs in natives.values() for lib in libs[:3])
    return replace(
        base,
        artifact="jar",
        detail=f"native libraries but none for linux-{UNAME_MACHINE.get(arch, arch)}: {listed}{also}",
    )


def _names_arch(path: str, words: tuple[str, ...]) -> bool:
    low = path.lower()
    return any(re.search(rf"(^|[/_.-]){re.escape(w)}([/_.-]|$)", low) for w in words)


def _artifact_url(group: str, artifact: str, version: str, ext: str) -> str:
    return f"{base_url('maven')}/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.{ext}"


async def assess(http: PackageHttp, spec: DriverSpec, arch: str) -> Packaging:
    group, artifact = spec.package.split(":")
    url = f"{base_url('maven')}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    body = await http.get(url)
    if body is None:
        raise MatrixMismatch(f"{spec.text}: Maven Central has no artifact {spec.package}")
    versions = metadata_versions(xml_root(body, url))
    version = spec.pick(versions)
    if version is None:
        latest = newest("maven", versions) or "none"
        raise MatrixMismatch(
            f"{spec.text}: Maven Central has no version of {spec.package} matching it (newest: {latest})"
        )
    pom_url = _artifact_url(group, artifact, version, "pom")
    pom = await http.get(pom_url)
    dependencies = runtime_dependencies(xml_root(pom, pom_url)) if pom is not None else []
    jars: dict[str, list[str]] = {}
    unversioned = []
    for g, a, v in [(group, artifact, version), *((d.group, d.artifact, d.version) for d in dependencies)]:
        if not v:
            unversioned.append(inert(f"{g}:{a}", 80))
            continue
        jar_url = _artifact_url(g, a, v, "jar")
        data = await http.get(jar_url, limit=ARCHIVE_LIMIT)
        if data is None:
            if (g, a) == (group, artifact):
                raise MatrixMismatch(f"{spec.text}: Maven Central lists {version} but serves no jar for it")
            continue
        libs, _ = native_libraries(data)
        jars[inert(f"{a}-{v}.jar", 120)] = libs
    return judge(spec, version, arch, jars, unversioned)
