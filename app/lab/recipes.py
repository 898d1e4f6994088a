"""What the lab builds and how an image's recipe is known: the images (one Dockerfile
context under containers/ each, a Debian suite, arches), the builders that compile for
every arch natively, their tags, and the recipe hashes that decide what is rebuilt."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import EnvironmentProblem
from ecoready.probes import smoke

LAB_DIR = Path(os.environ.get("ECOREADY_LAB_DIR", "/var/lib/ecoready/lab"))

REGISTRY = os.environ.get("ECOREADY_LAB_REGISTRY", "127.0.0.1:5000")

LOCAL_PREFIX = "ecoready-lab"

RECIPE_LABEL = "ecoready.lab.recipe"

ARCHES = ("amd64", "arm64")

# Packages debootstrap adds to a suite's base: every image on it needs them, and their
# maintainer scripts then run once per base instead of once per image (ca-certificates'
# take ~30 s under emulation).
BASE_PACKAGES = {"bookworm": ("ca-certificates",)}

# The lab as a Docker Hub stand-in: what it really makes, under docker.io's repository
# paths in this namespace of the local registry, so the default matrix runs unchanged with
# ECOREADY_REGISTRY_MIRRORS="docker.io=127.0.0.1:5000/hub" (docs/matrix.md, mirrors).
STAND_IN = "hub"
# The stand-ins of other registries, the same way (a prefix mirror each):
# ECOREADY_REGISTRY_MIRRORS="docker.io=127.0.0.1:5000/hub,container-registry.oracle.com=127.0.0.1:5000/oracle"
ORACLE_REGISTRY = "container-registry.oracle.com"
STAND_INS = {"docker.io": STAND_IN, ORACLE_REGISTRY: "oracle"}
# The Debian bases published there as `debian:<suite>-slim`: debootstrap's minbase with
# docs excluded and no daemons started, as Debian's slim images are made.
STAND_IN_BASES = ("bookworm", "trixie")

# How long one build may take; arm64 builds run under qemu.
BUILD_TIMEOUT = {"amd64": 900.0, "arm64": 3600.0}


@dataclass(frozen=True)
class LabImage:
    name: str  # repository name in the lab registry: lab/<name>
    tag: str
    context: str  # directory under containers/
    suite: str  # Debian suite of its base
    # Debian packages installed on the base (`name` or `name=version`) by
    # containers/base/apt-into, natively for every arch; the Dockerfile starts from the result
    packages: tuple[str, ...]
    apt_options: tuple[str, ...] = ()
    extra_suite: str = ""  # another suite of the mirror, added and preferred (backports)
    arches: tuple[str, ...] = ARCHES
    # Other lab/<name>:<tag> indexes that point at the same manifests (one image, many tools).
    aliases: tuple[tuple[str, str], ...] = ()
    builder: str | None = None  # a BUILDERS name: its /out becomes out/ in the build context
    # Another lab image (its key) that is this one's base instead of the suite's: the
    # packages they share are installed, and their maintainer scripts run, once.
    on: str = ""
    # Files of other contexts copied into this one's (source under containers/, name in the
    # context): one smoke program, written once, in the connectors image and a runtime image.
    files: tuple[tuple[str, str], ...] = ()
    # Upstream repositories and tags of the software it really is (Docker Hub's, or with
    # their registry in front: `container-registry.oracle.com/mysql/community-router`), under
    # which the lab's stand-in of that registry (`STAND_INS`) also publishes it: never a
    # name whose software it is not.
    upstream: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.name}:{self.tag}"


@dataclass(frozen=True)
class Builder:
    """An image built for the host's own arch (never emulated, never published) whose
    `output` directory holds artifacts for every arch."""

    name: str
    context: str  # directory under containers/
    suite: str
    output: str = "/out"
    build_args: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # as LabImage.files


# galera-4, mariadb-backup and sysbench too: one image serves every lab probe that needs a server
_MARIADB = (
    "mariadb-server",
    "mariadb-client",
    "mariadb-backup",
    "galera-4",
    "sysbench",
    "socat",
    "rsync",
    "procps",
    "iproute2",
)
_PYTHON = ("ca-certificates", "python3", "python3-venv")
# ecoready's smoke programs, as `files` name them (the checkout's probes/smoke/, seen from
# containers/); read from the installed package wherever it is (`source_path`)
SMOKE = "../probes/smoke"
_SCRIPTS = ("smoke-python", "smoke-nodejs", "smoke-php", "smoke-perl", "smoke-ruby")
# The version is pinned: sid moves. When the mirror no longer has it, apt-into stops with
# one line saying so.
MYSQL_VERSION = "9.7.4-2"
NODE_VERSION = "24.22.2+dfsg+~cs24.19.2-1"  # sid's Node.js 24: the stand-in's node:24
HAPROXY_VERSION = "3.2.26-1"
PERCONA_TOOLKIT_VERSION = "3.7.1-5"

# what the MariaDB and MySQL entry points share: one file, sourced by both
_ENTRYPOINT_LIB = (("shared/entrypoint-lib.sh", "entrypoint-lib.sh"),)

_HUB_MARIADB_10_11 = (("library/mariadb", "10.11"),)
_HUB_MARIADB_11_8 = (("library/mariadb", "11.8"),)

IMAGES: tuple[LabImage, ...] = (
    LabImage("mariadb", "10.11", "mariadb", "bookworm", _MARIADB, files=_ENTRYPOINT_LIB, upstream=_HUB_MARIADB_10_11),
    LabImage("mariadb", "11.8", "mariadb", "trixie", _MARIADB, files=_ENTRYPOINT_LIB, upstream=_HUB_MARIADB_11_8),
    LabImage(
        "tools",
        "bookworm",
        "tools",
        "bookworm",
        ("mariadb-client", "mydumper", "percona-toolkit", "haproxy", "socat", "procps"),
        aliases=(("haproxy", "2.6"), ("percona-toolkit", "3.2"), ("mydumper", "0.10"), ("mariadb-client", "10.11")),
    ),
    # One image for the drivers of all languages: one install per arch. Its smoke programs
    # are the ones ecoready ships (probes/smoke/), copied into bin/; the builder compiles the
    # others from the same files.
    LabImage(
        "connectors",
        "bookworm",
        "connectors",
        "bookworm",
        (
            "libmariadb3",
            "libmysqlcppconn7v5",
            "default-jre-headless",
            "libmariadb-java",
            "python3",
            "python3-pymysql",
            "python3-mysqldb",
            "nodejs",
            "node-mysql",
            "php-cli",
            "php-mysql",
            "perl",
            "libdbd-mariadb-perl",
            "ruby",
            "ruby-mysql2",
        ),
        builder="connectors-builder",
        files=tuple((f"{SMOKE}/{name}", f"bin/{name}") for name in _SCRIPTS),
    ),
    # The language runtimes: the official images the default matrix's connector rows name,
    # stood in for by Debian's builds of the same lines (docs/lab.md): python:3.13-slim and
    # 3.13 (trixie's Python 3.13), node:24 (sid's Node.js 24), golang:1.27 (sid's Go 1.27),
    # and eclipse-temurin:21, which is Debian's OpenJDK 21 build standing in for Adoptium's.
    # The lab matrix's driver rows run on the same images (one build, and one driver install
    # per image, arch and version for both matrices): the probe installs the driver from its
    # registry and puts its smoke program in at run time, as on the official images.
    # python:3.13-slim has no compiler, like upstream's; python:3.13 is built on it (its
    # python3, py3compile emulated, installed once) with a C compiler and the headers.
    LabImage(
        "python",
        "3.13-slim",
        "python",
        "trixie",
        (*_PYTHON, "python-is-python3"),
        upstream=(("library/python", "3.13-slim"),),
    ),
    LabImage(
        "python",
        "3.13",
        "python",
        "trixie",
        ("gcc", "libc6-dev", "python3-dev", "pkg-config", "default-libmysqlclient-dev"),
        on="python:3.13-slim",
        upstream=(("library/python", "3.13"),),
    ),
    LabImage(
        "node",
        "24",
        "node",
        "sid",
        ("ca-certificates", f"nodejs={NODE_VERSION}", "npm"),
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        upstream=(("library/node", "24"),),
    ),
    LabImage(
        "openjdk",
        "21",
        "openjdk",
        "trixie",
        ("ca-certificates", "openjdk-21-jdk-headless", "curl"),
        upstream=(("library/eclipse-temurin", "21"),),
    ),
    LabImage(
        "golang",
        "1.27",
        "golang",
        "sid",  # Go 1.27 is the newest line (August 2026): in no other suite
        ("ca-certificates", "golang-1.27-go", "gcc", "libc6-dev"),  # the package names the line
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        upstream=(("library/golang", "1.27"),),
    ),
    # Debian ships MySQL only in its unstable suite (sid), whose index on this mirror has
    # expired (lab-notes): its Valid-Until is not checked.
    LabImage(
        "mysql",
        "9.7",
        "mysql",
        "sid",
        (
            f"mysql-server-core={MYSQL_VERSION}",
            f"mysql-client={MYSQL_VERSION}",
            f"mysql-client-core={MYSQL_VERSION}",
            f"mysql-router={MYSQL_VERSION}",
            "procps",
            "iproute2",
        ),
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        aliases=(("mysql-router", "9.7"), ("mysql-client", "9.7")),
        files=_ENTRYPOINT_LIB,
        upstream=(("library/mysql", "9.7"),),
    ),
    # The stand-in's tools, each from Debian's unstable suite (its index expired, as for
    # mysql above) and laid out as its upstream image is (the Dockerfiles say how).
    LabImage(
        "haproxy",
        "3.2",
        "haproxy",
        "sid",
        (f"haproxy={HAPROXY_VERSION}", "socat", "ca-certificates"),
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        upstream=(("library/haproxy", "3.2"),),
    ),
    LabImage(
        "percona-toolkit",
        "3.7.1",
        "percona-toolkit",
        "sid",
        (
            f"percona-toolkit={PERCONA_TOOLKIT_VERSION}",
            "libdbd-mysql-perl",
            f"mysql-client={MYSQL_VERSION}",
            f"mysql-client-core={MYSQL_VERSION}",
            "hostname",
        ),
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        upstream=(("percona/percona-toolkit", "3.7.1"),),
    ),
    # Oracle's router image, apart from lab/mysql-router (an alias of the server image)
    LabImage(
        "community-router",
        "9.7",
        "community-router",
        "sid",
        (f"mysql-router={MYSQL_VERSION}", f"mysql-client={MYSQL_VERSION}", f"mysql-client-core={MYSQL_VERSION}"),
        apt_options=("-o", "Acquire::Check-Valid-Until=false"),
        upstream=((f"{ORACLE_REGISTRY}/mysql/community-router", "9.7"),),
    ),
    # a user's own app as the generic `command` probe meets it (docs/own-stack.md)
    LabImage("app-client", "1", "app-client", "bookworm", ("mariadb-client",)),
    # an image that stops at start asking for a licence key (issue 58): the base and a script,
    # no package and no build step under emulation
    LabImage("licensed", "1", "licensed", "bookworm", ()),
)


BUILDERS: tuple[Builder, ...] = (
    Builder(
        "connectors-builder",
        "connectors/builder",
        "bookworm",
        build_args=(("ARCHES", " ".join(ARCHES)),),
        files=tuple((f"{SMOKE}/{name}", name) for name in ("smoke.c", "smoke.cpp", "smoke.go", "EcoreadySmoke.java")),
    ),
)


def stand_in_repository(upstream: str) -> str:
    """Where the local registry's stand-in holds an upstream repository (`library/mysql`
    -> `hub/library/mysql`); KeyError for a registry the lab stands in for not."""
    first, _, rest = upstream.partition("/")
    registry, path = (first, rest) if rest and ("." in first or ":" in first) else ("docker.io", upstream)
    return f"{STAND_INS[registry]}/{path}"


def containers_dir() -> Path:
    path = Path(os.environ.get("ECOREADY_CONTAINERS", Path(__file__).resolve().parents[2] / "containers"))
    if not (path / "base" / "Dockerfile").is_file():
        raise EnvironmentProblem(
            f"the lab needs ecoready's source checkout: {path}/base/Dockerfile not found "
            "(set ECOREADY_CONTAINERS to the checkout's containers/ directory)"
        )
    return path


def apt_into() -> Path:
    """The script that installs an image's packages (run natively for every arch)."""
    return containers_dir() / "base" / "apt-into"


