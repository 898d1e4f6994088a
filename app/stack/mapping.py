"""The stack's services -> matrix rows (pure), each with the reasons it was mapped so, and
what could not be decided.

Known images (`known.py`) get their probe; a service that needs a MySQL server (a proxy,
a backup tool, the user's app) gets as backend the server it depends on or names in its
environment (through a proxy: the proxy's backend). Every other service becomes a row of
the generic `command` probe: `service` mode when it stays up, `run` mode (its command must
exit 0) when it runs to completion; where it runs says which when the source knows it
(Kubernetes: `Service.daemon`), else a port, a healthcheck or a `restart:` that keeps it
up make it a service. Its environment is taken over
with the backend's details as placeholders; secrets are never written: a password is
given only as a file (`{password_file}`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ecoready.domain.model import Category
from ecoready.domain.text import acting_character, inert, shown
from ecoready.matrix.command_options import placeholders_in
from ecoready.matrix.document import floating_tag
from ecoready.matrix.kinds import KINDS
from ecoready.stack.hosts import Hosts
from ecoready.stack.known import (
    CLIENT_PORTS,
    DAEMON_RESTARTS,
    FILE_SECRETS,
    GENERIC_ROLE,
    KNOWN,
    Known,
    known,
    repository_name,
)
from ecoready.stack.references import reference_problem
from ecoready.stack.services import Service

_ID_JUNK = re.compile(r"[^a-z0-9._-]+")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_SECRET = re.compile(r"PASSWORD|PASSWD|PWD|SECRET|TOKEN|API_?KEY|PRIVATE|CREDENTIAL", re.IGNORECASE)
_FLAG = frozenset({"", "0", "1", "yes", "no", "true", "false", "on", "off"})
_CREDENTIALS_IN_URL = re.compile(r"//[^/@\s:]*:[^/@\s]*@")
_DATABASE_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}\Z")
MYSQL_PORT = "3306"


@dataclass(frozen=True)
class Row:
    """One [[components]] row, ready to be written (`toml_out.py`)."""

    id: str
    name: str
    category: Category
    probe: str
    image: str
    service: str
    platform: str = ""
    pinned_at: tuple[str, ...] = ()  # where the pin is written (Kubernetes: YAML paths)
    backend: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    why: tuple[str, ...] = ()  # the row's comment, a line each


@dataclass(frozen=True)
class Mapped:
    rows: tuple[Row, ...]
    undecided: tuple[str, ...]  # what could not be decided (or taken over), a line each


def row_id(name: str, taken: dict[str, int]) -> str:
    """A matrix id for a service name: lower case, [a-z0-9._-], at most 63, unique among
    `taken` (the ids given, each with the suffix to try next when it is asked again)."""
    base = _ID_JUNK.sub("-", name.lower()).strip("-._")[:63].strip("-._") or "service"
    candidate, n = base, taken.get(base, 2)
    while candidate in taken:
        suffix = f"-{n}"
        candidate, n = base[: 63 - len(suffix)] + suffix, n + 1
    if candidate != base:
        taken[base] = n
    taken[candidate] = 2
    return candidate


def unique_names(services: Sequence[Service]) -> list[Service]:
    """Services named apart: two images of one repository (`--images mysql:8.4,mysql:9.1`)
    or one compose service name in two projects on a host get `-2`, `-3`, ..."""
    taken: set[str] = set()
    tried: dict[str, int] = {}  # a name -> the suffix to try next (thousands of one name: no scan)
    out = []
    for service in services:
        name, n = service.name, tried.get(service.name, 2)
        while name in taken:
            name, n = f"{service.name}-{n}", n + 1
        tried[service.name] = n
        taken.add(name)
        out.append(service if name == service.name else replace(service, name=name))
    return out


def map_services(services: Sequence[Service]) -> Mapped:
    # a matrix carries no string with a character that acts (validate refuses it): names are
    # shown escaped, values with one are left out below
    services = unique_names([replace(s, name=shown(s.name)) for s in services])
    undecided: list[str] = []
    usable: list[Service] = []
    for service in services:
        undecided.extend(f"{service.name}: {note}" for note in service.notes)
        problem = reference_problem(service.image)
        if problem is not None:
            undecided.append(f"{inert(service.name, 64)}: {problem}: left out")
            continue
        tag = floating_tag(service.image)
        if tag is not None and not service.built:
            undecided.append(
                f"{service.name}: {service.image} floats ({tag}): a run checks whatever it is that day; "
                "pin a version tag"
            )
        if service.built:
            undecided.append(
                f"{service.name}: built from source (`build:`): push {service.image} to a registry "
                "the hosts reach (or set `image:`) before running the matrix"
            )
        usable.append(service)
    taken: dict[str, int] = {}
    ids = {s.name: row_id(s.name, taken) for s in usable}
    kinds = {s.name: KNOWN.get(s.role) if s.role else known(s.image) for s in usable}
    servers = {s.name for s in usable if (k := kinds[s.name]) is not None and KINDS[k.probe].serves_sql}
    by_name = {s.name: s for s in usable}
    hosts = Hosts(by_name)
    fronts: dict[str, str] = {}  # proxy service -> the server it fronts
    order = sorted(usable, key=lambda s: _is_proxy(kinds[s.name]), reverse=True)  # proxies first
    rows: dict[str, Row] = {}
    for service in order:
        backend, reason = _backend(service, servers, fronts, hosts)
        kind = kinds[service.name]
        if kind is not None and not KINDS[kind.probe].needs_backend:
            backend = None  # a server (or cluster) brings its own
        if kind is not None and KINDS[kind.probe].needs_backend and backend is None and len(servers) == 1:
            backend, reason = next(iter(servers)), "the stack's only MySQL server"
        elif kind is not None and KINDS[kind.probe].needs_backend and backend is None and servers:
            # several servers and nothing says which: the first, and the user is told to choose
            names = [s.name for s in usable if s.name in servers]
            backend = names[0]
            reason = f"{len(names)} servers ({', '.join(names)}): set `backend =` to the one it works with"
            undecided.append(
                f"{service.name}: {len(names)} MySQL servers ({', '.join(names)}) and nothing says which one "
                f"{kind.what} works with: set `backend =` (written: {ids[backend]})"
            )
        if kind is not None and backend is not None and _is_proxy(kind):
            fronts[service.name] = backend
        if kind is not None and (backend is not None or not KINDS[kind.probe].needs_backend):
            row = _known_row(service, kind, ids, backend, reason, undecided)
        else:
            if kind is not None:
                undecided.append(
                    f"{service.name}: {kind.what} without a MySQL server to work with: checked as a plain service"
                )
            row = _generic_row(service, ids, (by_name, hosts), fronts, backend, reason, undecided)
        rows[service.name] = row
    rank = {s.name: i for i, s in enumerate(services)}

    def by_service(line: str) -> int:  # every line starts with its service's name (which may hold ": ")
        best, colon = len(rank), line.find(": ")
        while colon >= 0:
            best = min(best, rank.get(line[:colon], best))
            colon = line.find(": ", colon + 1)
        return best

    return Mapped(tuple(rows[s.name] for s in usable), tuple(sorted(undecided, key=by_service)))


def _is_proxy(kind: Known | None) -> bool:
    return kind is not None and kind.category is Category.LOAD_BALANCER


def _backend(service: Service, servers: set[str], fronts: Mapping[str, str], hosts: Hosts) -> tuple[str | None, str]:
    """The MySQL server a service works with, and why it is that one."""
    named = hosts.named(service)
    for candidates, how in ((service.depends_on, "depends_on"), (named, "its environment names")):
        for name in candidates:
            if name in servers and name != service.name:
                return name, f"{how} {name}"
            if name in fronts:
                return fronts[name], f"{how} {name}, which fronts {fronts[name]}"
    return None, ""


def _known_row(
    service: Service, kind: Known, ids: Mapping[str, str], backend: str | None, reason: str, undecided: list[str]
) -> Row:
    options = dict(kind.options)
    why = [f"{service.name}: {service.image} is {kind.what}: probe {kind.probe}"]
    if kind.probe == "server" and service.command:
        kept, dropped = server_options(service.command)
        if kept:
            options["args"] = kept
            why.append("its server options (compose `command:`, Kubernetes `args`) are kept as args")
        if dropped:
            words = " ".join(shown(w) for w in dropped)
            undecided.append(f"{service.name}: `command:` words that are no server option, dropped: {words}")
    elif (
        service.command and kind.category in (Category.SERVER, Category.HA) and "args" not in KINDS[kind.probe].options
    ):
        words = inert(" ".join(shown(w) for w in service.command), 200)
        undecided.append(
            f"{service.name}: its server options ({words}) are not checked: the {kind.probe} probe takes no "
            "server options (docs/matrix.md); a row of probe `server` with `args` checks one node with them"
        )
    if backend is not None:
        why.append(f"backend {backend}: {reason}")
    return _row(service, ids, kind.category, kind.probe, backend, options, why)


# a server's own programs: a command naming one is its options after the name
_SERVER_PROGRAMS = frozenset({"mysqld", "mariadbd", "mysqld_safe", "mariadbd-safe", "docker-entrypoint.sh"})


def server_options(command: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the server options a command holds, `--name=value` each; the words that are none).
    `mysqld --max-connections 500` is `--max-connections=500`: a server takes no other words."""
    words = list(command)
    if words and not words[0].startswith("-") and words[0].rsplit("/", 1)[-1] in _SERVER_PROGRAMS:
        words = words[1:]
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and len(word) > 2:
            if "=" not in word and i + 1 < len(words) and not words[i + 1].startswith("-"):
                kept.append(f"{word}={words[i + 1]}")
                i += 2
                continue
            kept.append(word)
        else:
            dropped.append(word)
        i += 1
    return kept, dropped


