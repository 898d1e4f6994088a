"""Driver rows: how a driver is installed from its registry into the language's runtime
image (as its users install it: pip into a virtual environment, npm, Maven, `go get` and a
build), and how the smoke program then runs with it. Pure: scripts and argv; the probe
runs them (`ecoready.probe_api.install_cache`). Nothing of ecoready's need be in the image:
the smoke program (ecoready.probes.smoke) goes into the installer (Go and Java compile it
there) or into the cell's container at run time (the scripts).

Every install script first checks that the image is the runtime the row needs (the
language's tool and the smoke program); when it is not, it prints `ecoready-mismatch: ...`
and exits 64: the row is misconfigured, not the driver broken. A failed install prints
`ecoready-absent: NEED` for each of the source build's needs the image lacks.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from ecoready.probe_api import TRUST_PEM, Packaging, PackagingVerdict, absent_script, registry_url
from ecoready.probes import smoke

MISMATCH = 64  # the install script's exit code when the image is not the runtime the row needs
MISMATCH_LINE = "ecoready-mismatch: "
ABSENT_LINE = "ecoready-absent: "
BUILT_FROM_SOURCE = "built from source"  # the `how` label of a driver pip built from its sdist
ROOT = "/opt/ecoready"
SMOKE_DIR = f"{ROOT}/smoke"  # where the smoke program is put: in the installer, or at run time

# The smoke program's --driver for each Python driver (by PyPI name, lowercase).
PYTHON_DRIVERS = {
    "pymysql": "pymysql",
    "mysqlclient": "mysqlclient",
    "mysql-connector-python": "mysql-connector",
    "mariadb": "mariadb",  # MariaDB Connector/Python
}

CLASSIC, X_PROTOCOL = "classic", "x"
# The drivers that speak the X Protocol only (to the server's X Plugin, not its classic
# port), by registry package name: the probe gives their smoke program the X port.
X_PROTOCOL_DRIVERS = ("@mysql/xdevapi",)  # Oracle's Connector/Node.js (the X DevAPI)

# Build tools a Python driver's sdist finds through an environment variable (by PyPI name):
# the variable is set to the tool on the image's PATH, as the package's own error message
# advises. MariaDB Connector/Python's setup first runs site.cfg's /usr/local/bin/mariadb_config
# and falls back to the PATH's only when that raises FileNotFoundError; Python 3.13 spawns it
# with posix_spawn, which under qemu-user cannot report a failed exec (qemu runs vfork as a
# fork, so the child's errno never reaches the parent: the call "succeeds" with exit 127),
# the fallback never happens and an emulated arm64 build stops with "mariadb_config not
# found". Natively the variable names the very tool the fallback finds: the same build.
PYTHON_BUILD_TOOLS = {"mariadb": ("MARIADB_CONFIG", "mariadb_config")}


@dataclass(frozen=True)
class Recipe:
    script: str  # the install: run once per (runtime image, arch, version), as root, with a way out
    env: Mapping[str, str]  # for the install
    program: tuple[str, ...]  # the smoke program with the installed driver, before the common options
    run_env: Mapping[str, str] = field(default_factory=dict)  # for the connector container
    install_files: Mapping[str, bytes] = field(default_factory=dict)  # put into the installer (sources)
    run_files: Mapping[str, bytes] = field(default_factory=dict)  # put into the connector container
    name: str = ""  # the smoke program in messages ("" = the program's own name)
    protocol: str = CLASSIC  # the driver's wire protocol: CLASSIC, or X_PROTOCOL (the X Plugin's port)


def smoke_file(name: str) -> tuple[str, bytes]:
    """One of ecoready's smoke programs: its path in the container and its bytes."""
    return f"{SMOKE_DIR}/{name}", smoke.source(name)


def downloads_from(packaging: Packaging) -> tuple[str, ...]:
    """The registries' base URLs an install of the package downloads from (mirrors
    included); none known for Debian's packages (the image's own apt sources)."""
    return () if packaging.registry == "deb" else (registry_url(packaging.registry),)


