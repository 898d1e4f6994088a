"""The sections of a matrix file: `[registry]`, `[sysbench]` and `[[components]]` (with
each probe kind's options and the backends they name), each validated into model values
with every problem reported; `[[hosts]]` is in hosts_section.py."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ecoready.domain.drivers import parse_driver
from ecoready.domain.model import Category, Component, normalize_arch
from ecoready.matrix.bench_settings import (
    ACCESS_PATTERNS,
    KNOBS,
    MAX_THREADS,
    WORKLOADS,
    BenchOverrides,
    SysbenchConfig,
)
from ecoready.matrix.checker import Checker, a_name, dotted, non_empty, positive
from ecoready.matrix.kinds import KINDS, SMOKE_DRIVERS, ProbeKind

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}\Z")


TOP_KEYS = ("title", "arches", "targets", "profile", "concurrency", "registry", "sysbench", "hosts", "components")


COMPONENT_KEYS = (
    *("id", "name", "category", "probe", "image", "backend", "arches", "timeout", "options"),
    *("service", "platform", "pinned_at"),  # where `ecoready init` found the row, its arch pin and where that is
    "bench",  # false: no bench stage (a row that only tests publishing)
    "cpus",  # a CPU quota for the row's own containers (Component.cpus)
)


# The least CPU quota an engine takes (Docker refuses NanoCpus below 0.01 CPUs)
MIN_CPUS = 0.01


_PLATFORM = re.compile(r"^linux/([a-z0-9_-]+)(/v[0-9])?\Z")


# Option values that are text for the program, not names: they may hold spaces (control and
# invisible characters are refused in every string all the same). Server `args` entries
# and `env` values are text too.
FREE_TEXT_OPTIONS = frozenset({"password"})


SYSBENCH_PROFILE_TABLES = ("quick", "full", "emulated")


SYSBENCH_KEYS = ("image", "base", *KNOBS, *SYSBENCH_PROFILE_TABLES)


def sysbench_section(data: dict[str, Any], c: Checker) -> SysbenchConfig:
    """`[sysbench]`: knobs for every profile, and `[sysbench.quick|full|emulated]` tables
    with the same knobs for one of them."""
    raw = c.typed(data, (), "sysbench", dict)
    if raw is None:
        return SysbenchConfig()
    path: tuple[str | int, ...] = ("sysbench",)
    c.keys(raw, path, SYSBENCH_KEYS)
    image = c.typed(raw, path, "image", str, check=_image_check)
    base = c.typed(raw, path, "base", str, check=_image_check)
    tables: dict[str, BenchOverrides] = {}
    for name in SYSBENCH_PROFILE_TABLES:
        sub = c.typed(raw, path, name, dict)
        if sub is not None:
            c.keys(sub, (*path, name), KNOBS)
            tables[name] = _bench_knobs(sub, (*path, name), c)
    return SysbenchConfig(
        image=image or SysbenchConfig.image,
        base=base or SysbenchConfig.base,
        common=_bench_knobs(raw, path, c),
        **tables,
    )


def _bench_knobs(raw: Mapping[str, Any], path: tuple[str | int, ...], c: Checker) -> BenchOverrides:
    def names(key: str, known: Sequence[str]) -> tuple[str, ...] | None:
        items = c.typed(raw, path, key, list)
        if items is None:
            return None
        if not items:
            c.add((*path, key), f"'{dotted(path, key)}' must list at least one of {', '.join(known)}")
        out: list[str] = []
        for i, item in enumerate(items):
            if not isinstance(item, str) or item not in known:
                hint = difflib.get_close_matches(item, known, n=1) if isinstance(item, str) else []
                more = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(known)})"
                c.add((*path, key, i), f"'{dotted(path, key)}' has an unknown entry {item!r}{more}")
            elif item in out:
                c.add((*path, key, i), f"'{dotted(path, key)}' lists {item} twice")
            else:
                out.append(item)
        return tuple(out)

    threads: tuple[int, ...] | None = None
    raw_threads = c.typed(raw, path, "threads", list)
    if raw_threads is not None:
        if not raw_threads:
            c.add((*path, "threads"), f"'{dotted(path, 'threads')}' must list at least one thread count")
        good: list[int] = []
        for i, item in enumerate(raw_threads):
            if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= MAX_THREADS:
                message = f"'{dotted(path, 'threads')}' entries must be whole numbers 1..{MAX_THREADS}"
                c.add((*path, "threads", i), message)
            elif item in good:
                c.add((*path, "threads", i), f"'{dotted(path, 'threads')}' lists {item} twice")
            else:
                good.append(item)
        threads = tuple(good)

    def between(low: float, high: float, *, open_ends: bool = False) -> Callable[[Any], str | None]:
        def check(value: float) -> str | None:
            ok = low < value < high if open_ends else low <= value <= high
            if ok:
                return None
            return f"must be between {low:g} and {high:g}" + (" (exclusive)" if open_ends else "")

        return check

    zipf = c.typed(raw, path, "zipf_exp", (int, float), check=between(0, 1, open_ends=True))
    return BenchOverrides(
        workloads=names("workloads", WORKLOADS),
        access=names("access", ACCESS_PATTERNS),
        threads=threads,
        time=c.typed(raw, path, "time", int, check=between(1, 86_400)),
        warmup=c.typed(raw, path, "warmup", int, check=between(0, 86_400)),
        repeats=c.typed(raw, path, "repeats", int, check=between(1, 100)),
        tables=c.typed(raw, path, "tables", int, check=between(1, 1000)),
        table_size=c.typed(raw, path, "table_size", int, check=between(1, 1_000_000_000)),
        zipf_exp=None if zipf is None else float(zipf),
    )


def components_section(data: dict[str, Any], c: Checker) -> list[Component]:
    raw = c.typed(data, (), "components", list, required=True)
    if raw is not None and not raw:
        c.add(("components",), "the matrix has no components ([[components]])")
    components: list[Component] = []
    index: dict[str, int] = {}
    for i, item in enumerate(raw or []):
        path: tuple[str | int, ...] = ("components", i)
        if not isinstance(item, dict):
            c.add(path, "each entry of 'components' must be a table ([[components]])")
            continue
        c.keys(item, path, COMPONENT_KEYS)
        cid = c.typed(
            item,
            path,
            "id",
            str,
            required=True,
            check=lambda v: None if _ID.match(v) else "must be lowercase letters, digits, '.', '_' or '-' (at most 63)",
        )
        if cid is not None and cid in index:
            c.add((*path, "id"), f"component id {cid!r} is used twice (first at components[{index[cid]}])")
        elif cid is not None:
            index[cid] = i
        category_name = c.typed(item, path, "category", str, required=True)
        category = None
        if category_name is not None:
            try:
                category = Category(category_name)
            except ValueError:
                names = [k.value for k in Category]
                hint = difflib.get_close_matches(category_name, names, n=1)
                more = f" (did you mean '{hint[0]}'?)" if hint else f" (one of {', '.join(names)})"
                c.add((*path, "category"), f"unknown category {category_name!r}{more}")
        probe = c.typed(item, path, "probe", str, required=True)
        if probe is not None and probe not in KINDS:
            hint = difflib.get_close_matches(probe, list(KINDS), n=1)
            more = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(sorted(KINDS))})"
            c.add((*path, "probe"), f"unknown probe kind {probe!r}{more}")
        image = c.typed(item, path, "image", str, required=True, check=_image_check)
        name = c.typed(item, path, "name", str, check=non_empty) or cid or ""
        backend = c.typed(item, path, "backend", str, check=a_name)
        arches = c.arch_list(item, path, "arches") or ()
        timeout = c.typed(item, path, "timeout", (int, float), check=positive)
        options = c.typed(item, path, "options", dict) or {}
        service = c.typed(item, path, "service", str) or ""
        platform = c.typed(item, path, "platform", str, check=_platform_check) or ""
        pinned_at = c.typed(item, path, "pinned_at", list, check=_strings_check) or []
        bench = c.typed(item, path, "bench", bool)
        cpus = c.typed(item, path, "cpus", (int, float), check=_cpus_check)
        if probe in KINDS:
            kind = KINDS[probe]
            _options(options, (*path, "options"), kind, c)
            if kind.check is not None:
                for where, message in kind.check(options, backend is not None):
                    c.add((*path, "options", *where), message)
            if kind.needs_backend and backend is None:
                c.add(
                    path,
                    f"component {cid!r}: probe '{probe}' needs a 'backend' (a server component id)",
                    at_value=False,
                )
        if cid is None or category is None or probe not in KINDS or image is None:
            continue
        components.append(
            Component(
                id=cid,
                name=name,
                category=category,
                probe=probe,
                image=image,
                backend=backend,
                arches=arches,
                timeout_s=None if timeout is None else float(timeout),
                options=options,
                service=service,
                platform=platform,
                pinned_at=tuple(pinned_at),
                bench=True if bench is None else bench,
                cpus=None if cpus is None else float(cpus),
            )
        )
    _backends(raw or [], components, c)
    return components


def _image_check(ref: str) -> str | None:
    if not ref.strip() or any(ch.isspace() for ch in ref):
        return "must be an image reference like registry/name:tag"
    if ref != ref.strip() or ref.endswith((":", "@")):
        return "must be an image reference like registry/name:tag"
    return None


def _cpus_check(value: float) -> str | None:
    if value < MIN_CPUS:
        return f"must be at least {MIN_CPUS} (a share of CPUs: 0.5 is half of one)"
    return None


def _strings_check(items: list[Any]) -> str | None:
    return None if all(isinstance(i, str) for i in items) else "must be a list of strings (where the pin is written)"


def _platform_check(text: str) -> str | None:
    found = _PLATFORM.match(text)
    if found is None or normalize_arch(found.group(1)) is None:
        return "must be a platform like linux/amd64 or linux/arm64/v8 (the stack's arch pin)"
    return None


def _options(options: Mapping[str, Any], path: tuple[str | int, ...], kind: ProbeKind, c: Checker) -> None:
    c.keys(options, path, list(kind.options))
    for key, value_type in kind.options.items():
        check = _image_check if key.endswith("image") else a_name if value_type is str else None
        if key in FREE_TEXT_OPTIONS:
            check = None
        value = c.typed(options, path, key, value_type, required=key in kind.required, check=check)
        allowed = kind.choices.get(key)
        if allowed and isinstance(value, str) and value not in allowed:
            hint = difflib.get_close_matches(value, allowed, n=1)
            more = f" (did you mean '{hint[0]}'?)" if hint else f" (one of {', '.join(allowed)})"
            c.add((*path, key), f"unknown {key} {value!r} for probe '{kind.name}'{more}")
    if kind.program is not None and kind.installs is not None:
        _program(options, path, kind.installs, kind.program, c)
    elif kind.installs is not None:
        _driver(options, path, kind.installs, c)


def _program(
    options: Mapping[str, Any], path: tuple[str | int, ...], key: str, program: tuple[str, str], c: Checker
) -> None:
    """A program's source pinned exactly (a tool is pinned to a release, never a range)."""
    text = options.get(key)
    if not isinstance(text, str):
        return
    registry, package = program
    example = f"{registry}:{package}@v1.2.3"
    try:
        spec = parse_driver(text)
    except ValueError as exc:
        c.add((*path, key), f"'{key}' {text!r}: {exc} (e.g. {example!r})")
        return
    if (spec.registry, spec.package) != program:
        c.add((*path, key), f"'{key}' {text!r}: this probe builds {package} from {registry}: (e.g. {example!r})")
    elif spec.constraint.count(".") != 2:
        c.add((*path, key), f"'{key}' {text!r}: pin one release, e.g. {example!r}")


