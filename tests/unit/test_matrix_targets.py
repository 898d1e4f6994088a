"""The matrix's `targets = [...]` (app/matrix/targets.py): target CPU ids and instances of
the price file, each standing for a CPU of app/domain/cpus.toml; an unknown or repeated name
is refused at file:line:col with the nearest names, exit 2 from `validate`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.domain.cpus import Target
from ecoready.domain.errors import ConfigError
from ecoready.matrix.load import parse
from tests.support.cli import ecoready

ROW = '[[components]]\nid = "db"\ncategory = "server"\nprobe = "server"\nimage = "x/db:1"\n'


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigError) as info:
        parse(text, "m.toml")
    return [(p.line, p.col, p.message) for p in info.value.problems]


def test_targets_are_cpu_ids_or_instances_of_the_price_file() -> None:
    matrix = parse('targets = ["aws:m6g.large", "rpi4", "apple-m1", "gcp:c4a-standard-4"]\n' + ROW)
    assert matrix.targets == (
        Target("aws:m6g.large", "graviton2"),
        Target("rpi4", "rpi4"),
        Target("apple-m1", "apple-m1"),
        Target("gcp:c4a-standard-4", "axion"),
    )
    assert parse(ROW).targets == ()


def test_an_unknown_target_is_refused_with_the_nearest_names(tmp_path: Path) -> None:
    ((line, col, message),) = problems('targets = ["rpi4", "graviton"]\n' + ROW)
    assert (line, col) == (1, 20)
    assert message == (
        "unknown target 'graviton': not a target CPU nor an instance of the price file "
        "(nearest: graviton4, graviton3, graviton2)"
    )
    path = tmp_path / "m.toml"
    path.write_text('targets = ["aws:c6g.large"]\n' + ROW)
    result = ecoready("validate", str(path))
    assert result.returncode == 2
    assert f"{path}:1:12: unknown target 'aws:c6g.large'" in result.stderr
    assert "nearest: aws:m6g.large" in result.stderr


def test_a_repeated_or_empty_target_is_refused() -> None:
    assert [m for _, _, m in problems('targets = ["rpi4", "rpi4", ""]\n' + ROW)] == [
        "'targets' names 'rpi4' twice",
        "'targets' has '': each must be a target CPU id or an instance name",
    ]
    assert [m for _, _, m in problems("targets = 3\n" + ROW)] == ["'targets' must be an array, not an integer"]
