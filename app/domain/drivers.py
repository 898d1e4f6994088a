"""A driver as a connector row pins it, and which published versions that pin accepts.

`pypi:mysqlclient==2.2.*`, `npm:mysql2@3`, `maven:com.mysql:mysql-connector-j:9.*`,
`go:github.com/go-sql-driver/mysql@v1.9`, `deb:php8.4-cli,php8.4-mysql`: the registry, the package, and a version
constraint in that registry's own language (PEP 440 specifiers, npm's semver ranges and
dist-tags, Maven versions with a `.*` prefix, Go module queries); no constraint means the
latest release, as `pip install`, `npm install`, Maven's `RELEASE` and `go get` take it.
`deb:` names Debian packages installed with apt in a Debian-based image (the languages
whose registries, CPAN, RubyGems and PECL, cannot be reached here, and C/C++): no version,
the image's suite decides it, as `apt-get install` does.

Pure: the matrix checks specs with it, app/packages/ picks versions with it. Prereleases
are never picked unless the constraint names one, as each registry's own client does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ecoready.domain.images import RegistryStatus
from ecoready.domain.packaging import Packaging

REGISTRIES = ("pypi", "npm", "maven", "go", "deb")
# The connector language each registry's drivers are for (the row's `language`); Debian's
# packages serve several (DEB_LANGUAGES).
LANGUAGE_OF = {"pypi": "python", "npm": "nodejs", "maven": "java", "go": "go"}
DEB_LANGUAGES = ("php", "perl", "ruby", "c", "cpp")
REGISTRY_NAMES = {
    "pypi": "PyPI",
    "npm": "npm",
    "maven": "Maven Central",
    "go": "the Go module proxy",
    "deb": "Debian's packages (apt)",
}

_PYPI_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")
_NPM_NAME = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*\Z")
_NPM_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*\Z")
_MAVEN_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")
_MAVEN_VERSION = re.compile(r"^[0-9][A-Za-z0-9_.-]*?(\.\*)?\Z")
_GO_MODULE = re.compile(r"^[a-z0-9][a-z0-9.-]*\.[a-z]{2,}(/[A-Za-z0-9._~+-]+)+\Z")
_GO_QUERY = re.compile(r"^(latest|v\d+(\.\d+)?|v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)\Z")
_DEB_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+\Z")
_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$"
)
_MAVEN_PRERELEASE = re.compile(r"(?i)(alpha|beta|milestone|snapshot|[.-](rc|cr|m|a|b)\d*)(?=[.-]|\d|$)")


@dataclass(frozen=True)
class DriverSpec:
    text: str  # as the matrix wrote it
    registry: str  # pypi | npm | maven | go
    package: str  # mysqlclient, mysql2, com.mysql:mysql-connector-j, github.com/go-sql-driver/mysql
    constraint: str = ""  # "==2.2.*", "3", "9.*", "v1.9", a dist-tag; "" = the latest release

    @property
    def language(self) -> str:
        """The one language its drivers are for ("" for Debian's packages: see `languages`)."""
        return LANGUAGE_OF.get(self.registry, "")

    @property
    def languages(self) -> tuple[str, ...]:
        return DEB_LANGUAGES if self.registry == "deb" else (LANGUAGE_OF[self.registry],)

    @property
    def debs(self) -> tuple[str, ...]:
        """A `deb:` spec's Debian packages."""
        return tuple(self.package.split(",")) if self.registry == "deb" else ()

    @property
    def registry_name(self) -> str:
        return REGISTRY_NAMES[self.registry]

    @property
    def tag(self) -> str:
        """The npm dist-tag the spec names ("latest" when it names none), else ""."""
        if self.registry != "npm":
            return ""
        return _npm_tag(self.constraint)

    def accepts(self, version: str) -> bool:
        return _ACCEPTS[self.registry](self.constraint, version)

    def pick(self, versions: Iterable[str]) -> str | None:
        """The newest published version the spec accepts (prereleases only when it names one)."""
        key = _ORDER[self.registry]
        candidates = [v for v in versions if key(v) is not None and self.accepts(v)]
        return max(candidates, key=lambda v: key(v)) if candidates else None  # type: ignore[arg-type,return-value]

    def exact(self, version: str) -> str:
        """The spec pinned to one version, as its registry's client writes it."""
        if self.registry == "pypi":
            return f"{self.package}=={version}"
        if self.registry == "npm":
            return f"{self.package}@{version}"
        if self.registry == "maven":
            return f"{self.package}:{version}"
        if self.registry == "deb":
            return self.package
        return f"{self.package}@{version}"


@dataclass(frozen=True)
class DriverCheck:
    """One row of `ecoready drivers`: a driver pin on one arch, asked of its registry."""

    spec: str  # as given (a matrix row's `driver`, or the command line)
    arch: str
    row: str = ""  # the matrix row it came from ("" from the command line)
    packaging: Packaging | None = None  # None when it could not be judged (see error)
    error: str = ""  # "no version ...": the pin is wrong; "registry ...": it could not be asked
    config_error: bool = False  # the pin names no published version (a configuration error)


@dataclass(frozen=True)
class DriversReport:
    checked_at: str
    seconds: float
    checks: tuple[DriverCheck, ...] = ()
    registries: tuple[RegistryStatus, ...] = ()


def newest(registry: str, versions: Iterable[str]) -> str | None:
    """The newest release among `versions`, by the registry's order (for messages)."""
    return DriverSpec("", registry, "", "*" if registry == "npm" else "").pick(versions)


def parse_driver(text: str) -> DriverSpec:
    """A driver spec from its text; ValueError says what is wrong with it."""
    registry, sep, rest = text.strip().partition(":")
    if not sep or registry not in REGISTRIES:
        raise ValueError(f"a driver is REGISTRY:PACKAGE[VERSION] with REGISTRY one of {', '.join(REGISTRIES)}")
    rest = rest.strip()
    if registry == "pypi":
        return _pypi(text, rest)
    if registry == "npm":
        return _npm(text, rest)
    if registry == "maven":
        return _maven(text, rest)
    if registry == "deb":
        return _deb(text, rest)
    return _go(text, rest)


def _pypi(text: str, rest: str) -> DriverSpec:
    name = _PYPI_NAME.match(rest)
    if name is None:
        raise ValueError("pypi: a package name comes first, e.g. pypi:mysqlclient==2.2.*")
    constraint = rest[name.end() :].strip()
    if constraint.startswith("["):
        raise ValueError("pypi: extras ([...]) are not supported in a driver spec")
    try:
        SpecifierSet(constraint)
    except InvalidSpecifier:
        raise ValueError(f"pypi: {constraint!r} is not a PEP 440 version specifier (e.g. ==2.2.*, >=1.1,<2)") from None
    return DriverSpec(text, "pypi", name.group(0), constraint)


def _npm(text: str, rest: str) -> DriverSpec:
    at = rest.find("@", 1)  # a scope starts with @ too
    name, constraint = (rest, "") if at < 0 else (rest[:at], rest[at + 1 :].strip())
    if not _NPM_NAME.match(name):
        raise ValueError(f"npm: {name!r} is not a package name (lowercase, optionally @scope/name)")
    if constraint and not _npm_tag(constraint) and npm_range(constraint) is None:
        raise ValueError(f"npm: {constraint!r} is neither a semver range (3, ^3.9, ~3.9.1, >=3 <4) nor a dist-tag")
    return DriverSpec(text, "npm", name, constraint)


def _maven(text: str, rest: str) -> DriverSpec:
    parts = rest.split(":")
    if len(parts) not in (2, 3) or not all(_MAVEN_PART.match(p) for p in parts[:2]):
        raise ValueError("maven: GROUP:ARTIFACT[:VERSION], e.g. maven:com.mysql:mysql-connector-j:9.*")
    constraint = parts[2].strip() if len(parts) == 3 else ""
    if constraint and (not _MAVEN_VERSION.match(constraint) or "*" in constraint.removesuffix(".*")):
        raise ValueError(f"maven: {constraint!r} is not a version or a version prefix like 9.* or 9.7.*")
    return DriverSpec(text, "maven", f"{parts[0]}:{parts[1]}", constraint)


def _deb(text: str, rest: str) -> DriverSpec:
    names = [n.strip() for n in rest.split(",")]
    if not names or not all(names):
        raise ValueError("deb: Debian packages separated by commas, e.g. deb:php8.4-cli,php8.4-mysql")
    for name in names:
        if "=" in name:
            raise ValueError(f"deb: {name!r}: no versions: the image's Debian suite decides them, as apt does")
        if not _DEB_NAME.match(name):
            raise ValueError(f"deb: {name!r} is not a Debian package name")
    return DriverSpec(text, "deb", ",".join(names))


def _go(text: str, rest: str) -> DriverSpec:
    module, _, query = rest.partition("@")
    if not _GO_MODULE.match(module):
        raise ValueError(f"go: {module!r} is not a module path (e.g. github.com/go-sql-driver/mysql)")
    if query and not _GO_QUERY.match(query):
        raise ValueError(f"go: {query!r} is not a version query (latest, v1, v1.9, v1.9.3)")
    return DriverSpec(text, "go", module, "" if query == "latest" else query)


# -- PyPI: PEP 440 -------------------------------------------------------------------------
def _pypi_version(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _pypi_accepts(constraint: str, version: str) -> bool:
    parsed = _pypi_version(version)
    if parsed is None:
        return False
    specifiers = SpecifierSet(constraint)
    if parsed.is_prerelease and not specifiers.prereleases:
        return False  # as pip: a prerelease only when the specifier names one
    return specifiers.contains(parsed, prereleases=True)


# -- semver (npm, Go) -------------------------------------------------------------------------
SemVer = tuple[int, int, int, tuple[object, ...]]


def semver(version: str) -> SemVer | None:
    """(major, minor, patch, prerelease) or None; a release sorts after its prereleases."""
    found = _SEMVER.match(version.strip())
    if found is None:
        return None
    pre: tuple[object, ...] = ()
    if found.group(4):
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in found.group(4).split("."))
    return int(found.group(1)), int(found.group(2)), int(found.group(3)), pre


def _semver_key(version: str) -> tuple[object, ...] | None:
    parsed = semver(version)
    if parsed is None:
        return None
    major, minor, patch, pre = parsed
    return (major, minor, patch, 0 if pre else 1, pre)


Comparator = tuple[str, tuple[object, ...]]  # (operator, semver key)
_PARTIAL = re.compile(
    r"^v?(?P<major>\d+|[xX*])(?:\.(?P<minor>\d+|[xX*])(?:\.(?P<patch>\d+|[xX*])"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?)?)?$"
)


