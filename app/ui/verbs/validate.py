"""`ecoready validate`: check matrix files without running anything; every problem as
`file:line:col: message`, and a warning for each image that floats."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ecoready.domain.errors import ConfigError
from ecoready.ui.args import DEFAULT_MATRIX, default_matrix
from ecoready.ui.console import eprint, say
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.matrix.document import Matrix


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "validate",
        help="check matrix files; errors as file:line:col",
        description="Validate matrix files without running anything.",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help=f"default: ./{DEFAULT_MATRIX}, else the default matrix shipped with ecoready",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """2 when any file has a problem."""
    from ecoready.matrix.load import load

    failed = 0
    for file in args.files or [default_matrix()]:
        try:
            matrix = load(file)
        except ConfigError as exc:
            eprint(str(exc))
            failed += 1
            continue
        say(f"{file}: ok ({len(matrix.components)} components, arches {', '.join(matrix.arches)})")
        for warning in floating_tags(matrix):
            eprint(f"{file}: warning: {warning}")
    return 2 if failed else 0


def floating_tags(matrix: Matrix) -> list[str]:
    """Rows whose image floats (`latest`, or no tag): a run checks whatever it is that day,
    and two runs may not compare (docs/matrix.md advises a pinned tag)."""
    from ecoready.matrix.document import floating_tag

    out = []
    for component in matrix.components:
        tag = floating_tag(component.image)
        if tag is not None:
            out.append(f"component {component.id!r}: image {component.image!r} floats ({tag}): pin a version tag")
    return out
