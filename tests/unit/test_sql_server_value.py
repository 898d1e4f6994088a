"""`Server.value` and `same_checksum` (probes/shared/sql_server.py): `SELECT expr` and
`CHECKSUM TABLE` always have one row, so a client run that came back with none is a lost
output, the tool's to answer for (`error`), never read as a value the component gave (a
replica "not read-only", a copy whose sum "differs")."""

from __future__ import annotations

from typing import Any

import pytest

from ecoready.probe_api import CheckFailed, InfraError, Secret
from ecoready.probes.shared.sql_server import Server, same_checksum
from tests.support.fake_host import component, context, rig


async def server(rows: list[dict[str, Any]]) -> Server:
    """A server whose every query answers `rows`, through a real ProbeContext on the fake engine."""
    r = rig()
    r.host.sql(lambda _call: rows)
    ctx = context(r, component("replica", "server", "mysql:8.4"))
    return Server(ctx, await ctx.start_container("replica"), Secret("root", "pw"), "mysql")


async def test_a_value_and_sql_null_are_read_as_given() -> None:
    assert await (await server([{"v": "1"}])).value("@@read_only") == "1"
    assert await (await server([{"v": None}])).value("@@gtid_slave_pos") is None


async def test_an_output_lost_once_is_read_again_and_the_value_is_the_server_s() -> None:
    answers: list[list[dict[str, Any]]] = [[], [{"v": "1"}]]  # the client's output lost, then read
    r = rig()
    r.host.sql(lambda _call: answers.pop(0))
    ctx = context(r, component("replica", "server", "mysql:8.4"))
    replica = Server(ctx, await ctx.start_container("replica"), Secret("root", "pw"), "mysql")
    assert await replica.value("@@read_only") == "1" and not answers


async def test_no_row_at_all_is_an_infrastructure_error_naming_the_server() -> None:
    with pytest.raises(InfraError, match=r"SELECT @@read_only on replica came back without its row"):
        await (await server([])).value("@@read_only")


async def test_same_checksum_passes_on_equal_sums_and_fails_the_component_on_different_ones() -> None:
    source = await server([{"Table": "s.t", "Checksum": "42"}])
    copy = await server([{"Table": "c.t", "Checksum": "42"}])
    assert await same_checksum(source, "s.t", copy, "c.t", "loaded") == "CHECKSUM TABLE 42 on both"
    other = await server([{"Table": "c.t", "Checksum": "7"}])
    with pytest.raises(CheckFailed, match="CHECKSUM TABLE differs: source 42, restored 7"):
        await same_checksum(source, "s.t", other, "c.t", "restored")
    missing = await server([{"Table": "c.t", "Checksum": None}])  # a table that is not there: NULL
    with pytest.raises(CheckFailed, match="source 42, loaded None"):
        await same_checksum(source, "s.t", missing, "c.t", "loaded")


async def test_same_checksum_without_a_row_is_ours_not_the_component_s() -> None:
    with pytest.raises(InfraError, match=r"CHECKSUM TABLE c.t on replica came back without its row"):
        await same_checksum(await server([{"Checksum": "42"}]), "s.t", await server([]), "c.t", "loaded")
