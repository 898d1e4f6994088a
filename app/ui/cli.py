"""Command line: the top-level parser, each verb's arguments from its module
(`ui/verbs/`), and the exit code of every error. Heavy modules (asyncio, docker, httpx,
Textual, Rich) are imported by the verbs that need them, so `--help` and `validate` stay
fast (bench/startup.py).

Exit codes: 0 all requested cells ready; 1 some not ready; 2 usage or config error;
3 environment error (docker unreachable, no emulator and no host for an arch, a registry
that could not be asked); 130/143 when interrupted by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import atexit
import gc
from collections.abc import Sequence

from ecoready import __version__
from ecoready.domain.errors import ConfigError, EcoreadyError
from ecoready.ui.console import eprint
from ecoready.ui.verbs import VERBS
from ecoready.ui.verbs import run as run_verb

# At exit the interpreter collects every object of the run once more before freeing them
# all: ~25 ms of a 0.33 s `ecoready images` (bench/registry.py), paid by every command, that
# finds nothing to save (what is written is flushed and closed by then). Frozen, it is
# skipped; a process importing this (a test) keeps collecting until its own exit.
atexit.register(gc.freeze)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ecoready",
        description="Which parts of your MySQL-ecosystem stack are ready on arm64 and amd64, checked for real. "
        "Without a verb: the interactive grid on ./matrix.toml.",
    )
    parser.add_argument("--version", action="version", version=f"ecoready {__version__}")
    run_verb.add_default(parser)
    verbs = parser.add_subparsers(title="verbs", metavar="VERB")
    for verb in VERBS:
        verb.add(verbs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except ConfigError as exc:
        eprint(str(exc))
        return exc.exit_code
    except EcoreadyError as exc:
        eprint(f"ecoready: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        eprint("ecoready: interrupted")
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
