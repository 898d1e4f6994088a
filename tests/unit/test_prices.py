"""Hosts' prices: one unit of three (hour, month, year), or a named instance from the price
file shipped with ecoready; `validate` refuses the rest as `file:line:col: ...`, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.matrix.load import parse
from ecoready.matrix.prices import instances
from ecoready.report.cost import stale
from tests.support.cli import ecoready

ROW = '[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "x/db:1"\n'


def host(lines: str) -> str:
    return f'[[hosts]]\nname = "h"\n{lines}\n' + ROW


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigError) as info:
        parse(text, "m.toml")
    return [(p.line, p.col, p.message) for p in info.value.problems]


@pytest.mark.parametrize(
    ("key", "value"), [("price_per_hour", 0.0913), ("price_per_month", 66.65), ("price_per_year", 800)]
)
def test_each_price_unit_is_accepted_alone(key: str, value: float) -> None:
    (parsed,) = parse(host(f"{key} = {value}\nvcpus = 12\ncpu_ghz = 3.0\nmemory_gib = 48"), "m.toml").hosts
    assert getattr(parsed, key) == pytest.approx(value)
    assert (parsed.vcpus, parsed.cpu_ghz, parsed.memory_gib) == (12, 3.0, 48.0)
    others = {"price_per_hour", "price_per_month", "price_per_year"} - {key}
    assert all(getattr(parsed, other) is None for other in others)


def test_two_price_units_are_refused() -> None:
    ((line, col, message),) = problems(host("price_per_hour = 0.1\nprice_per_year = 800"))
    assert (line, col) == (4, 18)
    assert message == "'hosts[0].price_per_year': give one price unit, not price_per_hour and price_per_year"


def test_an_instance_of_the_price_file_fills_the_host() -> None:
    entry = instances()["aws:m7g.large"]
    (parsed,) = parse(host('instance = "aws:m7g.large"'), "m.toml").hosts
    assert parsed.instance == "aws:m7g.large" and parsed.price_per_hour == entry.price_per_hour
    assert (parsed.vcpus, parsed.memory_gib) == (entry.vcpus, entry.memory_gib)
    assert parsed.price_source.startswith("https://") and parsed.price_date == entry.date
    # a price of the user's own (a reserved instance) wins; the file's sizes stay
    (own,) = parse(host('instance = "aws:m7g.large"\nprice_per_year = 500'), "m.toml").hosts
    assert own.price_per_year == 500 and own.price_per_hour is None and own.price_source == ""
    assert own.vcpus == entry.vcpus


def test_an_unknown_instance_is_refused_with_the_nearest_names(tmp_path: Path) -> None:
    ((line, col, message),) = problems(host('instance = "aws:m7g.larg"'))
    assert (line, col) == (3, 12)
    assert message == (
        "unknown instance 'aws:m7g.larg' in the price file (nearest: aws:m7g.large, aws:m7g.xlarge, aws:m7g.4xlarge)"
    )
    path = tmp_path / "m.toml"
    path.write_text(host('instance = "aws:m7g.larg"'))
    result = ecoready("validate", str(path))
    assert result.returncode == 2
    assert f"{path}:3:12: unknown instance 'aws:m7g.larg' in the price file (nearest: aws:m7g.large, " in result.stderr
    ((_, _, message),) = problems(host('instance = "nowhere:x"'))
    assert message == "unknown instance 'nowhere:x' in the price file (the price file names none like it)"


def test_every_entry_of_the_price_file_says_where_and_when() -> None:
    assert instances()
    for entry in instances().values():
        assert entry.source.startswith("https://") and len(entry.date) == 10, entry
        assert entry.arch in ("arm64", "amd64") and entry.vcpus > 0 and entry.price_per_hour > 0
        assert ":" in entry.name and entry.region


def test_a_price_older_than_six_months_is_stale() -> None:
    assert stale("2026-01-01", "2026-11-27T10:00:00Z")
    assert not stale("2026-06-17", "2026-11-27T10:00:00Z")
    assert not stale("", "2026-11-27") and not stale("2026-01-01", "")
