"""`ecoready check`: the scheduled readiness check, run (or read) once: store the report,
diff it with the previous one, tell a webhook. The request it makes is `watch`'s too."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import UsageError
from ecoready.ui.args import arches_covered, load_matrix, matrix_path, only_known, outputs, run_options
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.ui.headless import CheckRequest
    from ecoready.ui.tag_check import TagCheckRequest


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "check",
        help="run headless, store the report, diff it with the previous one, tell a webhook",
        description="The scheduled readiness check: run the matrix headless, store the report in the history "
        "folder, print what changed since the previous stored report, and POST the change to a webhook. "
        "Exit 1 when readiness regressed, 3 when the tool or infrastructure failed a cell, else 0. "
        "With --tags: the tag watch only (registries, no container, seconds): which tag gained or lost an arch, "
        "which arch fell behind, which pin can go; exit 1 when a tag lost an arch, 3 when a registry could not "
        "be asked.",
    )
    options.check_options(parser)
    options.tag_watch(parser)
    parser.add_argument(
        "--report",
        metavar="REPORT.json",
        help="judge this saved report instead of running the matrix (e.g. the merge of two native runners' reports)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tags:
        from ecoready.ui.tag_check import tag_check_once

        return tag_check_once(tag_request(args))
    from ecoready.ui.headless import check_once

    return check_once(request(args))


def once(args: argparse.Namespace) -> Callable[[], int]:
    """One check as the arguments ask for it (checked now: a watch refuses wrong arguments
    before its first round), made anew each call (a watch picks up edits of the matrix)."""
    if args.tags:
        from ecoready.ui.tag_check import tag_check_once

        tag_request(args)
        return lambda: tag_check_once(tag_request(args))
    from ecoready.ui.headless import check_once

    request(args)
    return lambda: check_once(request(args))


def tag_request(args: argparse.Namespace) -> TagCheckRequest:
    """The tag watch the arguments ask for, checked (the matrix read anew each call)."""
    from ecoready.judge import history
    from ecoready.judge.check import parse_duration
    from ecoready.ui.tag_check import TagCheckRequest

    extra = [f"--{dest}" for dest in _RUN_ONLY if getattr(args, dest, None)]
    if extra or outputs(args):
        what = ", ".join(extra + (["the report outputs"] if outputs(args) else []))
        raise UsageError(f"--tags asks the registries only, nothing runs: drop {what}")
    matrix = load_matrix(args)
    only_known(args.only, matrix)
    arches_covered(args.arch, args.only, matrix)
    return TagCheckRequest(
        history=Path(args.history).expanduser() if args.history else history.default_dir(),
        webhook=args.webhook or os.environ.get(options.WEBHOOK_ENV) or None,
        webhook_option="--webhook" if args.webhook else options.WEBHOOK_ENV,
        matrix_path=matrix.path,
        behind_after=timedelta(seconds=parse_duration(args.behind_after, minimum=0.0, option="--behind-after")),
        search_every=timedelta(seconds=parse_duration(args.search_every, minimum=0.0, option="--search-every")),
        only=tuple(args.only or ()),
        arches=tuple(args.arch or ()),
    )


_RUN_ONLY = ("report", "profile", "concurrency")  # what only a run (or a saved report) has


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
