"""`ecoready report`: re-render saved reports (or `--merge` several into one) as JSON,
Markdown, HTML or JUnit; without an output option, print the grid."""

from __future__ import annotations

import argparse

from ecoready.ui.args import outputs
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "report",
        help="re-render a saved report (or --merge several) as JSON, Markdown, HTML, JUnit",
        description="Read saved JSON reports and write them in other formats. Without an output option, print "
        "the grid. Several reports (e.g. from a native arm64 and a native amd64 runner) need --merge.",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT.json", help="saved report(s); '-' = stdin")
    parser.add_argument("--merge", action="store_true", help="merge the reports into one")
    options.outputs(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.domain.errors import ReportError
    from ecoready.report.load import load_report
    from ecoready.report.merge import merge
    from ecoready.report.text_grid import render_summary
    from ecoready.ui.headless import deliver

    chosen = outputs(args)
    if len(args.reports) > 1 and not args.merge:
        eprint("ecoready: error: several reports given: add --merge to merge them into one")
        return 2
    loaded = [(path, load_report(path)) for path in args.reports]
    result = merge(loaded) if args.merge else loaded[0][1]
    if not chosen:
        print(render_summary(result))
        return 0
    return 0 if deliver(result, chosen, keep=False) else ReportError.exit_code