def recipe(packaging: Packaging, attempt: float = 120.0, language: str = "") -> Recipe:
    """`attempt`: seconds one try of a download that can stall may take (Maven's, apt's);
    `language`: the row's (Debian's packages serve several)."""
    if packaging.registry == "maven":
        return _java(packaging, attempt)
    if packaging.registry == "deb":
        return _deb(packaging, language, attempt)
    return _RECIPES[packaging.registry](packaging)


def _script(*steps: str, needs: tuple[str, ...] = (), python: str = "python3") -> str:
    """Steps joined with && (so a failure stops them, inside `||` too); on failure, the
    source build's needs the image lacks, then the failing step's exit code."""
    absent = absent_script(needs, python).replace("echo ", f"echo {ABSENT_LINE}")
    body = " &&\n".join(steps)
    return f"{{\n{body}\n}} || {{ rc=$?; [ $rc -eq {MISMATCH} ] || {{\n{absent}\n}}; exit $rc; }}"


def need(test: str, what: str) -> str:
    """Fail as a mismatch when the shell test `test` fails (the image is not the runtime)."""
    return f"{{ {test} >/dev/null || {{ echo {shlex.quote(MISMATCH_LINE + what)}; exit {MISMATCH}; }}; }}"


def _python(p: Packaging) -> Recipe:
    venv = f"{ROOT}/venv"
    report = "/tmp/ecoready-pip-report.json"
    wanted = p.package.lower().replace("_", "-").replace(".", "-")
    # pip's install report says whether the driver came as a wheel or was built from its sdist
    how = (
        "import json, re\n"
        f'report = json.load(open("{report}"))\n'
        'for item in report.get("install", []):\n'
        '    name = re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower()\n'
        f'    if name == "{wanted}":\n'
        '        url = item.get("download_info", {}).get("url", "")\n'
        '        print("ecoready-label: how=" + ("wheel" if url.endswith(".whl") else "' + BUILT_FROM_SOURCE + '"))\n'
        '        print("ecoready-label: file=" + url.rsplit("/", 1)[-1])\n'
    )
    steps = [
        need("command -v python3", "the image has no python3: a pypi driver needs a Python runtime image"),
        need(f"python3 -m venv {venv}", "python3 cannot make a virtual environment (python3-venv)"),
    ]
    if wanted in PYTHON_BUILD_TOOLS:
        variable, tool = PYTHON_BUILD_TOOLS[wanted]
        # the image's own tool, unless the image sets the variable itself; none: the sdist says so
        steps.append(
            f'if [ -z "${{{variable}:-}}" ] && command -v {tool} >/dev/null; then '
            f'export {variable}="$(command -v {tool})"; fi'
        )
    script = _script(
        *steps,
        f"{venv}/bin/pip install --no-cache-dir --disable-pip-version-check --no-input --progress-bar off "
        f"--index-url {shlex.quote(registry_url('pypi') + '/simple')} --report {report} "
        f"{shlex.quote(f'{p.package}=={p.version}')}",
        f"{venv}/bin/python -c {shlex.quote(how)}",
        f"rm -f {report}",
        needs=p.needs,
        python=f"{venv}/bin/python",
    )
    env = {"PIP_CERT": TRUST_PEM, "REQUESTS_CA_BUNDLE": TRUST_PEM}
    path, program_bytes = smoke_file("smoke-python")
    program = (f"{venv}/bin/python", path, "--driver", PYTHON_DRIVERS[wanted])
    return Recipe(script, env, program, run_files={path: program_bytes})


def _nodejs(p: Packaging) -> Recipe:
    home = f"{ROOT}/node"
    script = _script(
        need("command -v npm", "the image has no npm: an npm driver needs a Node.js runtime image"),
        f"mkdir -p {home}",
        f"cd {home}",
        "npm install --no-audit --no-fund --omit=dev --no-package-lock --no-save --loglevel=error "
        f"--registry {shlex.quote(registry_url('npm') + '/')} {shlex.quote(f'{p.package}@{p.version}')}",
        "rm -rf /tmp/ecoready-npm",
        needs=p.needs,
    )
    env = {"npm_config_cafile": TRUST_PEM, "NODE_EXTRA_CA_CERTS": TRUST_PEM, "npm_config_cache": "/tmp/ecoready-npm"}
    path, program_bytes = smoke_file("smoke-nodejs")
    program = ("node", path, "--driver", p.package)
    protocol = X_PROTOCOL if p.package in X_PROTOCOL_DRIVERS else CLASSIC
    run_env = {"NODE_PATH": f"{home}/node_modules"}
    return Recipe(script, env, program, run_env, run_files={path: program_bytes}, protocol=protocol)


