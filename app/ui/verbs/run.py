"""`ecoready run`: run every cell of the matrix, in the TUI or `--headless`; and the TUI on
its own, what `ecoready` does without a verb."""

from __future__ import annotations

import argparse

from ecoready.ui.args import load_matrix, outputs, run_options
from ecoready.ui.verbs import options


def add_default(parser: argparse.ArgumentParser) -> None:
    """Without a verb: the interactive grid."""
    options.matrix(parser)
    _theme(parser)
    parser.set_defaults(func=tui)


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "run",
        help="run the matrix (the TUI, or --headless for scripts and CI)",
        description="Run every cell of the matrix: image, start, smoke (and bench).",
    )
    options.matrix(parser)
    parser.add_argument("--headless", action="store_true", help="no TUI: progress on stderr, report files")
    options.outputs(parser)
    options.selection(parser)
    _theme(parser)
    parser.set_defaults(func=run)


def _theme(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")


def tui(args: argparse.Namespace) -> int:
    matrix = load_matrix(args)
    settings = run_options(args, matrix)
    from ecoready.ui.tui.app import run_app

    return run_app(matrix, settings, theme=getattr(args, "theme", None))


def run(args: argparse.Namespace) -> int:
    if not args.headless:
        return tui(args)
    matrix = load_matrix(args)
    chosen = outputs(args)
    settings = run_options(args, matrix)
    from ecoready.ui import headless

    return headless.run(matrix, settings, chosen)