def _generic_row(
    service: Service,
    ids: Mapping[str, str],
    stack: tuple[Mapping[str, Service], Hosts],
    fronts: Mapping[str, str],
    backend: str | None,
    reason: str,
    undecided: list[str],
) -> Row:
    by_name, index = stack
    mode, lifetime = generic_mode(service)
    what = "passes when it is up and healthy" if mode == "service" else "passes when its command exits 0"
    kind = known(service.image) if service.role == GENERIC_ROLE else None
    is_what = f"is {kind.what}, run here with its own command" if kind else "is not an image ecoready knows"
    why = [f"{service.name}: {service.image} {is_what}: generic probe, mode {mode} ({what})"]
    if lifetime:
        why.append(lifetime)
    if mode == "run" and service.daemon is None:
        undecided.append(
            f"{service.name}: no ports, expose or healthcheck: checked as a command that must exit 0 "
            '(set mode = "service" if it should stay up)'
        )
    options: dict[str, Any] = {"mode": mode}
    for key, argv in (("command", service.command), ("entrypoint", service.entrypoint)):
        if argv and _acting(argv):
            undecided.append(f"{service.name}: its `{key}:` holds {_acting(argv)}: not taken over")
        elif argv and _placeholder_free(argv):
            options[key] = list(argv)
        elif argv:
            undecided.append(f"{service.name}: its `{key}:` has {{…}} words ecoready would fill in: not taken over")
    if mode == "service" and service.ports:
        options["port"] = service.ports[0]
    if service.healthcheck and _acting(service.healthcheck):
        undecided.append(f"{service.name}: its `healthcheck:` holds {_acting(service.healthcheck)}: not taken over")
    elif service.healthcheck:
        options["healthcheck"] = list(service.healthcheck)
    server = by_name[backend] if backend is not None else None
    hosts = (backend, *(proxy for proxy, target in fronts.items() if target == backend)) if backend else ()
    ports = _ports_of(hosts, by_name)
    hosts = (*hosts, *(alias for host in hosts for alias in by_name[host].aliases))
    target = _Target(backend or "", hosts, ports)
    env, database = _environment(service, server, target, undecided, FILE_SECRETS.get(repository_name(service.image)))
    if env:
        options["env"] = env
    if database:
        options["database"] = database
    if backend is not None:
        why.append(f"backend {backend}: {reason}; its details reach the app as DB_* and the env below")
    proxies = index.named(service, {p for p in fronts if fronts[p] == backend})
    if proxies:
        why.append(f"it talks to {', '.join(proxies)} in front of {backend}: checked against {backend} directly")
    return _row(service, ids, Category.APP, "command", backend, options, why)


