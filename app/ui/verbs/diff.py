"""`ecoready diff`: what changed between two saved reports (without them: the last two of
the history); exit 1 when anything regressed."""

from __future__ import annotations

import argparse
import sys

from ecoready.domain.errors import UsageError
from ecoready.ui.args import writable
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "diff",
        help="what changed between two saved reports (exit 1 on a regression)",
        description="Print the cells that changed status, new or lost arches and cells, and bench changes "
        "beyond noise (more than twice the coefficient of variation) from OLD to NEW: OLD is the earlier "
        "report (the baseline), NEW the later one; a cell ready in OLD and not in NEW is a regression, and so is "
        "an arch or a bench series OLD had and NEW lacks. Reports of different matrices, profiles or subsets "
        "are compared all the same, and the diff says so first. "
        "Without files: the last two reports of the history (`ecoready check` stores them). "
        "Exit 1 when anything regressed.",
    )
    parser.add_argument("old", metavar="OLD.json", nargs="?", help="the earlier report, the baseline")
    parser.add_argument("new", metavar="NEW.json", nargs="?", help="the later report, compared with OLD")
    parser.add_argument(
        "--history", default=None, help="the history folder to take the last two reports from (without files)"
    )
    options.json_file(parser, help="also write the structured diff here ('-' = stdout)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ecoready.judge import history
    from ecoready.judge.diff import diff, diff_dict, diff_text
    from ecoready.report.files import write_output
    from ecoready.report.load import load_report

    writable(args.json)
    old, new = args.old, args.new
    if old is None or new is None:
        if old is not None:
            raise UsageError("diff takes two reports (OLD.json NEW.json), or none for the last two of the history")
        folder = Path(args.history).expanduser() if args.history else history.default_dir()
        stored = history.entries(folder)
        if len(stored) < 2:
            raise UsageError(f"{folder}: {len(stored)} report(s) in the history: give OLD.json and NEW.json")
        old, new = str(stored[-2]), str(stored[-1])
    change = diff(load_report(old), load_report(new))
    stream = sys.stderr if args.json == "-" else sys.stdout
    stream.write(diff_text(change))
    stream.flush()
    if args.json:
        write_output(args.json, json.dumps(diff_dict(change), indent=2, ensure_ascii=False))
    return 1 if change.regressed else 0
