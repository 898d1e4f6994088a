"""Named cloud instances from the price file shipped with ecoready (`prices.toml`): vCPUs,
clock, memory and the on-demand price per hour in one region, each with the provider page
it came from and the date it was read. A host may say `instance = "aws:m8g.2xlarge"`
instead of typing its numbers; the report names the date and says when it is old.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Instance:
    name: str  # "aws:m8g.2xlarge"
    arch: str
    vcpus: int
    cpu_ghz: float | None  # None: not found on a public page
    memory_gib: float
    price_per_hour: float  # USD, on demand, in `region`
    region: str
    source: str  # the provider's page the figures came from
    date: str  # YYYY-MM-DD, when they were read there
    cpu: str = ""  # the processor, as the provider names it


@cache
def instances() -> dict[str, Instance]:
    """The price file's instances by name."""
    text = resources.files("ecoready.matrix").joinpath("prices.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    found: dict[str, Instance] = {}
    for item in data.get("instances", []):
        entry = Instance(
            name=str(item["name"]),
            arch=str(item["arch"]),
            vcpus=int(item["vcpus"]),
            cpu_ghz=float(item["cpu_ghz"]) if "cpu_ghz" in item else None,
            memory_gib=float(item["memory_gib"]),
            price_per_hour=float(item["price_per_hour"]),
            region=str(item["region"]),
            source=str(item["source"]),
            date=str(item["date"]),
            cpu=str(item.get("cpu", "")),
        )
        found[entry.name] = entry
    return found


def nearest(name: str, n: int = 3) -> list[str]:
    """The names of the price file closest to `name` (for `did you mean`)."""
    return difflib.get_close_matches(name, list(instances()), n=n, cutoff=0.5)