def npm_range(text: str) -> list[list[Comparator]] | None:
    """npm's range grammar as sets of comparators (any set may match); None when malformed."""
    sets: list[list[Comparator]] = []
    for alternative in text.split("||"):
        part = re.sub(r"(<=|>=|<|>|=|~|\^)\s+", r"\1", alternative.strip())
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", part)
        comparators: list[Comparator] | None
        if hyphen:
            comparators = _hyphen(hyphen.group(1), hyphen.group(2))
        else:
            comparators = []
            for word in part.split() or ["*"]:
                one = _simple(word)
                if one is None:
                    return None
                comparators.extend(one)
        if comparators is None:
            return None
        sets.append(comparators)
    return sets


def _partial(text: str) -> tuple[int | None, int | None, int | None, str] | None:
    found = _PARTIAL.match(text)
    if found is None:
        return None

    def number(name: str) -> int | None:
        value = found.group(name)
        return None if value is None or value in "xX*" else int(value)

    major, minor, patch = number("major"), number("minor"), number("patch")
    if major is None:
        minor = patch = None
    elif minor is None:
        patch = None
    return major, minor, patch, found.group("pre") or ""


def _key(major: int, minor: int, patch: int, pre: str = "") -> tuple[object, ...]:
    key = _semver_key(f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""))
    assert key is not None
    return key


