"""`ecoready images`: is each component's image published for each arch? Registries only,
no container; a table (and/or JSON)."""

from __future__ import annotations

import argparse
import sys

from ecoready.ui.args import arches_covered, load_matrix, only_known, writable
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "images",
        help="is each image published for each arch? (registries only, no containers)",
        description="Ask the registries whether every component's image is published for every arch, "
        "without pulling or starting anything. Exit 0 all available, 1 some missing, mislabelled or locked, "
        "3 a registry could not be asked.",
    )
    options.matrix(parser)
    options.json_file(parser)
    options.only(parser)
    options.arch(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    matrix = load_matrix(args)
    only_known(args.only, matrix)
    arches_covered(args.arch, args.only, matrix)
    writable(args.json)
    # the registries' connections are opened now, while the modules that ask them load
    from ecoready.registry.early import open_early

    settings = matrix.registry
    images = [c.image for c in matrix.components if not args.only or c.id in args.only]
    if tool := matrix.sysbench_image():  # the bench stage's sysbench image is asked too
        images.append(tool[0])
    early = open_early(images, mirrors=settings.mirrors, insecure=settings.insecure)

    async def work() -> int:
        from ecoready.domain.errors import ReportError
        from ecoready.registry.availability import check_images, exit_code
        from ecoready.registry.client import RegistryClient
        from ecoready.report.files import write_output
        from ecoready.report.images_table import render_json, render_table

        async with RegistryClient.for_settings(settings, early=early) as client:
            report = await check_images(matrix, client, only=args.only, arches=args.arch)
        unwritten = None
        if args.json:
            try:
                write_output(args.json, render_json(report))
            except ReportError as exc:
                unwritten = exc  # the table still shows what was found
        if args.json != "-":
            sys.stdout.write(render_table(report))
            sys.stdout.flush()
        for note in report.notes:
            eprint(f"ecoready: note: {note}")
        if unwritten is not None:
            raise unwritten
        return exit_code(report)

    return asyncio.run(work())
