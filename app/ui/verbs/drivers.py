"""`ecoready drivers`: does each driver pin ship a prebuilt artifact for each arch? The pins
given, or the driver rows of the matrix; package registries only, a table (and/or JSON)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ecoready.domain.errors import UsageError
from ecoready.ui.args import load_matrix, only_known
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.domain.drivers import DriverSpec
    from ecoready.matrix.document import Matrix


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "drivers",
        help="does each driver version ship a prebuilt artifact per arch? (package registries only)",
        description="Ask PyPI, npm, Maven Central or the Go module proxy which version each driver pin resolves to "
        "and whether it ships a prebuilt artifact for each arch (a wheel, pure JS, a pure-Java jar, pure Go) or "
        "builds from source (and what the build needs), without any container. Without SPEC: the driver rows of "
        "the matrix. Exit 0 all prebuilt, 1 some build from source or have nothing for an arch, 2 a pin names no "
        "published version, 3 a registry could not be asked.",
    )
    parser.add_argument("specs", nargs="*", metavar="SPEC", help="e.g. pypi:mysqlclient==2.2.* npm:mysql2@3")
    options.matrix(parser)
    options.arch(parser, help="default: the matrix's, else amd64,arm64")
    options.only(parser, help="only these rows of the matrix")
    options.json_file(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    if args.specs and (args.only or args.matrix):
        raise UsageError("give driver SPECs or --matrix/--only, not both")
    matrix = None if args.specs else load_matrix(args)
    if matrix is not None:
        only_known(args.only, matrix)
    pins = _pins(args.specs, matrix, args.only)
    arches = args.arch or (matrix.arches if matrix is not None else ("amd64", "arm64"))

    async def work() -> int:
        from ecoready.packages.check import check_drivers, exit_code
        from ecoready.packages.client import PackageClient
        from ecoready.report.drivers_table import render_json, render_table
        from ecoready.report.files import write_output

        async with PackageClient() as client:
            result = await check_drivers(pins, arches, client)
        if args.json:
            write_output(args.json, render_json(result))
        if args.json != "-":
            sys.stdout.write(render_table(result))
            sys.stdout.flush()
        for check in result.checks:
            if check.config_error:
                eprint(f"ecoready: error: {check.row + ': ' if check.row else ''}{check.error}")
        return exit_code(result)

    return asyncio.run(work())


def _pins(specs: Sequence[str], matrix: Matrix | None, only: Sequence[str] | None) -> list[tuple[str, DriverSpec]]:
    """(row id, pin) for each pin given (each checked before anything is asked; row id "")
    or each driver row of `matrix` (after `only`)."""
    from ecoready.domain.drivers import parse_driver
    from ecoready.matrix.kinds import KINDS

    pins: list[tuple[str, DriverSpec]] = []
    for text in specs:
        try:
            pins.append(("", parse_driver(text)))
        except ValueError as exc:
            raise UsageError(f"{text!r}: {exc}") from None
    for component in matrix.components if matrix is not None else ():
        kind = KINDS[component.probe]
        option = kind.installs  # drivers only: a tool's probe builds its program (kind.program)
        if option and kind.program is None and component.options.get(option) and (not only or component.id in only):
            pins.append((component.id, parse_driver(str(component.options[option]))))
    if not pins:
        raise UsageError(f"{matrix.path if matrix else 'the matrix'} has no driver rows (a connector's `driver`)")
    return pins
