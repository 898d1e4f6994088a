"""Facts a probe gathers for parity (domain/parity.py), from what its cell runs anyway: a
server's own (its engines, plugins, character sets, collations and global variables, read
in the same client run as the smoke's version row) and its main program's version output
(one exec in the running container), reported as the cell's `FactsGathered`. Nothing is
gathered when the run's parity is off (`RunContext.parity`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.events import FactsGathered
from ecoready.domain.parity import Facet, Facts
from ecoready.domain.parity_rules import kept
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.handles import Container
from ecoready.probe_api.sql import Row

# One result set each, in this order, after the statement they are added to.
SERVER_QUERIES: tuple[tuple[Facet, str], ...] = (
    (Facet.ENGINES, "SELECT ENGINE AS name, SUPPORT AS value FROM information_schema.ENGINES"),
    (Facet.PLUGINS, "SELECT PLUGIN_NAME AS name, PLUGIN_STATUS AS value FROM information_schema.PLUGINS"),
    (Facet.CHARSETS, "SELECT CHARACTER_SET_NAME AS name, '' AS value FROM information_schema.CHARACTER_SETS"),
    (Facet.COLLATIONS, "SELECT COLLATION_NAME AS name, '' AS value FROM information_schema.COLLATIONS"),
    (Facet.VARIABLES, "SHOW GLOBAL VARIABLES"),
)
SERVER_STATEMENT = "; ".join(query for _facet, query in SERVER_QUERIES)
log = logging.getLogger("ecoready.parity")
MAX_VERSION_OUTPUT = 400  # characters of a program's version output kept
# `$@`: the names a program goes by; the first found runs with --version (never started as a service)
VERSION_SCRIPT = (
    'for p in "$@"; do if command -v "$p" >/dev/null 2>&1; then '
    'printf "%s\\n" "$p"; "$p" --version 2>&1 | head -n 5; exit 0; fi; done; exit 3'
)


def gathering(ctx: ProbeContext) -> bool:
    return ctx.run.parity


def server_facts(version: Row, results: Sequence[Sequence[Row]]) -> tuple[Facts, ...]:
    """The server's facets from its version row (`version`, `comment`) and the result sets
    of `SERVER_STATEMENT`, in order; None (SQL's NULL) read as ""."""
    facts = [
        Facts(Facet.VERSION, {"": version.get("version") or ""}, "sql"),
        Facts(Facet.VERSION_COMMENT, {"": version.get("comment") or ""}, "sql"),
    ]
    for (facet, _query), rows in zip(SERVER_QUERIES, results, strict=False):
        items: dict[str, str] = {}
        for row in rows:
            name = row.get("name") or row.get("Variable_name") or ""
            if name:
                items[name] = row.get("value") or row.get("Value") or ""
        facts.append(Facts(facet, kept(facet, items), "sql"))
    return tuple(facts)


async def program_version(ctx: ProbeContext, container: Container, names: Sequence[str]) -> Facts | None:
    """The version output of the first of `names` found in `container` (one exec), arch
    words made neutral; None when none is there, it said nothing, or the exec failed (a
    fact for parity never decides the cell: what failed here fails the cell's own steps)."""
    try:
        result = await ctx.exec(container, ["sh", "-c", VERSION_SCRIPT, "sh", *names], timeout=ctx.scaled(30))
    except EcoreadyError as exc:
        log.debug("%s: no version output for parity: %s", ctx.cell.id, exc)
        return None
    program, _, output = result.stdout.partition("\n")
    if not result.ok or not program.strip() or not output.strip():
        return None
    said = " ".join(output.split())[:MAX_VERSION_OUTPUT]
    return Facts(Facet.PROGRAMS, kept(Facet.PROGRAMS, {program.strip(): said}), "exec")


def report_facts(ctx: ProbeContext, facts: Iterable[Facts | None]) -> None:
    """The cell's facts, as an event (parity compares them once its component's cells end)."""
    found = tuple(f for f in facts if f is not None)
    if found and gathering(ctx):
        ctx.run.emit(FactsGathered(ctx.cell.id, found))
