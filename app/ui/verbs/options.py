"""The options several verbs take, each declared once here (the verbs add them through
these functions), and the argparse types they parse with. Checking them against the
matrix, after parsing, is `ui/args.py`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ecoready.domain.model import Profile, normalize_arch
from ecoready.report import FORMATS
from ecoready.ui.args import DEFAULT_MATRIX

WEBHOOK_ENV = "ECOREADY_WEBHOOK_URL"
MATRIX_HELP = f"matrix file (default: ./{DEFAULT_MATRIX}, else the default matrix shipped with ecoready)"
JSON_HELP = "write the JSON here ('-' = stdout, then no table)"

if TYPE_CHECKING:
    Verbs = argparse._SubParsersAction[argparse.ArgumentParser]  # what each verb module adds its parser to


def comma_list(text: str) -> list[str]:
    items = [p.strip() for p in text.split(",") if p.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def arch_list(text: str) -> list[str]:
    out = []
    for item in comma_list(text):
        arch = normalize_arch(item)
        if arch is None:
            raise argparse.ArgumentTypeError(f"unknown architecture {item!r} (amd64, arm64, ppc64le, s390x)")
        out.append(arch)
    return out


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError("must be between 1 and 256")
    return value


def matrix(parser: argparse.ArgumentParser, help: str = MATRIX_HELP) -> None:
    parser.add_argument("--matrix", "-m", default=None, help=help)


def only(parser: argparse.ArgumentParser, help: str = "only these component ids", metavar: str = "ID,...") -> None:
    parser.add_argument("--only", type=comma_list, metavar=metavar, help=help)


def arch(parser: argparse.ArgumentParser, help: str = "only these architectures") -> None:
    parser.add_argument("--arch", type=arch_list, metavar="ARCH,...", help=help)


def json_file(parser: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    """`--json PATH` of the verbs that print a table (or a text) and can also write JSON."""
    parser.add_argument("--json", metavar="PATH", help=help)


def outputs(parser: argparse.ArgumentParser) -> None:
    """An option per report format (`ecoready.report.FORMATS`): `--json PATH`, `--md PATH`, ..."""
    group = parser.add_argument_group("report files ('-' = stdout, for one of them)")
    for fmt in FORMATS:
        group.add_argument(f"--{fmt.option}", metavar="PATH", help=fmt.help)


def selection(parser: argparse.ArgumentParser) -> None:
    """Which cells a run runs, and how."""
    only(parser)
    arch(parser)
    parser.add_argument("--profile", choices=[p.value for p in Profile], help="benchmark depth (default: the matrix's)")
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        metavar="N",
        help="cells at once on each host (default: [[hosts]] concurrency, else from CPUs)",
    )


def history(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--history",
        metavar="DIR",
        help=f"{what} (default: $XDG_DATA_HOME/ecoready/history or ~/.local/share/ecoready/history)",
    )


def check_options(parser: argparse.ArgumentParser) -> None:
    """What `check` and `watch` share: the run, where reports are stored, the webhook."""
    matrix(parser)
    history(parser, "where reports are stored")
    parser.add_argument(
        "--webhook",
        metavar="URL",
        help=f"POST what changed here (Slack-compatible); default: ${WEBHOOK_ENV}, which keeps the URL out of ps",
    )
    selection(parser)
    outputs(parser)


def tag_watch(parser: argparse.ArgumentParser) -> None:
    """`check --tags` and `watch --tags`: the tag watch instead of the full check."""
    parser.add_argument(
        "--tags",
        action="store_true",
        help="the tag watch only: ask the registries what each image's tag publishes (no container, seconds); "
        "say gained, lost and behind arches and the pins that can go",
    )
    parser.add_argument(
        "--behind-after",
        metavar="DURATION",
        default="3d",
        help="with --tags: say an arch is behind when another arch's image was rebuilt this long ago and it was "
        "not (default: 3d)",
    )
    parser.add_argument(
        "--search-every",
        metavar="DURATION",
        default="1d",
        help="with --tags: search other tags for an arch a tag lacks at most this often (a tag list and up to 12 "
        "manifests each; default: 1d; 0: every check)",
    )
