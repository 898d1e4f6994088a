"""`Server.value` and `same_checksum` (probes/shared/sql_server.py): `SELECT expr` and
`CHECKSUM TABLE` always have one row, so a client run that came back with none is a lost
output, the tool's to answer for (`error`), never read as a value the component gave (a
replica "not read-only", a copy whose sum "differs")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ecoready.probe_api import CheckFailed, InfraError
from ecoready.probes.shared.sql_server import Server, same_checksum


class Client:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    async def sql(self, *_args: Any, **_kwargs: Any) -> list[dict[str, Any]]:
        return self.rows


def server(rows: list[dict[str, Any]]) -> Server:
    return Server(Client(rows), SimpleNamespace(alias="replica"), "pw", "mysql")  # type: ignore[arg-type]


async def test_a_value_and_sql_null_are_read_as_given() -> None:
    assert await server([{"v": "1"}]).value("@@read_only") == "1"
    assert await server([{"v": None}]).value("@@gtid_slave_pos") is None


async def test_no_row_at_all_is_an_infrastructure_error_naming_the_server() -> None:
    with pytest.raises(InfraError, match=r"SELECT @@read_only on replica came back without its row"):
        await server([]).value("@@read_only")


async def test_same_checksum_passes_on_equal_sums_and_fails_the_component_on_different_ones() -> None:
    source, copy = server([{"Table": "s.t", "Checksum": "42"}]), server([{"Table": "c.t", "Checksum": "42"}])
    assert await same_checksum(source, "s.t", copy, "c.t", "loaded") == "CHECKSUM TABLE 42 on both"
    other = server([{"Table": "c.t", "Checksum": "7"}])
    with pytest.raises(CheckFailed, match="CHECKSUM TABLE differs: source 42, restored 7"):
        await same_checksum(source, "s.t", other, "c.t", "restored")
    missing = server([{"Table": "c.t", "Checksum": None}])  # a table that is not there: NULL
    with pytest.raises(CheckFailed, match="source 42, loaded None"):
        await same_checksum(source, "s.t", missing, "c.t", "loaded")


async def test_same_checksum_without_a_row_is_ours_not_the_component_s() -> None:
    with pytest.raises(InfraError, match=r"CHECKSUM TABLE c.t on replica came back without its row"):
        await same_checksum(server([{"Checksum": "42"}]), "s.t", server([]), "c.t", "loaded")