def generic_mode(service: Service) -> tuple[str, str]:
    """(the generic probe's mode, why when it is not the ports' doing): where a container
    runs decides (Kubernetes: a Job's runs to completion, a Deployment's stays up, ports or
    not); else a port, a healthcheck or a `restart:` that keeps it up make it a service."""
    if service.daemon is not None:
        mode = "service" if service.daemon else "run"
        how = "Kubernetes keeps it running: a daemon" if service.daemon else "it runs to completion"
        return mode, f"{service.runs_as or 'where it runs'}: {how}"
    daemon = service.restart in DAEMON_RESTARTS
    if service.ports or service.healthcheck:
        return "service", ""
    if daemon:
        return "service", f"`restart: {service.restart}`: a daemon that stays up, not a command that exits"
    return "run", ""


def _row(
    service: Service,
    ids: Mapping[str, str],
    category: Category,
    probe: str,
    backend: str | None,
    options: Mapping[str, Any],
    why: list[str],
) -> Row:
    if service.platform:
        why.append(f"pinned to {service.platform} by {service.pinned_by}: the report says whether the pin can go")
    return Row(
        id=ids[service.name],
        name=service.name if service.name.strip() else ids[service.name],
        category=category,
        probe=probe,
        image=service.image,
        service=service.name,
        platform=service.platform,
        pinned_at=service.pinned_at if service.platform else (),
        backend=ids[backend] if backend is not None else "",
        options=options,
        why=tuple(why),
    )


