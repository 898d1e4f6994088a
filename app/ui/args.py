"""The arguments every front end shares, checked once before anything runs: the matrix
(and what to say when there is none), report paths, `--only`, `--arch` and the run's
options. Used by the verbs (`ui/verbs/`, where `options.py` declares them); raises
UsageError for what a person typed wrong."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import UsageError
from ecoready.report import OPTIONS

if TYPE_CHECKING:  # only for annotations: the verbs import what they use
    from ecoready.matrix.document import Matrix
    from ecoready.run.session import RunOptions

DEFAULT_MATRIX = "matrix.toml"


def matrix_path(args: argparse.Namespace) -> str:
    """`--matrix`, else ./matrix.toml, else the default matrix shipped with ecoready (said
    on stderr: a first start in an empty folder runs the default matrix)."""
    if args.matrix:
        return str(args.matrix)
    return default_matrix()


def default_matrix() -> str:
    """./matrix.toml when there is one, else the shipped default matrix (said on stderr)."""
    if Path(DEFAULT_MATRIX).exists():
        return DEFAULT_MATRIX
    from ecoready.matrix.load import shipped_matrix
    from ecoready.ui.console import eprint

    shipped = shipped_matrix()
    eprint(
        f"ecoready: no {DEFAULT_MATRIX} here: using the default matrix shipped with ecoready ({shipped}); "
        "`ecoready init --from compose.yml` (or --from-host, --images) writes one for your stack, "
        "`ecoready init --default` this one to edit"
    )
    return str(shipped)


def load_matrix(args: argparse.Namespace) -> Matrix:
    """The matrix as this environment sees it; a mirror the environment set in place of the
    matrix's is said (the variable wins)."""
    from ecoready.matrix.load import load
    from ecoready.matrix.mirrors import override_notes
    from ecoready.ui.console import eprint

    matrix = load(matrix_path(args))
    for note in override_notes(matrix.registry):
        eprint(f"ecoready: note: {note}")
    return matrix


def outputs(args: argparse.Namespace) -> dict[str, str]:
    """format -> path for the report files asked for; at most one may be stdout, and each
    must be writable now (checked before anything runs)."""
    chosen = {fmt: getattr(args, fmt) for fmt in OPTIONS if getattr(args, fmt, None)}
    if sum(1 for path in chosen.values() if path == "-") > 1:
        raise UsageError("only one report can go to stdout ('-')")
    for path in chosen.values():
        writable(path)
    return chosen


def writable(path: str | None) -> None:
    """A report path the verb will write, checked before it does anything else."""
    from ecoready.report.files import check_writable

    if path:
        check_writable(path)


def only_known(only: Sequence[str] | None, matrix: Matrix) -> None:
    """`--only` names components of the matrix, for every verb that takes it."""
    unknown = [i for i in only or () if i not in {c.id for c in matrix.components}]
    if unknown:
        raise UsageError(f"--only names unknown component(s) of {matrix.path}: {', '.join(unknown)}")


def arches_covered(arches: Sequence[str] | None, only: Sequence[str] | None, matrix: Matrix) -> None:
    """`--arch` names arches the matrix checks (its components', after `--only`), for every
    verb that takes it: else nothing would be asked and an empty answer would look fine."""
    components = [c for c in matrix.components if not only or c.id in only]
    covered = {arch for c in components for arch in (c.arches or matrix.arches)}
    lacking = [arch for arch in arches or () if arch not in covered]
    if lacking:
        which = "the components named by --only are" if only else f"{matrix.path} is"
        raise UsageError(
            f"--arch {','.join(lacking)}: no component is checked on {' or '.join(lacking)} "
            f"({which} checked on {', '.join(sorted(covered))}); add it to the matrix's `arches`"
        )


def run_options(args: argparse.Namespace, matrix: Matrix) -> RunOptions:
    """The run's options, checked against the matrix: the same for the TUI (before its
    screen opens) and headless. What the engines serve is known once they are asked
    (`Session.open`)."""
    from ecoready.domain.model import Profile
    from ecoready.run.session import RunOptions

    only = getattr(args, "only", None)
    only_known(only, matrix)
    arches = getattr(args, "arch", None)
    arches_covered(arches, only, matrix)
    history = getattr(args, "history", None)
    return RunOptions(
        only=only,
        arches=arches,
        profile=Profile(args.profile) if getattr(args, "profile", None) else None,
        concurrency=getattr(args, "concurrency", None),
        history=Path(history).expanduser() if history else None,
    )
