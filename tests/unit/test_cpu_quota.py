"""A row's `cpus`: a CPU quota (the engine's NanoCpus) on the row's own containers, never on
ecoready's tools; a proxy's backend is held by its own row's quota. The engine honouring
it is shown by tests/integration/test_bench_noise.py (a throttled server's drop is found)."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from ecoready.domain.errors import ConfigError, EngineError, MatrixMismatch
from ecoready.domain.model import Category
from ecoready.domain.specs import nano_cpus
from ecoready.matrix.load import parse
from ecoready.probe_api.refusals import start_refused
from ecoready.probes.server import ServerProbe
from tests.support.fake_host import component, context, rig

ROW = textwrap.dedent("""\
    [[components]]
    id = "db"
    category = "server"
    probe = "server"
    image = "127.0.0.1:5000/lab/mariadb:10.11"
""")


def test_the_key_is_a_share_of_cpus() -> None:
    assert parse(ROW + "cpus = 0.5\n", "m.toml").components[0].cpus == 0.5
    assert parse(ROW + "cpus = 2\n", "m.toml").components[0].cpus == 2.0
    assert parse(ROW, "m.toml").components[0].cpus is None
    assert nano_cpus(0.5) == 500_000_000 and nano_cpus(None) is None


@pytest.mark.parametrize(
    ("value", "words"), [("0", "at least 0.01"), ("0.001", "at least 0.01"), ("-1", "at least"), ("true", "number")]
)
def test_a_quota_no_engine_takes_is_refused_at_its_value(value: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(ROW + f"cpus = {value}\n", "m.toml")
    (problem,) = info.value.problems
    assert (problem.line, problem.col) == (6, 8) and words in problem.message and "cpus" in problem.message


async def test_the_row_s_containers_carry_the_quota_and_ecoready_s_tools_do_not() -> None:
    r = rig()
    ctx = context(r, replace(component("db", "server", "127.0.0.1:5000/lab/mariadb:10.11"), cpus=0.25))
    r.host.sql(lambda call: [{"ok": 1}])
    await ServerProbe(ctx).start()
    await ctx.start_container("sysbench", image="127.0.0.1:5000/lab/mariadb:10.11", tool=True)
    server, tool = r.host.started
    assert server.spec.nano_cpus == 250_000_000
    assert tool.spec.nano_cpus is None


async def test_a_backend_is_held_by_its_own_row_s_quota() -> None:
    r = rig()
    backend = replace(component("db", "server", "127.0.0.1:5000/lab/mariadb:10.11"), cpus=0.5)
    proxy = component("lb", "haproxy", "127.0.0.1:5000/lab/haproxy:2.6", category=Category.LOAD_BALANCER, backend="db")
    ctx = context(r, proxy, backend)
    r.host.sql(lambda call: [{"ok": 1}])
    await ctx.backend()
    (server,) = r.host.started
    assert server.spec.name.endswith("backend-server") and server.spec.nano_cpus == 500_000_000


def test_a_quota_beyond_the_host_s_cpus_is_the_row_s_mistake() -> None:
    row = replace(component("db", "server", "127.0.0.1:5000/lab/mariadb:10.11"), cpus=64)
    said = "range of CPUs is from 0.01 to 2.00, as there are only 2 CPUs available"  # Docker's words
    error = start_refused(row, "amd64", "server", row.image, said)
    assert isinstance(error, MatrixMismatch) and "cpus = 64" in str(error) and "only 2 CPUs" in str(error)
    unlimited = start_refused(replace(row, cpus=None), "amd64", "server", row.image, said)
    assert isinstance(unlimited, EngineError)  # no quota of ours: the engine's own trouble
