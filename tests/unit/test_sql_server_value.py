"""`Server.value` (probes/shared/sql_server.py): `SELECT expr` always has one row, so a
client run that came back with none is a lost output, the tool's to answer for (`error`),
never read as a value the component gave (a replica "not read-only")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ecoready.probe_api import InfraError
from ecoready.probes.shared.sql_server import Server


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