def _driver(options: Mapping[str, Any], path: tuple[str | int, ...], key: str, c: Checker) -> None:
    """A driver row: its spec reads, its registry fits the row's language, and the
    language's smoke program speaks that driver."""
    language = options.get("language")
    text = options.get(key)
    if not isinstance(text, str):
        if language == "python":  # the Debian rows are python-pymysql and python-mysqlclient
            c.add((*path, "language"), f"language 'python' needs a '{key}' (e.g. \"pypi:PyMySQL\")")
        return
    try:
        spec = parse_driver(text)
    except ValueError as exc:
        c.add((*path, key), f"'{key}' {text!r}: {exc}")
        return
    if spec.registry == "deb":
        if language not in spec.languages:
            c.add((*path, key), f"'{key}' {text!r}: Debian's packages serve language {', '.join(spec.languages)}")
        return
    wanted = spec.language
    if language != wanted:
        c.add((*path, key), f"'{key}' {text!r} is a {wanted} driver: the row needs language = {wanted!r}")
        return
    known = SMOKE_DRIVERS[wanted]
    if known and spec.package.lower() not in known:
        c.add((*path, key), f"'{key}' {text!r}: the {wanted} smoke program speaks {', '.join(known)}")


def _backends(raw: list[Any], components: list[Component], c: Checker) -> None:
    by_id = {comp.id: comp for comp in components}
    positions = {item.get("id"): i for i, item in enumerate(raw) if isinstance(item, dict)}
    for comp in components:
        if comp.backend is None:
            continue
        path: tuple[str | int, ...] = ("components", positions.get(comp.id, 0), "backend")
        target = by_id.get(comp.backend)
        if target is None:
            servers = [i for i, t in by_id.items() if i != comp.id and KINDS[t.probe].serves_sql]
            hint = difflib.get_close_matches(comp.backend, servers, n=1)  # never itself, only servers
            more = f" (did you mean '{hint[0]}'?)" if hint else ""
            c.add(path, f"backend {comp.backend!r} of {comp.id!r} is not a component of this matrix{more}")
        elif not KINDS[target.probe].serves_sql and target.id != comp.id:
            c.add(
                path,
                f"backend {comp.backend!r} of {comp.id!r} has probe '{target.probe}', which cannot serve as a backend",
            )
    # cycles: follow backend links from each component
    for comp in components:
        seen = [comp.id]
        cur = comp
        while cur.backend is not None and cur.backend in by_id:
            if cur.backend in seen:
                path = ("components", positions.get(comp.id, 0), "backend")
                c.add(path, "backend cycle: " + " -> ".join([*seen, cur.backend]))
                break
            seen.append(cur.backend)
            cur = by_id[cur.backend]