def _floor(major: int, minor: int, patch: int) -> tuple[object, ...]:
    """Below every version of major.minor.patch, its prereleases included (npm's `-0`)."""
    return (major, minor, patch, 0, ())


def _simple(word: str) -> list[Comparator] | None:
    found = re.match(r"^(<=|>=|<|>|=|~>?|\^)?(.*)$", word)
    assert found is not None
    op, rest = found.group(1) or "", found.group(2)
    parsed = _partial(rest)
    if parsed is None:
        return None
    major, minor, patch, pre = parsed
    if major is None:
        return [] if op in ("", "=", ">=", "<=", "^", "~", "~>") else [("<", _floor(0, 0, 0))]
    if op.startswith("~"):
        if minor is None:
            return [(">=", _floor(major, 0, 0)), ("<", _floor(major + 1, 0, 0))]
        return [(">=", _key(major, minor, patch or 0, pre)), ("<", _floor(major, minor + 1, 0))]
    if op == "^":
        low = _key(major, minor or 0, patch or 0, pre)
        if major > 0 or minor is None:
            return [(">=", low), ("<", _floor(major + 1, 0, 0))]
        if minor > 0 or patch is None:
            return [(">=", low), ("<", _floor(0, minor + 1, 0))]
        return [(">=", low), ("<", _floor(0, 0, patch + 1))]
    if minor is None or patch is None:  # a partial: a range of its own
        upper = _floor(major + 1, 0, 0) if minor is None else _floor(major, minor + 1, 0)
        lower = _floor(major, minor or 0, 0)
        return {
            "": [(">=", lower), ("<", upper)],
            "=": [(">=", lower), ("<", upper)],
            ">=": [(">=", lower)],
            ">": [(">=", upper)],
            "<": [("<", lower)],
            "<=": [("<", upper)],
        }.get(op)
    return [(op or "=", _key(major, minor, patch, pre))]


