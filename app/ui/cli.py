"""Command line: parse the arguments, check them (`ui/args.py`), and hand each verb to its
front end (`ui/headless.py`, `ui/tui/`, `ui/queries.py`, `ui/ops.py`). Nothing here runs or
prints a result itself. Heavy modules (asyncio, docker, httpx, Textual, Rich) are imported by the
verbs that need them, so `--help` and `validate` stay fast (bench/startup.py).

Exit codes: 0 all requested cells ready; 1 some not ready; 2 usage or config error;
3 environment error (docker unreachable, no emulator and no host for an arch, a registry
that could not be asked); 130/143 when interrupted by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready import __version__
from ecoready.domain.errors import ConfigError, EcoreadyError, UsageError
from ecoready.ui.args import (
    DEFAULT_MATRIX,
    arches_covered,
    load_matrix,
    matrix_path,
    only_known,
    outputs,
    run_options,
    writable,
)
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verbs import what they use
    from ecoready.ui.headless import CheckRequest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ecoready",
        description="Which parts of your MySQL-ecosystem stack are ready on arm64 and amd64, checked for real. "
        "Without a verb: the interactive grid on ./matrix.toml.",
    )
    parser.add_argument("--version", action="version", version=f"ecoready {__version__}")
    options.matrix(parser)
    parser.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")
    parser.set_defaults(func=cmd_tui)
    verbs = parser.add_subparsers(title="verbs", metavar="VERB")

    run = verbs.add_parser(
        "run",
        help="run the matrix (the TUI, or --headless for scripts and CI)",
        description="Run every cell of the matrix: image, start, smoke (and bench).",
    )
    options.matrix(run)
    run.add_argument("--headless", action="store_true", help="no TUI: progress on stderr, report files")
    options.outputs(run)
    options.selection(run)
    run.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")
    run.set_defaults(func=cmd_run)

    check = verbs.add_parser(
        "check",
        help="run headless, store the report, diff it with the previous one, tell a webhook",
        description="The scheduled readiness check: run the matrix headless, store the report in the history "
        "folder, print what changed since the previous stored report, and POST the change to a webhook. "
        "Exit 1 when readiness regressed, 3 when the tool or infrastructure failed a cell, else 0.",
    )
    options.check_options(check)
    check.add_argument(
        "--report",
        metavar="REPORT.json",
        help="judge this saved report instead of running the matrix (e.g. the merge of two native runners' reports)",
    )
    check.set_defaults(func=cmd_check)

    watch = verbs.add_parser(
        "watch",
        help="run the check on an interval until stopped",
        description="Repeat `ecoready check` every DURATION (start to start) until stopped; a failed check is "
        "reported and the next one runs on time.",
    )
    watch.add_argument("--every", required=True, metavar="DURATION", help="e.g. 6h, 30m, 1h30m, 90s")
    watch.add_argument("--runs", type=options.positive_int, metavar="N", help="stop after N checks (default: never)")
    options.check_options(watch)
    watch.set_defaults(func=cmd_watch)

    report = verbs.add_parser(
        "report",
        help="re-render a saved report (or --merge several) as JSON, Markdown, HTML, JUnit",
        description="Read saved JSON reports and write them in other formats. Without an output option, print "
        "the grid. Several reports (e.g. from a native arm64 and a native amd64 runner) need --merge.",
    )
    report.add_argument("reports", nargs="+", metavar="REPORT.json", help="saved report(s); '-' = stdin")
    report.add_argument("--merge", action="store_true", help="merge the reports into one")
    options.outputs(report)
    report.set_defaults(func=cmd_report)

    diff = verbs.add_parser(
        "diff",
        help="what changed between two saved reports (exit 1 on a regression)",
        description="Print the cells that changed status, new or lost arches and cells, and bench changes "
        "beyond noise (more than twice the coefficient of variation) from OLD to NEW: OLD is the earlier "
        "report (the baseline), NEW the later one; a cell ready in OLD and not in NEW is a regression. "
        "Without files: the last two reports of the history (`ecoready check` stores them). "
        "Exit 1 when anything regressed.",
    )
    diff.add_argument("old", metavar="OLD.json", nargs="?", help="the earlier report, the baseline")
    diff.add_argument("new", metavar="NEW.json", nargs="?", help="the later report, compared with OLD")
    diff.add_argument(
        "--history", default=None, help="the history folder to take the last two reports from (without files)"
    )
    options.json_file(diff, help="also write the structured diff here ('-' = stdout)")
    diff.set_defaults(func=cmd_diff)
    images = verbs.add_parser(
        "images",
        help="is each image published for each arch? (registries only, no containers)",
        description="Ask the registries whether every component's image is published for every arch, "
        "without pulling or starting anything. Exit 0 all available, 1 some missing or mislabelled, "
        "3 a registry could not be asked.",
    )
    options.matrix(images)
    options.json_file(images)
    options.only(images)
    options.arch(images)
    images.set_defaults(func=cmd_images)

    drivers = verbs.add_parser(
        "drivers",
        help="does each driver version ship a prebuilt artifact per arch? (package registries only)",
        description="Ask PyPI, npm, Maven Central or the Go module proxy which version each driver pin resolves to "
        "and whether it ships a prebuilt artifact for each arch (a wheel, pure JS, a pure-Java jar, pure Go) or "
        "builds from source (and what the build needs), without any container. Without SPEC: the driver rows of "
        "the matrix. Exit 0 all prebuilt, 1 some build from source or have nothing for an arch, 2 a pin names no "
        "published version, 3 a registry could not be asked.",
    )
    drivers.add_argument("specs", nargs="*", metavar="SPEC", help="e.g. pypi:mysqlclient==2.2.* npm:mysql2@3")
    options.matrix(drivers)
    options.arch(drivers, help="default: the matrix's, else amd64,arm64")
    options.only(drivers, help="only these rows of the matrix")
    options.json_file(drivers)
    drivers.set_defaults(func=cmd_drivers)
    init = verbs.add_parser(
        "init",
        help="write a matrix for your own stack: a compose file, the running containers, or images",
        description="Map a stack onto matrix rows: known images onto their probes, backends from depends_on and "
        "the environment, every other service onto the generic `command` probe. The matrix validates; each row "
        "says why it was mapped so; what could not be decided is printed (docs/own-stack.md).",
    )
    source = init.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="compose", metavar="COMPOSE.yml", help="a docker compose file")
    source.add_argument("--from-host", action="store_true", help="the containers running on the engine")
    source.add_argument("--images", type=options.comma_list, metavar="IMAGE,...", help="a list of image references")
    init.add_argument(
        "--output",
        "-o",
        default=DEFAULT_MATRIX,
        metavar="PATH",
        help=f"where to write it ('-' = stdout; default ./{DEFAULT_MATRIX})",
    )
    init.add_argument("--force", action="store_true", help="replace the output file if it exists")
    options.arch(init, help="the matrix's arches (default: amd64,arm64)")
    init.set_defaults(func=cmd_init)

    plan = verbs.add_parser(
        "plan",
        help="the migration plan of a saved report, as tables to paste into a ticket",
        description="Per component and arch: ready, use TAG, upgrade to >= VERSION, emulate, or blocked; and which "
        "platform: pins of the compose file can go. Read from the report alone (Markdown on stdout).",
    )
    plan.add_argument("report", metavar="REPORT.json", help="a saved report ('-' = stdin)")
    plan.set_defaults(func=cmd_plan)

    validate = verbs.add_parser(
        "validate",
        help="check matrix files; errors as file:line:col",
        description="Validate matrix files without running anything.",
    )
    validate.add_argument("files", nargs="*", metavar="FILE", help=f"default: ./{DEFAULT_MATRIX}")
    validate.set_defaults(func=cmd_validate)

    cleanup = verbs.add_parser(
        "cleanup",
        help="remove containers, networks and volumes ecoready left",
        description="Remove resources of ecoready runs whose process is gone, on the local engine or on every "
        "[[hosts]] engine of a matrix. Exit 3 when an engine could not be reached.",
    )
    cleanup.add_argument("--all", action="store_true", help="also those of runs that still look alive")
    options.matrix(cleanup, help="clean every [[hosts]] engine of this matrix (default: the local engine)")
    cleanup.set_defaults(func=cmd_cleanup)

    doctor = verbs.add_parser(
        "doctor",
        help="is the engine reachable, which emulators, which CPU",
        description="Check the environment ecoready runs in, and whether each registry of the matrix "
        "answers. Results on stdout.",
    )
    options.matrix(doctor, help=f"the matrix whose registries to ask (default: {DEFAULT_MATRIX} if present)")
    doctor.set_defaults(func=cmd_doctor)

    lab = verbs.add_parser(
        "lab",
        help="the offline lab: build|up|down|status",
        description="Build and serve the lab's images from Debian packages.",
    )
    lab_verbs = lab.add_subparsers(title="lab verbs", metavar="ACTION", required=True)
    lab_build = lab_verbs.add_parser(
        "build",
        help="build base and component images, publish them",
        description="Build (only what changed) and publish to the local registry.",
    )
    options.arch(lab_build, help="default: amd64,arm64")
    options.only(lab_build, help="only these images ('gaps': the deliberate availability gaps)", metavar="NAME,...")
    lab_build.set_defaults(func=cmd_lab_build)
    lab_up = lab_verbs.add_parser("up", help="start the local registry", description="Start the lab registry.")
    lab_up.set_defaults(func=cmd_lab_up)
    lab_down = lab_verbs.add_parser("down", help="stop the local registry", description="Stop the lab registry.")
    lab_down.set_defaults(func=cmd_lab_down)
    lab_status = lab_verbs.add_parser(
        "status",
        help="what is built and served",
        description="Show the lab's registry and whether each image is built from its current recipe "
        "and published (exit 1 when any is not: `lab build` redoes it).",
    )
    lab_status.set_defaults(func=cmd_lab_status)
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


# -- verbs -------------------------------------------------------------------------------
def cmd_validate(args: argparse.Namespace) -> int:
    from ecoready.ui.queries import validate

    return validate(args.files or [DEFAULT_MATRIX])


def cmd_tui(args: argparse.Namespace) -> int:
    matrix = load_matrix(args)
    options = run_options(args, matrix)
    from ecoready.ui.tui.app import run_app

    return run_app(matrix, options, theme=getattr(args, "theme", None))


def cmd_run(args: argparse.Namespace) -> int:
    if not args.headless:
        return cmd_tui(args)
    matrix = load_matrix(args)
    chosen = outputs(args)
    options = run_options(args, matrix)
    from ecoready.ui.headless import run

    return run(matrix, options, chosen)


def _check_request(args: argparse.Namespace) -> CheckRequest:
    from ecoready.judge import history
    from ecoready.ui.headless import CheckRequest

    saved = getattr(args, "report", None)
    if saved and (args.only or args.arch or args.profile or args.concurrency or args.matrix):
        raise UsageError("--report: a saved report is judged as it is: drop --matrix and the run options")
    return CheckRequest(
        history=Path(args.history).expanduser() if args.history else history.default_dir(),
        webhook=args.webhook or os.environ.get(options.WEBHOOK_ENV) or None,
        webhook_option="--webhook" if args.webhook else options.WEBHOOK_ENV,
        outputs=outputs(args),
        saved=saved,
        matrix_path=matrix_path(args),
        options=None if saved else run_options(args, load_matrix(args)),
    )


def cmd_check(args: argparse.Namespace) -> int:
    from ecoready.ui.headless import check_once

    return check_once(_check_request(args))


def cmd_watch(args: argparse.Namespace) -> int:
    from ecoready.judge.check import parse_duration
    from ecoready.ui.headless import check_once, watch

    every = parse_duration(args.every)
    _check_request(args)  # a matrix or arguments wrong from the start: refused before the first round
    # the request is made anew each round: a watch picks up edits of the matrix
    return watch(every, args.runs, lambda: check_once(_check_request(args)))


def cmd_report(args: argparse.Namespace) -> int:
    from ecoready.ui.queries import report

    return report(args.reports, args.merge, outputs(args))


def cmd_diff(args: argparse.Namespace) -> int:
    from ecoready.ui.queries import diff

    writable(args.json)
    return diff(args.old, args.new, args.json, history=args.history)


def cmd_init(args: argparse.Namespace) -> int:
    from ecoready.ui.stack import init

    return init(
        compose=args.compose,
        from_host=args.from_host,
        images=args.images,
        output=args.output,
        force=args.force,
        arches=args.arch,
    )


def cmd_plan(args: argparse.Namespace) -> int:
    from ecoready.ui.queries import plan

    return plan(args.report)


def cmd_images(args: argparse.Namespace) -> int:
    matrix = load_matrix(args)
    only_known(args.only, matrix)
    arches_covered(args.arch, args.only, matrix)
    writable(args.json)
    from ecoready.ui.queries import images

    return images(matrix, args.json, args.only, args.arch)


def cmd_drivers(args: argparse.Namespace) -> int:
    from ecoready.ui.queries import drivers

    if args.specs and (args.only or args.matrix):
        raise UsageError("give driver SPECs or --matrix/--only, not both")
    matrix = None if args.specs else load_matrix(args)
    if matrix is not None:
        only_known(args.only, matrix)
    return drivers(args.specs, matrix, args.only, args.arch, args.json)


def cmd_cleanup(args: argparse.Namespace) -> int:
    from ecoready.domain.model import Host
    from ecoready.ui.ops import cleanup

    hosts: tuple[Host, ...] = (Host(name="local"),)
    if args.matrix:
        from ecoready.run.hosts import host_specs

        hosts = host_specs(load_matrix(args).hosts)
    return cleanup(hosts, everything=args.all, per_host=bool(args.matrix))


def cmd_doctor(args: argparse.Namespace) -> int:
    from ecoready.ui.ops import doctor

    if args.matrix is None and not Path(DEFAULT_MATRIX).is_file():
        return doctor()
    return doctor(load_matrix(args))


def cmd_lab_build(args: argparse.Namespace) -> int:
    from ecoready.ui.ops import lab_build

    return lab_build(args.arch, args.only)


def cmd_lab_up(args: argparse.Namespace) -> int:
    from ecoready.ui.ops import lab_up

    return lab_up()


def cmd_lab_down(args: argparse.Namespace) -> int:
    from ecoready.ui.ops import lab_down

    return lab_down()


def cmd_lab_status(args: argparse.Namespace) -> int:
    from ecoready.ui.ops import lab_status

    return lab_status()


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