def _retried(command: str, limit: float, tries: int = 3) -> str:
    """`command` under a time limit, tried again when it runs out (not when it fails)."""
    bounded = f"timeout -k 5 {limit:.0f} {command}"
    return (
        f"{{ i=1; until {bounded}; do rc=$?; [ $rc -eq 124 -o $rc -eq 137 ] && [ $i -lt {tries} ] || exit $rc; "
        f"i=$((i + 1)); echo 'ecoready: a download stalled, trying again' >&2; done; }}"
    )


def _java(p: Packaging, attempt: float = 120.0) -> Recipe:
    """The driver's jar from Maven Central (a JDBC driver needs no other jar for JDBC), and
    the smoke program compiled by the image's javac: a JDK image (eclipse-temurin:21), as
    the official images have it, with curl."""
    group, artifact = p.package.split(":")
    home = f"{ROOT}/java"
    url = f"{registry_url('maven')}/{group.replace('.', '/')}/{artifact}/{p.version}/{artifact}-{p.version}.jar"
    source, source_bytes = smoke_file("EcoreadySmoke.java")
    script = _script(
        need("command -v java", "the image has no java: a maven driver needs a Java image"),
        need("command -v javac", "the image has no javac: a maven driver needs a JDK image (not a -jre one)"),
        need("command -v curl", "the image has no curl (the eclipse-temurin images have it)"),
        f"mkdir -p {home}/lib {home}/classes",
        # a try that stalls is ended and made again (seen through this site's proxy)
        _retried(
            f"curl -fsSL --connect-timeout 30 -o {home}/lib/{artifact}-{p.version}.jar {shlex.quote(url)}", attempt
        ),
        f"javac -encoding UTF-8 -nowarn -d {home}/classes {source}",
        f"rm -f {source}",
        needs=p.needs,
    )
    env = {"CURL_CA_BUNDLE": TRUST_PEM}
    scheme = "mariadb" if group == "org.mariadb.jdbc" else "mysql"
    # C1 only and the serial collector: the JVM starts much faster, above all under emulation
    program = (
        "java",
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        "-Xss512k",
        "-Xmx128m",
        "-cp",
        f"{home}/classes:{home}/lib/*",
        "EcoreadySmoke",
        "--scheme",
        scheme,
    )
    return Recipe(script, env, program, install_files={source: source_bytes}, name="smoke-java")


def _go(p: Packaging) -> Recipe:
    work = "/tmp/ecoready-go"
    source, source_bytes = smoke_file("smoke.go")
    script = _script(
        need("command -v go", "the image has no go: a go driver needs a Go toolchain image"),
        f"mkdir -p {work}/src {ROOT}/bin",
        f"mv {source} {work}/src/",
        f"cd {work}/src",
        "go mod init ecoready/smoke",
        f"go get {shlex.quote(f'{p.package}@{p.version}')}",
        f"go build -trimpath -ldflags='-s -w' -o {ROOT}/bin/smoke-go .",
        "cd /",
        f"rm -rf {work}",
        needs=p.needs,
    )
    env = go_env(work, cgo=p.verdict is not PackagingVerdict.READY)
    return Recipe(script, env, (f"{ROOT}/bin/smoke-go",), install_files={source: source_bytes})


