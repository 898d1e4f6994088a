"""`ecoready cleanup`: remove the containers, networks and volumes of ecoready runs whose
process is gone, on the local engine or on every [[hosts]] engine of a matrix."""

from __future__ import annotations

import argparse

from ecoready.domain.errors import EcoreadyError
from ecoready.ui.args import load_matrix
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "cleanup",
        help="remove containers, networks and volumes ecoready left",
        description="Remove resources of ecoready runs whose process is gone, on the local engine or on every "
        "[[hosts]] engine of a matrix. Exit 3 when an engine could not be reached.",
    )
    parser.add_argument("--all", action="store_true", help="also those of runs that still look alive")
    options.matrix(parser, help="clean every [[hosts]] engine of this matrix (default: the local engine)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """3 when an engine could not be reached."""
    import asyncio

    from ecoready.domain.model import Host

    hosts: tuple[Host, ...] = (Host(name="local"),)
    if args.matrix:
        from ecoready.run.hosts import host_specs

        hosts = host_specs(load_matrix(args).hosts)
    per_host = bool(args.matrix)  # then each line says which host it is about

    async def work() -> int:
        from ecoready.run.hosts import connect_all

        engines = await connect_all(hosts)
        code, removed = 0, 0
        try:
            for engine in engines:
                where = f" on host {engine.spec.name}" if per_host else ""
                if engine.host is None:
                    eprint(f"ecoready: error: {f'host {engine.spec.name}: ' if per_host else ''}{engine.error}")
                    code = 3
                    continue
                try:
                    swept = await engine.host.sweep(dead_owners=True, everything=args.all)
                except EcoreadyError as exc:
                    eprint(f"ecoready: error: host {engine.spec.name}: {exc}")
                    code = 3
                    continue
                removed += swept.total
                kinds = (("container", swept.containers), ("network", swept.networks), ("volume", swept.volumes))
                for kind, names in kinds:
                    for name in names:
                        eprint(f"removed {kind} {name}{where}")
        finally:
            for engine in engines:
                if engine.host is not None:
                    await engine.host.close()
        if not removed and code == 0:
            eprint("ecoready: nothing to clean up")
        return code

    return asyncio.run(work())