def _acting(words: Sequence[str]) -> str:
    """Which character a matrix would refuse in `words` (a control, layout or invisible
    one), named; '' when none."""
    char = next((c for w in words if (c := acting_character(w, layout_ok=False))), None)
    return f"a character a matrix cannot carry ({shown(char)})" if char else ""


def _placeholder_free(words: Sequence[str]) -> bool:
    return not any(placeholders_in(word) for word in words)


@dataclass(frozen=True)
class _Target:
    """What an app's environment may name of its backend: the server's name, the host names
    of the server and of the proxies in front of it, and the ports they take clients on."""

    backend: str
    hosts: Sequence[str]
    ports: frozenset[str]


def _ports_of(hosts: Sequence[str], by_name: Mapping[str, Service]) -> frozenset[str]:
    """The ports of the server and of the proxies in front of it: MySQL's, what each
    publishes or exposes, and a known proxy's default client ports."""
    ports = {MYSQL_PORT}
    for name in hosts:
        service = by_name[name]
        ports.update(str(p) for p in service.ports)
        kind = known(service.image)
        ports.update(str(p) for p in (CLIENT_PORTS.get(kind.probe, ()) if kind else ()))
    return frozenset(ports)


def _environment(
    service: Service,
    server: Service | None,
    target: _Target,
    undecided: list[str],
    file_secrets: frozenset[str] | None = None,
) -> tuple[dict[str, str], str]:
    """The service's environment for the generic probe: the backend's host, port, user and
    database as placeholders, a password file's path as `{password_file}` (also for a
    password variable of an image known to read `<VARIABLE>_FILE`: `file_secrets`); secrets
    and what compose would fill in from elsewhere left out (and said)."""
    env: dict[str, str] = {}
    database = ""
    db_env = server.environment if server is not None else {}
    db_user = next((db_env[k] for k in ("MYSQL_USER", "MARIADB_USER") if k in db_env), "root")
    db_name = next((db_env[k] for k in ("MYSQL_DATABASE", "MARIADB_DATABASE") if k in db_env), "")
    for key, value in service.environment.items():
        where = f"{service.name}: `{shown(key)}`"
        upper = key.upper()
        if not _ENV_NAME.match(key):
            undecided.append(f"{where} is not a name the matrix takes: left out")
        elif _acting([value]):
            undecided.append(f"{where} holds {_acting([value])}: left out")
        elif placeholders_in(value):  # the matrix would read them as placeholders
            undecided.append(f"{where} has {{…}} words ecoready would fill in: left out")
        elif server is not None and "PASS" in upper and upper.endswith("_FILE"):
            env[key] = "{password_file}"
        elif server is not None and file_secrets and key in file_secrets:
            env[f"{key}_FILE"] = "{password_file}"  # the image reads it from the file
        elif (_SECRET.search(key) and value.lower() not in _FLAG) or _CREDENTIALS_IN_URL.search(value):
            more = ""
            if server is not None and "PASS" in upper:
                more = f"; ecoready gives the password only as a file: make the app read {key}_FILE"
            undecided.append(f"{where} holds a secret: not written{more}")
        elif server is not None:
            env[key], named = _backend_value(upper, value, target, db_user, db_name)
            database = database or named
            if "PORT" in upper and env[key] == value and value.isdigit():
                undecided.append(
                    f"{where} = {value} is not a port ecoready knows of {target.backend} or a proxy in front of it: "
                    f"kept as written, while the app is checked against {target.backend} directly on its own port"
                )
        else:
            env[key] = value
    if server is not None:
        env.update(_secret_files(service, file_secrets, undecided))
    if database and not _DATABASE_NAME.match(database):
        undecided.append(f"{service.name}: database {database!r} is not a name ecoready creates: it uses its own")
        database = ""
    return env, database


