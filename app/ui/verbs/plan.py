"""`ecoready plan`: the migration plan of a saved report, as Markdown tables on stdout
(worded by report/markdown.py)."""

from __future__ import annotations

import argparse
import sys

from ecoready.ui.console import eprint
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "plan",
        help="the migration plan of a saved report, as tables to paste into a ticket",
        description="Per component and arch: ready, use TAG, upgrade to >= VERSION, emulate, or blocked; and which "
        "arch pin can go (compose platform:, Kubernetes nodeSelector/affinity, "
        "with where each is written). The actions come first: what to change, in order. Read from the report "
        "alone. On a terminal: text that fits its width; piped: Markdown tables to paste into a ticket.",
    )
    parser.add_argument("report", metavar="REPORT.json", help="a saved report ('-' = stdin)")
    parser.add_argument(
        "--format",
        choices=("text", "md"),
        default=None,
        help="text (fits the terminal) or md (Markdown); default: text on a terminal, else md",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.report.common import run_line
    from ecoready.report.load import load_report
    from ecoready.report.markdown import md, migration

    saved = load_report(args.report)
    if not saved.migration.origins:
        eprint(f"ecoready: error: {args.report}: no migration plan: the run that wrote it predates it (run again)")
        return 2
    fmt = args.format or ("text" if sys.stdout.isatty() else "md")
    if fmt == "text":
        from ecoready.report.plan_text import render_plan
        from ecoready.report.width import terminal_width

        sys.stdout.write(render_plan(saved, terminal_width()))
        return 0
    print("\n".join([f"# Migration plan: {md(saved.matrix)}", "", md(run_line(saved)), "", *migration(saved)]).rstrip())
    return 0
