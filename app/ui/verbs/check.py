"""`ecoready check`: the scheduled readiness check, run (or read) once: store the report,
diff it with the previous one, tell a webhook. The request it makes is `watch`'s too."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import UsageError
from ecoready.ui.args import load_matrix, matrix_path, outputs, run_options
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.ui.headless import CheckRequest


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "check",
        help="run headless, store the report, diff it with the previous one, tell a webhook",
        description="The scheduled readiness check: run the matrix headless, store the report in the history "
        "folder, print what changed since the previous stored report, and POST the change to a webhook. "
        "Exit 1 when readiness regressed, 3 when the tool or infrastructure failed a cell, else 0.",
    )
    options.check_options(parser)
    parser.add_argument(
        "--report",
        metavar="REPORT.json",
        help="judge this saved report instead of running the matrix (e.g. the merge of two native runners' reports)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.ui.headless import check_once

    return check_once(request(args))


def request(args: argparse.Namespace) -> CheckRequest:
    """The check the arguments ask for, checked (the matrix read anew each call)."""
    from ecoready.judge import history
    from ecoready.ui.headless import CheckRequest

    saved = getattr(args, "report", None)
    if saved and (args.only or args.arch or args.profile or args.concurrency):
        raise UsageError(
            "--report: a saved report is judged as it is (no matrix is read): drop --only, --arch, --profile "
            "and --concurrency"
        )
    return CheckRequest(
        history=Path(args.history).expanduser() if args.history else history.default_dir(),
        webhook=args.webhook or os.environ.get(options.WEBHOOK_ENV) or None,
        webhook_option="--webhook" if args.webhook else options.WEBHOOK_ENV,
        outputs=outputs(args),
        saved=saved,
        matrix_path="" if saved else matrix_path(args),  # a saved report needs no matrix.toml
        options=None if saved else run_options(args, load_matrix(args)),
    )