def _secret_files(service: Service, file_secrets: frozenset[str] | None, undecided: list[str]) -> dict[str, str]:
    """The variables a Kubernetes Secret sets (`secret_env`, never read) as a compose
    file's passwords are: `<NAME>_FILE = "{password_file}"` for an image that reads it so,
    else the password is said."""
    env: dict[str, str] = {}
    for key in service.secret_env:
        if file_secrets and key in file_secrets:
            env[f"{key}_FILE"] = "{password_file}"
        elif "PASS" in key.upper() and _ENV_NAME.match(key):
            undecided.append(
                f"{service.name}: `{shown(key)}` comes from a Secret; ecoready gives the password only "
                f"as a file: make the app read {key}_FILE"
            )
    return env


def _backend_value(key: str, value: str, target: _Target, user: str, database: str) -> tuple[str, str]:
    """(the value with the backend's details as placeholders, the database it names): a
    host of the backend (or of a proxy in front of it), its port (or the proxy's: the host
    becomes the server's, so its port must too), user and database, alone or inside a URL
    (`mysql://shop@db:3306/shop`)."""
    hosts, ports = target.hosts, target.ports
    if value in hosts:
        return "{host}", ""
    host, _, port = value.rpartition(":")
    if host in hosts and port in ports:  # `db:3306` (WORDPRESS_DB_HOST's form), `proxysql:6033`
        return "{host}:{port}", ""
    if "PORT" in key and value in ports:
        return "{port}", ""
    if key.endswith(("USER", "USERNAME")) and value == user:
        return "{user}", ""
    if database and value == database and any(w in key for w in ("DATABASE", "DB", "SCHEMA")):
        return "{database}", database
    url = _URL.match(value)
    if url is None or url.group("host") not in hosts:
        return value, ""
    named = database if database and url.group("path") == f"/{database}" else ""
    login = "{user}@" if url.group("user") else ""
    given = url.group("port")
    port = ":{port}" if given is None or given[1:] in ports else given
    path = "/{database}" if named else (url.group("path") or "")
    return f"{url.group('scheme')}://{login}{{host}}{port}{path}{url.group('rest') or ''}", named


# [jdbc:]scheme://[user@]host[:port][/path][?query]; a password in it was left out before
_URL = re.compile(
    r"^(?P<scheme>(?:jdbc:)?[A-Za-z][A-Za-z0-9+.-]*)://(?:(?P<user>[^:@/]+)@)?(?P<host>[A-Za-z0-9_.-]+)"
    r"(?P<port>:[0-9]+)?(?P<path>/[^?#]*)?(?P<rest>[?#].*)?$"
)