def _hyphen(low: str, high: str) -> list[Comparator] | None:
    first, last = _partial(low), _partial(high)
    if first is None or last is None or first[0] is None:
        return None
    comparators: list[Comparator] = [(">=", _key(first[0], first[1] or 0, first[2] or 0, first[3]))]
    if last[0] is None:
        return comparators
    if last[1] is None:
        comparators.append(("<", _floor(last[0] + 1, 0, 0)))
    elif last[2] is None:
        comparators.append(("<", _floor(last[0], last[1] + 1, 0)))
    else:
        comparators.append(("<=", _key(last[0], last[1], last[2], last[3])))
    return comparators


def _compare(op: str, left: tuple[object, ...], right: tuple[object, ...]) -> bool:
    less, equal = left < right, left == right
    return {"<": less, "<=": less or equal, ">": not (less or equal), ">=": not less, "=": equal}[op]


def _npm_tag(constraint: str) -> str:
    """The dist-tag a constraint names: "latest" for none, "" for a range (npm reads a
    constraint as a range when it can)."""
    if not constraint:
        return "latest"
    return constraint if npm_range(constraint) is None and _NPM_TAG.match(constraint) else ""


def _npm_accepts(constraint: str, version: str) -> bool:
    key = _semver_key(version)
    if key is None or _npm_tag(constraint):
        return False  # dist-tags are resolved by the registry, not here
    prerelease = bool(key[4])
    for comparators in npm_range(constraint) or []:
        if not all(_compare(op, key, bound) for op, bound in comparators):
            continue
        # npm: a prerelease matches only a set that names a prerelease of the same x.y.z
        if not prerelease or any(bound[4] and bound[:3] == key[:3] for _, bound in comparators):
            return True
    return False


# -- Maven ------------------------------------------------------------------------------------
def _maven_key(version: str) -> tuple[object, ...] | None:
    """A simplified ComparableVersion: numbers numerically, a release after its qualifiers."""
    if not re.match(r"^\d", version):
        return None
    items: list[tuple[int, object]] = []
    for token in re.findall(r"\d+|[A-Za-z]+", version):
        items.append((1, int(token)) if token.isdigit() else (0, token.lower()))
    while len(items) < 4:
        items.append((1, 0))
    return (tuple(items), 0 if _MAVEN_PRERELEASE.search(version) else 1)


def _maven_accepts(constraint: str, version: str) -> bool:
    stable = not _MAVEN_PRERELEASE.search(version)
    if not constraint:
        return stable
    if constraint.endswith(".*"):
        return stable and version.startswith(constraint[:-1])
    return version == constraint


# -- Go module queries ------------------------------------------------------------------------
def _go_accepts(constraint: str, version: str) -> bool:
    parsed = semver(version)
    if parsed is None or not version.startswith("v"):
        return False
    if constraint.count(".") == 2:
        return version == constraint
    if parsed[3]:  # prereleases and pseudo-versions only when pinned
        return False
    if not constraint:
        return True
    return version.startswith(constraint + ".")


_ACCEPTS: dict[str, Callable[[str, str], bool]] = {
    "pypi": _pypi_accepts,
    "npm": _npm_accepts,
    "maven": _maven_accepts,
    "go": _go_accepts,
    "deb": lambda constraint, version: True,
}
_ORDER: dict[str, Callable[[str], object]] = {
    "pypi": _pypi_version,
    "npm": _semver_key,
    "maven": _maven_key,
    "go": _semver_key,
    "deb": lambda version: version,
}
