"""JSON report -> `Report`: the inverse of `report/json.py`, for re-rendering, diffs and
history. A report file is input from elsewhere (a CI artifact, a colleague), so every field
is checked and any problem becomes one `ReportError` naming the file and the key, never a
traceback. Text is kept as written; renderers make it inert when they show it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from ecoready.domain.errors import ReportError
from ecoready.domain.model import (
    REPORT_SCHEMA_VERSION,
    BenchResult,
    BenchRun,
    BenchSeries,
    Category,
    CellResult,
    Check,
    Hazard,
    HostFacts,
    ImageInfo,
    Outcome,
    PlatformFitness,
    Profile,
    RegistryStatus,
    Report,
    Stage,
    StageResult,
    Status,
)

MAX_REPORT_BYTES = 64 << 20  # a report of thousands of cells is a few MiB
E = TypeVar("E", Category, Outcome, Profile, Stage, Status)


class _Fields:
    """Typed access to one JSON object; `where` is its path in the document (cells[3].image)."""

    def __init__(self, data: object, where: str, source: str) -> None:
        self.source = source
        self.where = where
        if not isinstance(data, dict):
            self.fail(f"expected an object, found {_kind(data)}")
        self.data: dict[str, Any] = data

    def fail(self, message: str, key: str | None = None) -> NoReturn:
        path = f"{self.where}.{key}" if key and self.where else (key or self.where or "top level")
        raise ReportError(f"{self.source}: {path}: {message}")

    def get(self, key: str, kinds: tuple[type, ...], *, optional: bool = False) -> Any:
        if key not in self.data:
            if optional:
                return None
            self.fail("missing", key)
        value = self.data[key]
        if value is None and optional:
            return None
        # bool is an int to Python; a report never means one for the other
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            want = "a number" if kinds == (int, float) else " or ".join(_name(k) for k in kinds)
            self.fail(f"expected {want}, found {_kind(value)}", key)
        return value

    def text(self, key: str) -> str:
        value: str = self.get(key, (str,))
        return value

    def maybe_text(self, key: str) -> str | None:
        value: str | None = self.get(key, (str,), optional=True)
        return value

    def number(self, key: str) -> float:
        return float(self.get(key, (int, float)))

    def maybe_number(self, key: str) -> float | None:
        value = self.get(key, (int, float), optional=True)
        return None if value is None else float(value)

    def whole(self, key: str) -> int:
        value: int = self.get(key, (int,))
        return value

    def flag(self, key: str) -> bool:
        value: bool = self.get(key, (bool,))
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        items = self.get(key, (list,))
        for i, item in enumerate(items):
            if not isinstance(item, str):
                self.fail(f"expected text, found {_kind(item)}", f"{key}[{i}]")
        return tuple(items)

    def text_map(self, key: str) -> dict[str, str]:
        items = self.get(key, (dict,))
        for name, item in items.items():
            if not isinstance(item, str):
                self.fail(f"expected text, found {_kind(item)}", f"{key}.{name}")
        return dict(items)

    def objects(self, key: str) -> list[_Fields]:
        items = self.get(key, (list,))
        where = f"{self.where}.{key}" if self.where else key
        return [_Fields(item, f"{where}[{i}]", self.source) for i, item in enumerate(items)]

    def enum(self, key: str, kind: type[E]) -> E:
        value = self.text(key)
        try:
            return kind(value)
        except ValueError:
            allowed = ", ".join(m.value for m in kind)
            self.fail(f"unknown value {value!r} (one of: {allowed})", key)


_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true/false", list: "a list", dict: "an object"}


def _name(kind: type) -> str:
    return _NAMES[kind]


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "true/false", str: "text", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def _check(f: _Fields) -> Check:
    return Check(f.text("name"), f.enum("outcome", Outcome), f.text("detail"), f.number("seconds"))


def _stage(f: _Fields) -> StageResult:
    outcome = None if f.data.get("outcome") is None else f.enum("outcome", Outcome)
    return StageResult(
        stage=f.enum("stage", Stage),
        outcome=outcome,
        seconds=f.number("seconds"),
        detail=f.text("detail"),
        checks=tuple(_check(c) for c in f.objects("checks")),
    )


def _image(f: _Fields) -> ImageInfo:
    size = f.get("size", (int,), optional=True)
    return ImageInfo(
        reference=f.text("reference"),
        arch=f.text("arch"),
        digest=f.text("digest"),
        index_digest=f.text("index_digest"),
        size=size,
        found_as=f.text("found_as"),
        image_id=f.text("image_id"),
    )


def _run(f: _Fields, series: _Fields) -> BenchRun:
    return BenchRun(
        workload=series.text("workload"),
        access=series.text("access"),
        threads=series.whole("threads"),
        repeat=f.whole("repeat"),
        tps=f.number("tps"),
        qps=f.number("qps"),
        p95_ms=f.number("p95_ms"),
        errors=f.whole("errors"),
        reconnects=f.whole("reconnects"),
        seconds=f.number("seconds"),
    )


def _series(f: _Fields) -> BenchSeries:
    return BenchSeries(
        workload=f.text("workload"),
        access=f.text("access"),
        threads=f.whole("threads"),
        runs=tuple(_run(r, f) for r in f.objects("runs")),
        median_tps=f.number("median_tps"),
        median_qps=f.number("median_qps"),
        median_p95_ms=f.number("median_p95_ms"),
        cv=f.number("cv"),
    )


def _bench(f: _Fields) -> BenchResult:
    return BenchResult(
        tool=f.text("tool"),
        zipfian=f.text("zipfian"),
        target=f.text("target"),
        emulated=f.flag("emulated"),
        profile=f.text("profile"),
        cpu_model=f.text("cpu_model"),
        cpus=f.whole("cpus"),
        page_size=f.whole("page_size"),
        image_digests=f.text_map("image_digests"),
        series=tuple(_series(s) for s in f.objects("series")),
        # reports written before these two existed lack them
        cpusets=f.text_map("cpusets") if "cpusets" in f.data else {},
        method=f.maybe_text("method") or "",
    )


def _nested(f: _Fields, key: str) -> _Fields | None:
    value = f.get(key, (dict,), optional=True)
    return None if value is None else _Fields(value, f"{f.where}.{key}" if f.where else key, f.source)


def _cell(f: _Fields) -> CellResult:
    image, bench = _nested(f, "image"), _nested(f, "bench")
    return CellResult(
        id=f.text("id"),
        component=f.text("component"),
        name=f.text("name"),
        category=f.enum("category", Category),
        arch=f.text("arch"),
        host=f.text("host"),
        emulated=f.flag("emulated"),
        status=f.enum("status", Status),
        stages=tuple(_stage(s) for s in f.objects("stages")),
        image=_image(image) if image else None,
        detail=f.text("detail"),
        started_at=f.maybe_text("started_at"),
        finished_at=f.maybe_text("finished_at"),
        seconds=f.number("seconds"),
        log_tail=f.texts("log_tail"),
        bench=_bench(bench) if bench else None,
    )


def _host(f: _Fields) -> HostFacts:
    return HostFacts(
        name=f.text("name"),
        native_arch=f.text("native_arch"),
        emulated_arches=f.texts("emulated_arches"),
        emulators=f.text_map("emulators"),
        docker_version=f.text("docker_version"),
        api_version=f.text("api_version"),
        cpus=f.whole("cpus"),
        memory_bytes=f.whole("memory_bytes"),
        kernel=f.text("kernel"),
        price_per_hour=f.maybe_number("price_per_hour"),
        cpu_ghz=f.maybe_number("cpu_ghz"),
        # added with multi-host runs: absent from older reports
        docker=f.maybe_text("docker") or "",
        serves=f.texts("serves") if "serves" in f.data else (),
        error=f.maybe_text("error") or "",
    )


def _platform(f: _Fields) -> PlatformFitness:
    return PlatformFitness(
        host=f.text("host"),
        arch=f.text("arch"),
        emulated=f.flag("emulated"),
        image=f.text("image"),
        machine=f.text("machine"),
        kernel=f.text("kernel"),
        cpu_model=f.text("cpu_model"),
        cpus=f.whole("cpus"),
        mhz=f.maybe_number("mhz"),
        features=f.texts("features"),
        missing=f.texts("missing"),
        x86_level=f.text("x86_level"),
        cache_line=_maybe_whole(f, "cache_line"),
        page_size=_maybe_whole(f, "page_size"),
        thp=f.text("thp"),
        numa_nodes=_maybe_whole(f, "numa_nodes"),
        hazards=tuple(Hazard(h.text("code"), h.text("text")) for h in f.objects("hazards")),
        error=f.text("error"),
    )


def _maybe_whole(f: _Fields, key: str) -> int | None:
    value: int | None = f.get(key, (int,), optional=True)
    return value


def _registry(f: _Fields) -> RegistryStatus:
    limit = _nested(f, "rate_limit")
    return RegistryStatus(
        registry=f.text("registry"),
        requests=f.whole("requests"),
        limit=_maybe_whole(limit, "limit") if limit else None,
        remaining=_maybe_whole(limit, "remaining") if limit else None,
        window_s=_maybe_whole(limit, "window_s") if limit else None,
        source=limit.text("source") if limit else "",
        error=f.text("error"),
    )


def report_from_dict(data: object, source: str = "report") -> Report:
    top = _Fields(data, "", source)
    version = top.get("schema_version", (int,))
    if version != REPORT_SCHEMA_VERSION:
        newer = version > REPORT_SCHEMA_VERSION
        top.fail(
            f"report schema {version} "
            + ("is newer than this ecoready reads" if newer else "is not one this ecoready reads")
            + f" (it reads schema {REPORT_SCHEMA_VERSION})"
            + ("; upgrade ecoready" if newer else ""),
            "schema_version",
        )
    tool = _Fields(top.get("tool", (dict,)), "tool", source)
    cells: dict[str, CellResult] = {}
    for f in top.objects("cells"):
        cell = _cell(f)
        if cell.id in cells:
            f.fail(f"cell {cell.id!r} appears twice", "id")
        cells[cell.id] = cell
    return Report(
        schema_version=version,
        run_id=top.text("run_id"),
        tool_version=tool.text("version"),
        matrix=top.text("matrix"),
        profile=top.enum("profile", Profile),
        started_at=top.text("started_at"),
        finished_at=top.maybe_text("finished_at"),
        interrupted=top.flag("interrupted"),
        hosts=tuple(_host(h) for h in top.objects("hosts")),
        arches=top.texts("arches"),
        cells=cells,
        notes=top.texts("notes"),
        registries=tuple(_registry(r) for r in top.objects("registries")),
        platforms=tuple(_platform(p) for p in top.objects("platforms")) if "platforms" in top.data else (),
    )


def parse_report(text: str, source: str = "report") -> Report:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{source}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise ReportError(f"{source}: nested too deeply to be a report") from None
    if isinstance(data, Mapping) and "schema_version" not in data:
        raise ReportError(f"{source}: not an ecoready report (no schema_version)")
    return report_from_dict(data, source)


def load_report(path: str | Path) -> Report:
    """Read a report file (`-` = stdin)."""
    name = str(path)
    try:
        if name == "-":
            raw = sys.stdin.buffer.read(MAX_REPORT_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise ReportError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise ReportError(f"{name}: larger than {MAX_REPORT_BYTES >> 20} MiB: not a report")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportError(f"{name}: not UTF-8 (byte {exc.start})") from None
    return parse_report(text, name)
