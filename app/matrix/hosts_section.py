"""The `[[hosts]]` section of a matrix file: the engines a run uses, each with its arches,
its cost model (a price unit, or a named instance from the price file) and its client
certificates, validated into `Host` values with every problem reported."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ecoready.domain.model import Host, TlsFiles
from ecoready.matrix.checker import Checker, a_name, dotted, non_empty, non_negative, positive
from ecoready.matrix.prices import instances, nearest

HOST_KEYS = (
    "name",
    "docker",
    "arches",
    "emulate",
    "price_per_hour",
    "price_per_month",
    "price_per_year",
    "cpu_ghz",
    "vcpus",
    "memory_gib",
    "instance",
    "concurrency",
    "tls_dir",
    "tls_ca",
    "tls_cert",
    "tls_key",
)


TLS_FILES = ("tls_ca", "tls_cert", "tls_key")


# DOCKER_CERT_PATH's file names, as the docker CLI reads them from a tls_dir
TLS_DIR_FILES = {"tls_ca": "ca.pem", "tls_cert": "cert.pem", "tls_key": "key.pem"}


_ENGINE_URL = re.compile(r"^(unix|npipe)://\S+\Z|^tcp://[^/\s]+\Z|^ssh://([^@/\s]+@)?[^@/:\s]+(:\d{1,5})?\Z")


def hosts_section(data: dict[str, Any], c: Checker, base: Path) -> list[Host]:
    raw = c.typed(data, (), "hosts", list)
    hosts: list[Host] = []
    seen: set[str] = set()
    for i, item in enumerate(raw or []):
        path: tuple[str | int, ...] = ("hosts", i)
        if not isinstance(item, dict):
            c.add(path, "each entry of 'hosts' must be a table ([[hosts]])")
            continue
        c.keys(item, path, HOST_KEYS)
        name = c.typed(item, path, "name", str, required=True, check=a_name)
        if name in seen:
            c.add((*path, "name"), f"host name {name!r} is used twice")
        seen.add(name or "")
        docker = c.typed(item, path, "docker", str) or ""
        if docker and not _ENGINE_URL.match(docker):
            c.add(
                (*path, "docker"),
                f"'hosts[{i}].docker' must be unix:///path, tcp://host:port or ssh://[user@]host[:port]",
            )
        arches = c.arch_list(item, path, "arches") or ()
        emulate = c.typed(item, path, "emulate", bool)
        cost = _cost(item, path, c)
        concurrency = c.typed(
            item, path, "concurrency", int, check=lambda v: None if 1 <= v <= 256 else "must be between 1 and 256"
        )
        hosts.append(
            Host(
                name=name or "",
                docker=docker,
                arches=arches,
                emulate=True if emulate is None else emulate,
                tls=_tls(item, path, docker, base, c),
                concurrency=concurrency,
                **cost,
            )
        )
    return hosts


PRICE_KEYS = ("price_per_hour", "price_per_month", "price_per_year")


def _cost(item: Mapping[str, Any], path: tuple[str | int, ...], c: Checker) -> dict[str, Any]:
    """The cost model's keys of a host: at most one price unit (hour, month or year), the
    clock, vCPUs and memory; `instance` fills what is not given from the price file."""
    given = [key for key in PRICE_KEYS if key in item]
    if len(given) > 1:
        c.add((*path, given[1]), f"'{dotted(path, given[1])}': give one price unit, not {' and '.join(given)}")
    prices = {key: c.typed(item, path, key, (int, float), check=non_negative) for key in PRICE_KEYS}
    ghz = c.typed(item, path, "cpu_ghz", (int, float), check=positive)
    vcpus = c.typed(item, path, "vcpus", int, check=lambda v: None if 1 <= v <= 4096 else "must be between 1 and 4096")
    memory = c.typed(item, path, "memory_gib", (int, float), check=positive)
    name = c.typed(item, path, "instance", str, check=non_empty)
    out: dict[str, Any] = {key: None if value is None else float(value) for key, value in prices.items()}
    out.update(
        cpu_ghz=None if ghz is None else float(ghz),
        vcpus=vcpus,
        memory_gib=None if memory is None else float(memory),
    )
    if name is None:
        return out
    known = instances().get(name)
    if known is None:
        near = nearest(name)
        more = f" (nearest: {', '.join(near)})" if near else " (the price file names none like it)"
        c.add((*path, "instance"), f"unknown instance {name!r} in the price file{more}")
        return out
    out.update(
        cpu_ghz=out["cpu_ghz"] or known.cpu_ghz,
        vcpus=out["vcpus"] or known.vcpus,
        memory_gib=out["memory_gib"] or known.memory_gib,
        instance=known.name,
    )
    if not given:  # the price file's on-demand price, and where it came from
        out.update(price_per_hour=known.price_per_hour, price_source=known.source, price_date=known.date)
    return out


def _tls(item: Mapping[str, Any], path: tuple[str | int, ...], docker: str, base: Path, c: Checker) -> TlsFiles | None:
    """Client certificates: `tls_dir` (ca.pem, cert.pem, key.pem, as DOCKER_CERT_PATH) or
    the three files one by one. Relative paths start at the matrix file's folder. Whether
    the files exist is checked when connecting: they may live only where the run happens."""
    given = [key for key in ("tls_dir", *TLS_FILES) if key in item]
    if not given:
        return None
    values = {key: c.typed(item, path, key, str, check=non_empty) for key in given}
    if not docker.startswith("tcp://"):
        c.add((*path, given[0]), f"'{dotted(path, given[0])}' needs docker = \"tcp://host:port\"", at_value=False)
        return None
    if "tls_dir" in given and len(given) > 1:
        c.add((*path, given[1]), f"'{dotted(path, given[1])}': give tls_dir or the three tls_* files, not both")
        return None
    if "tls_dir" not in given and len(given) < len(TLS_FILES):
        lacking = ", ".join(k for k in TLS_FILES if k not in given)
        c.add((*path, given[0]), f"'{dotted(path, given[0])}' needs {lacking} too (or one tls_dir)", at_value=False)
        return None
    if any(v is None for v in values.values()):
        return None

    def where(text: str) -> str:
        p = Path(text).expanduser()
        return str(p if p.is_absolute() else (base / p))

    if "tls_dir" in values:
        folder = Path(where(str(values["tls_dir"])))
        return TlsFiles(*(str(folder / TLS_DIR_FILES[k]) for k in TLS_FILES))
    return TlsFiles(*(where(str(values[k])) for k in TLS_FILES))