def go_env(work: str, *, cgo: bool) -> dict[str, str]:
    """A Go build's environment in an installer: the module proxy, caches under `work` (removed
    after), the image's own Go."""
    return {
        "GOPROXY": registry_url("go"),
        "GOPATH": f"{work}/path",
        "GOCACHE": f"{work}/cache",
        "GOFLAGS": "-modcacherw",  # so the module cache can be removed after the build
        "GOTOOLCHAIN": "local",  # the image's Go, never one downloaded behind the row's back
        "CGO_ENABLED": "1" if cgo else "0",
        "HOME": "/tmp",
    }


# Debian's packages: each language's smoke program, and how it runs (a script under its
# interpreter) or is compiled in the installer (C and C++, with the image's compiler).
_DEB_SCRIPTS = {"php": ("php", "smoke-php"), "perl": ("perl", "smoke-perl"), "ruby": ("ruby", "smoke-ruby")}
_DEB_BUILDS = {
    "c": ("smoke.c", "gcc -O2 -o {out} {src} $(mariadb_config --cflags --libs)"),  # libmariadb-dev's
    "cpp": ("smoke.cpp", "g++ -O2 -o {out} {src} -lmysqlcppconn"),
}


def _deb(p: Packaging, language: str, attempt: float) -> Recipe:
    """`apt-get install` of the packages into a Debian-based image (as its users do), the
    installed versions as facts, then (C, C++) the smoke program compiled."""
    packages = " ".join(shlex.quote(n) for n in p.package.split(","))
    versions = f"dpkg-query -W -f '${{Package}}=${{Version}} ' {packages}"
    steps = [
        need("command -v apt-get", "the image has no apt-get: a deb driver needs a Debian-based image"),
        "export DEBIAN_FRONTEND=noninteractive",
        _retried("apt-get update -qq", attempt),
        # only the downloads are tried again when they stall: a try cut off while dpkg
        # unpacks (minutes under emulation on a busy host) would leave dpkg running with
        # its lock held, and the next try fail on the lock: our limit, not the package's
        _retried(f"apt-get install -y -qq --download-only --no-install-recommends {packages}", attempt),
        f"apt-get install -y -qq --no-download --no-install-recommends {packages}",
        "rm -rf /var/lib/apt/lists/*",
        f'echo "ecoready-label: version=$({versions})"',
        'echo "ecoready-label: how=installed with apt-get"',
    ]
    if language in _DEB_SCRIPTS:
        interpreter, name = _DEB_SCRIPTS[language]
        path, program_bytes = smoke_file(name)
        return Recipe(_script(*steps), {}, (interpreter, path), run_files={path: program_bytes}, name=name)
    if language not in _DEB_BUILDS:
        raise ValueError(f"no smoke program for language {language!r} from Debian's packages")
    source_name, build = _DEB_BUILDS[language]
    source, source_bytes = smoke_file(source_name)
    out = f"{ROOT}/bin/smoke-{language}"
    steps += [f"mkdir -p {ROOT}/bin", build.format(out=out, src=source), f"rm -f {source}"]
    return Recipe(_script(*steps), {}, (out,), install_files={source: source_bytes})


_RECIPES = {"pypi": _python, "npm": _nodejs, "go": _go}


@dataclass(frozen=True)
class Failure:
    mismatch: str  # the image is not the runtime the row needs ("" otherwise)
    absent: tuple[str, ...]  # the source build's needs the image lacks
    last: str  # the installer's own last word


def failure(stdout: str, stderr: str) -> Failure:
    """What a failed install script said: a mismatch, the needs the image lacks, and the
    installer's most telling line (pip's summary, an `error` line, else the last)."""
    lines = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines() if ln.strip()]
    mismatch = next((ln[len(MISMATCH_LINE) :] for ln in lines if ln.startswith(MISMATCH_LINE)), "")
    absent = tuple(ln[len(ABSENT_LINE) :] for ln in lines if ln.startswith(ABSENT_LINE))
    own = [ln for ln in lines if not ln.startswith(("ecoready-", "note:", "hint:", "╰─>", "[end of output]"))]
    telling = [ln for ln in own if ln.startswith(("×", "error", "ERROR", "npm ERR!", "npm error", "go: ", "[ERROR]"))]
    last = (telling or own or [""])[-1].lstrip("× ").strip()
    return Failure(mismatch, absent, last)
