"""`ecoready plan`: the migration plan of a saved report, as Markdown tables on stdout
(worded by report/markdown.py)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ecoready.ui.console import eprint
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.domain.model import Report


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "plan",
        help="the migration plan of a saved report, as tables to paste into a ticket",
        description="Per component and arch: ready, use TAG, upgrade to >= VERSION, emulate, or blocked; and which "
        "arch pin can go (compose platform:, Kubernetes nodeSelector/affinity, "
        "with where each is written). The actions come first: what to change, in order. Read from the report "
        "alone, and the tag watch's history when there is one (`ecoready check --tags`: which pin can go since "
        "when). On a terminal: text that fits its width; piped: Markdown tables to paste into a ticket.",
    )
    parser.add_argument("report", metavar="REPORT.json", help="a saved report ('-' = stdin)")
    parser.add_argument(
        "--format",
        choices=("text", "md"),
        default=None,
        help="text (fits the terminal) or md (Markdown); default: text on a terminal, else md",
    )
    options.history(parser, "the tag watch's history (`check --tags`): the pins it shows can go are said with the date")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.report.exporter_text import run_line
    from ecoready.report.load import load_report
    from ecoready.report.markdown import md, migration

    saved = load_report(args.report)
    if not saved.migration.origins:
        eprint(f"ecoready: error: {args.report}: no migration plan: the run that wrote it predates it (run again)")
        return 2
    fmt = args.format or ("text" if sys.stdout.isatty() else "md")
    watched = tag_pins(saved, args.history)
    if fmt == "text":
        from ecoready.report.plan_text import render_plan
        from ecoready.report.width import terminal_width

        sys.stdout.write(render_plan(saved, terminal_width()))
        if watched:
            sys.stdout.write("\n".join(["", _WATCHED, *(f"  - {line}" for line in watched)]) + "\n")
        return 0
    lines = [f"# Migration plan: {md(saved.matrix)}", "", md(run_line(saved)), "", *migration(saved)]
    if watched:
        lines.extend(["", f"### {_WATCHED.rstrip(':')}", "", *(f"- {md(line)}" for line in watched)])
    print("\n".join(lines).rstrip())
    return 0


_WATCHED = "Arch pins the tag watch shows can go (ecoready check --tags):"


def tag_pins(saved: Report, directory: str | None) -> list[str]:
    """The pins of the report's components the tag watch's records show can go, worded."""
    from pathlib import Path

    from ecoready.judge import history, tag_history
    from ecoready.judge.tag_findings import published_since
    from ecoready.report.migration import drop_pin_text, pins_published

    folder = Path(directory).expanduser() if directory else history.default_dir()
    problems: list[str] = []
    records = tag_history.read(folder, problems, aside=False)  # read only: a check sets a bad one aside
    for problem in problems:
        eprint(f"ecoready: tag history: {problem}")
    pins = pins_published(saved.migration.origins, published_since(records), saved.arches)
    return [drop_pin_text(pin) for pin in pins]