def native_tools_file() -> Path:
    """The maintainer scripts' tools a foreign arch's builds take from this machine."""
    return containers_dir() / "base" / "native-tools"


def native_tool_names() -> list[str]:
    lines = native_tools_file().read_text().splitlines()
    return [word for line in lines for word in line.split("#", 1)[0].split()]


def native_chroot() -> Path:
    """debootstrap's chroot for a foreign arch's base (the tools above, natively)."""
    return containers_dir() / "base" / "native-chroot"


def debian_mirror() -> str:
    """The machine's own Debian mirror (users' sites have their own)."""
    if os.environ.get("ECOREADY_DEBIAN_MIRROR"):
        return os.environ["ECOREADY_DEBIAN_MIRROR"]
    candidates: list[str] = []
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        candidates += re.findall(r"^URIs:\s*(\S+)", path.read_text(errors="replace"), re.M)
    sources = Path("/etc/apt/sources.list")
    if sources.is_file():
        candidates += re.findall(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)", sources.read_text(errors="replace"), re.M)
    for uri in candidates:
        if "security" not in uri and uri.startswith(("http://", "https://")):
            return uri
    return "http://deb.debian.org/debian"


def recipe_hash(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def source_path(source: str) -> Path:
    """A `files` source: a smoke program from the package (wherever it is installed, so a
    copy of containers/ alone builds too), else a path under containers/."""
    if source.startswith(f"{SMOKE}/"):
        return Path(smoke.__file__).resolve().parent / source.removeprefix(f"{SMOKE}/")
    return containers_dir() / source


def files_hash(files: tuple[tuple[str, str], ...]) -> str:
    """The recipe part of files copied in from other contexts: names, modes and bytes."""
    return recipe_hash(
        *(
            f"{source}>{name}:{oct(source_path(source).stat().st_mode & 0o777)}".encode()
            + source_path(source).read_bytes()
            for source, name in files
        )
    )


def context_hash(path: Path) -> str:
    files = sorted(f for f in path.rglob("*") if f.is_file())
    return recipe_hash(
        *(f"{p.relative_to(path)}:{oct(p.stat().st_mode & 0o777)}".encode() + p.read_bytes() for p in files)
    )


def base_tag(suite: str, arch: str) -> str:
    return f"{LOCAL_PREFIX}/base:{suite}-{arch}"


def image_tag(image: LabImage, arch: str) -> str:
    return f"{LOCAL_PREFIX}/{image.name}:{image.tag}-{arch}"


def builder_tag(builder: Builder, arch: str) -> str:
    return f"{LOCAL_PREFIX}/{builder.name}:{builder.suite}-{arch}"


def image_named(key: str) -> LabImage:
    for image in IMAGES:
        if image.key == key:
            return image
    raise KeyError(key)


def builder_named(name: str) -> Builder:
    for builder in BUILDERS:
        if builder.name == name:
            return builder
    raise KeyError(name)
