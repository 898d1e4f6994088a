"""`ecoready watch`: `ecoready check` every DURATION until stopped."""

from __future__ import annotations

import argparse

from ecoready.ui.verbs import check, options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "watch",
        help="run the check on an interval until stopped",
        description="Repeat `ecoready check` every DURATION (start to start) until stopped; a failed check is "
        "reported and the next one runs on time. With --tags: the tag watch (`ecoready check --tags`) instead.",
    )
    parser.add_argument("--every", required=True, metavar="DURATION", help="e.g. 6h, 30m, 1h30m, 90s")
    parser.add_argument("--runs", type=options.positive_int, metavar="N", help="stop after N checks (default: never)")
    options.check_options(parser)
    options.tag_watch(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.judge.check import parse_duration
    from ecoready.ui.headless import watch

    every = parse_duration(args.every)
    # a matrix or arguments wrong from the start: refused before the first round; the
    # request is made anew each round: a watch picks up edits of the matrix
    return watch(every, args.runs, check.once(args))
