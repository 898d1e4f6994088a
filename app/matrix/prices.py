"""Named cloud instances from the price file shipped with ecoready (`prices.toml`): vCPUs,
clock, memory and the on-demand price per hour in one region, each with the page its price
and its sizes came from and the date they were published there. A host may say
`instance = "aws:m8g.2xlarge"` instead of typing its numbers; the report names the date and
says when it is old.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Instance:
    name: str  # "aws:m8g.2xlarge"
    arch: str
    vcpus: int
    cpu_ghz: float | None  # None: not found on a public page
    memory_gib: float
    price_per_hour: float  # USD, on demand, in `region`
    region: str
    source: str  # the page the price came from
    date: str  # YYYY-MM-DD, when the price was published there
    cpu: str = ""  # the processor, as the provider names it
    spec_source: str = ""  # the page vCPUs, memory and clock came from
    spec_date: str = ""
    target: str = ""  # its CPU: an id of the target CPU file (app/domain/cpus.toml)
    target_source: str = ""  # the page its CPU was read from
    target_date: str = ""


@cache
def instances() -> dict[str, Instance]:
    """The price file's instances by name."""
    text = resources.files("ecoready.matrix").joinpath("prices.toml").read_text(encoding="utf-8")
    return parse_prices(tomllib.loads(text))


def parse_prices(data: dict[str, Any]) -> dict[str, Instance]:
    """Instances of a parsed price file: `source`, `spec_source` and `target_source` name a
    [sources] entry (its `url` and `date`)."""
    sources: dict[str, dict[str, Any]] = data.get("sources", {})
    found: dict[str, Instance] = {}
    for item in data.get("instances", []):
        price, spec = sources[str(item["source"])], sources[str(item["spec_source"])]
        cpu = sources.get(str(item.get("target_source", "")), {})
        entry = Instance(
            name=str(item["name"]),
            arch=str(item["arch"]),
            vcpus=int(item["vcpus"]),
            cpu_ghz=float(item["cpu_ghz"]) if "cpu_ghz" in item else None,
            memory_gib=float(item["memory_gib"]),
            price_per_hour=float(item["price_per_hour"]),
            region=str(item["region"]),
            source=str(price["url"]),
            date=str(price["date"]),
            cpu=str(item.get("cpu", "")),
            spec_source=str(spec["url"]),
            spec_date=str(spec["date"]),
            target=str(item.get("target", "")),
            target_source=str(cpu.get("url", "")),
            target_date=str(cpu.get("date", "")),
        )
        found[entry.name] = entry
    return found


def nearest(name: str, n: int = 3) -> list[str]:
    """The names of the price file closest to `name` (for `did you mean`)."""
    return difflib.get_close_matches(name, list(instances()), n=n, cutoff=0.5)
