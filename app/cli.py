"""Command line: verbs, arguments, exit codes. Heavy modules (docker, httpx, Textual, Rich)
are imported inside the verbs that need them, so `--help` and `validate` stay instant.

Exit codes: 0 all requested cells ready; 1 some not ready; 2 usage or config error;
3 environment error (docker unreachable, no emulator and no host for an arch, a registry
that could not be asked); 130/143 when interrupted by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

# asyncio, like the heavy modules, is imported inside the verbs that use it: `--help` and
# `validate` stay fast (bench/startup.py).
from app import __version__
from app.errors import ConfigError, EcoreadyError, ReportError, UsageError

if TYPE_CHECKING:  # only for annotations: the verbs import what they use
    from app.config import Matrix
    from app.model import Report
    from app.session import RunOptions

if TYPE_CHECKING:
    from app.eventlog import EventLog

DEFAULT_MATRIX = "matrix.toml"
WEBHOOK_ENV = "ECOREADY_WEBHOOK_URL"
OUTPUT_FORMATS = ("json", "md", "html", "junit")


def eprint(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def _csv(text: str) -> list[str]:
    items = [p.strip() for p in text.split(",") if p.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def _arches(text: str) -> list[str]:
    from app.model import normalize_arch

    out = []
    for item in _csv(text):
        arch = normalize_arch(item)
        if arch is None:
            raise argparse.ArgumentTypeError(f"unknown architecture {item!r} (amd64, arm64, ppc64le, s390x)")
        out.append(arch)
    return out


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError("must be between 1 and 256")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ecoready",
        description="Which parts of your MySQL-ecosystem stack are ready on arm64 and amd64, checked for real. "
        "Without a verb: the interactive grid on ./matrix.toml.",
    )
    parser.add_argument("--version", action="version", version=f"ecoready {__version__}")
    parser.add_argument("--matrix", "-m", default=None, help=f"matrix file (default: ./{DEFAULT_MATRIX})")
    parser.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")
    parser.set_defaults(func=cmd_tui)
    verbs = parser.add_subparsers(title="verbs", metavar="VERB")

    run = verbs.add_parser(
        "run",
        help="run the matrix (the TUI, or --headless for scripts and CI)",
        description="Run every cell of the matrix: image, start, smoke (and bench).",
    )
    run.add_argument("--matrix", "-m", default=None, help=f"matrix file (default: ./{DEFAULT_MATRIX})")
    run.add_argument("--headless", action="store_true", help="no TUI: progress on stderr, report files")
    _add_outputs(run)
    _add_selection(run)
    run.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")
    run.set_defaults(func=cmd_run)

    check = verbs.add_parser(
        "check",
        help="run headless, store the report, diff it with the previous one, tell a webhook",
        description="The scheduled readiness check: run the matrix headless, store the report in the history "
        "folder, print what changed since the previous stored report, and POST the change to a webhook. "
        "Exit 1 when readiness regressed, 3 when the tool or infrastructure failed a cell, else 0.",
    )
    _add_check_options(check)
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
    watch.add_argument("--runs", type=_positive_int, metavar="N", help="stop after N checks (default: never)")
    _add_check_options(watch)
    watch.set_defaults(func=cmd_watch)

    report = verbs.add_parser(
        "report",
        help="re-render a saved report (or --merge several) as JSON, Markdown, HTML, JUnit",
        description="Read saved JSON reports and write them in other formats. Without an output option, print "
        "the grid. Several reports (e.g. from a native arm64 and a native amd64 runner) need --merge.",
    )
    report.add_argument("reports", nargs="+", metavar="REPORT.json", help="saved report(s); '-' = stdin")
    report.add_argument("--merge", action="store_true", help="merge the reports into one")
    _add_outputs(report)
    report.set_defaults(func=cmd_report)

    diff = verbs.add_parser(
        "diff",
        help="what changed between two saved reports (exit 1 on a regression)",
        description="Print the cells that changed status, new or lost arches and cells, and bench changes "
        "beyond noise (more than twice the coefficient of variation). Exit 1 when anything regressed.",
    )
    diff.add_argument("old", metavar="OLD.json")
    diff.add_argument("new", metavar="NEW.json")
    diff.add_argument("--json", metavar="PATH", help="also write the structured diff here ('-' = stdout)")
    diff.set_defaults(func=cmd_diff)
    images = verbs.add_parser(
        "images",
        help="is each image published for each arch? (registries only, no containers)",
        description="Ask the registries whether every component's image is published for every arch, "
        "without pulling or starting anything. Exit 0 all available, 1 some missing or mislabelled, "
        "3 a registry could not be asked.",
    )
    images.add_argument("--matrix", "-m", default=None, help=f"matrix file (default: ./{DEFAULT_MATRIX})")
    images.add_argument("--json", metavar="PATH", help="write the JSON here ('-' = stdout, then no table)")
    images.add_argument("--only", type=_csv, metavar="ID,...", help="only these component ids")
    images.add_argument("--arch", type=_arches, metavar="ARCH,...", help="only these architectures")
    images.set_defaults(func=cmd_images)

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
    cleanup.add_argument(
        "--matrix", "-m", default=None, help="clean every [[hosts]] engine of this matrix (default: the local engine)"
    )
    cleanup.set_defaults(func=cmd_cleanup)

    doctor = verbs.add_parser(
        "doctor",
        help="is the engine reachable, which emulators, which CPU",
        description="Check the environment ecoready runs in.",
    )
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
    lab_build.add_argument("--arch", type=_arches, metavar="ARCH,...", help="default: amd64,arm64")
    lab_build.add_argument(
        "--only", type=_csv, metavar="NAME,...", help="only these images ('gaps': the deliberate availability gaps)"
    )
    lab_build.set_defaults(func=cmd_lab_build)
    lab_up = lab_verbs.add_parser("up", help="start the local registry", description="Start the lab registry.")
    lab_up.set_defaults(func=cmd_lab_up)
    lab_down = lab_verbs.add_parser("down", help="stop the local registry", description="Stop the lab registry.")
    lab_down.set_defaults(func=cmd_lab_down)
    lab_status = lab_verbs.add_parser(
        "status", help="what is built and served", description="Show the lab's images and registry."
    )
    lab_status.set_defaults(func=cmd_lab_status)
    return parser


def _add_outputs(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("report files ('-' = stdout, for one of them)")
    group.add_argument("--json", metavar="PATH", help="the JSON report (docs/report-schema.json)")
    group.add_argument("--md", metavar="PATH", help="Markdown: the grid, what failed, benchmarks")
    group.add_argument("--html", metavar="PATH", help="one self-contained HTML file")
    group.add_argument("--junit", metavar="PATH", help="JUnit XML: one testcase per cell")


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", type=_csv, metavar="ID,...", help="only these component ids")
    parser.add_argument("--arch", type=_arches, metavar="ARCH,...", help="only these architectures")
    parser.add_argument("--profile", choices=["smoke", "quick", "full"], help="benchmark depth (default: the matrix's)")
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        metavar="N",
        help="cells at once on each host (default: [[hosts]] concurrency, else from CPUs)",
    )


def _add_check_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--matrix", "-m", default=None, help=f"matrix file (default: ./{DEFAULT_MATRIX})")
    parser.add_argument(
        "--history",
        metavar="DIR",
        help="where reports are stored (default: $XDG_DATA_HOME/ecoready/history or ~/.local/share/ecoready/history)",
    )
    parser.add_argument(
        "--webhook",
        metavar="URL",
        help=f"POST what changed here (Slack-compatible); default: ${WEBHOOK_ENV}, which keeps the URL out of ps",
    )
    _add_selection(parser)
    _add_outputs(parser)


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


def _matrix_path(args: argparse.Namespace) -> str:
    return args.matrix or DEFAULT_MATRIX


# -- verbs -------------------------------------------------------------------------------
def cmd_validate(args: argparse.Namespace) -> int:
    from app.config import load

    files = args.files or [DEFAULT_MATRIX]
    failed = 0
    for file in files:
        try:
            matrix = load(file)
        except ConfigError as exc:
            eprint(str(exc))
            failed += 1
            continue
        eprint(f"{file}: ok ({len(matrix.components)} components, arches {', '.join(matrix.arches)})")
    return 2 if failed else 0


def _outputs(args: argparse.Namespace) -> dict[str, str]:
    """format -> path for the report files asked for; at most one may be stdout."""
    outputs = {fmt: getattr(args, fmt) for fmt in OUTPUT_FORMATS if getattr(args, fmt, None)}
    if sum(1 for path in outputs.values() if path == "-") > 1:
        raise UsageError("only one report can go to stdout ('-')")
    return outputs


def write_reports(report: Report, outputs: dict[str, str]) -> None:
    from app.files import write_output
    from app.report import renderer

    for fmt, path in outputs.items():
        write_output(path, renderer(fmt)(report))


def _run_options(args: argparse.Namespace, matrix: Matrix) -> RunOptions:
    from app.model import Profile
    from app.session import RunOptions

    if args.only:
        unknown = [i for i in args.only if i not in {c.id for c in matrix.components}]
        if unknown:
            raise UsageError(f"--only names unknown component(s) of {matrix.path}: {', '.join(unknown)}")
    return RunOptions(
        only=args.only,
        arches=args.arch,
        profile=Profile(args.profile) if args.profile else None,
        concurrency=args.concurrency,
        history=Path(args.history).expanduser() if getattr(args, "history", None) else None,
    )


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    if not args.headless:
        return cmd_tui(args)
    from app.config import load

    matrix = load(_matrix_path(args))
    outputs = _outputs(args)
    options = _run_options(args, matrix)
    _report, code = asyncio.run(run_headless(matrix, options, outputs))
    return code


async def run_headless(matrix: Matrix, options: RunOptions, outputs: dict[str, str]) -> tuple[Report, int]:
    """Run the matrix with progress on stderr; write `outputs` even when the run is stopped.
    Returns the report and the exit code (128 + signal number when stopped by a signal)."""
    import asyncio

    from app.events import Event
    from app.session import Session, exit_code
    from app.state import empty_report, reduce
    from app.tui.progress import make_progress

    report = empty_report()
    progress = make_progress(sys.stderr)

    event_log = _open_event_log()

    def emit(event: Event) -> None:
        nonlocal report
        report = reduce(report, event)
        if event_log is not None:
            event_log.write(event)
        progress.update(event, report)

    session = Session(matrix, options, emit)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        progress.note(f"ecoready: {signal.Signals(signum).name}: stopping, cleaning up...")
        if task is not None:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        try:
            await session.open()
            await session.run()
        except asyncio.CancelledError:
            if not received:
                raise
        finally:
            await asyncio.shield(session.close())
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            progress.stop(report)
    finally:
        if report.run_id and outputs:
            write_reports(report, outputs)
    if received:
        return report, 128 + received[0]
    return report, exit_code([c.status for c in report.cells.values()])


def _check_once(args: argparse.Namespace) -> int:
    """One scheduled check (shared by `check` and each round of `watch`)."""
    import asyncio

    from app import history
    from app.check import check_report
    from app.config import load
    from app.webhook import url_problem

    outputs = _outputs(args)
    directory = Path(args.history).expanduser() if args.history else history.default_dir()
    history.prepare(directory)
    webhook = args.webhook or os.environ.get(WEBHOOK_ENV) or None
    problem = url_problem(webhook) if webhook else None
    if problem:
        raise UsageError(f"{'--webhook' if args.webhook else WEBHOOK_ENV}: {problem}")
    saved = getattr(args, "report", None)
    if saved:
        from app.report.load import load_report

        if args.only or args.arch or args.profile or args.concurrency or args.matrix:
            raise UsageError("--report: a saved report is judged as it is: drop --matrix and the run options")
        report = load_report(saved)
        if report.interrupted or report.finished_at is None:
            raise ReportError(f"{saved}: the run did not finish: not a report to compare others with")
        write_reports(report, outputs)
    else:
        matrix = load(_matrix_path(args))  # read every time: a watch picks up edits
        options = _run_options(args, matrix)
        ran, code = asyncio.run(run_headless(matrix, options, outputs))
        if code >= 128 or ran.interrupted or not ran.run_id:
            eprint("ecoready: check stopped before the end: report not stored in the history")
            return code
        report = ran
    outcome = check_report(report, directory, webhook, eprint)
    # stdout carries the change, unless a report was asked for on stdout
    stream = sys.stderr if "-" in outputs.values() else sys.stdout
    stream.write(outcome.text)
    stream.flush()
    eprint(f"ecoready: stored {outcome.stored}" + (" and told the webhook" if outcome.posted else ""))
    return outcome.code


def cmd_check(args: argparse.Namespace) -> int:
    return _check_once(args)


def cmd_watch(args: argparse.Namespace) -> int:
    from app.check import describe, parse_duration, watch_loop

    every = parse_duration(args.every)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    def between_checks() -> None:
        # a run installs its own handlers and resets them when it ends: between checks,
        # SIGTERM/SIGHUP just end the watch (SIGINT is KeyboardInterrupt already)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, stop)

    def check_once() -> int:
        try:
            return _check_once(args)
        finally:
            between_checks()

    between_checks()
    eprint(f"ecoready: watch: a check every {describe(every)}" + (f", {args.runs} times" if args.runs else ""))
    return watch_loop(check_once, every, eprint, runs=args.runs, sleep=time.sleep)


def cmd_report(args: argparse.Namespace) -> int:
    from app.report.load import load_report
    from app.report.merge import merge
    from app.summary import render_summary

    if len(args.reports) > 1 and not args.merge:
        eprint("ecoready: error: several reports given: add --merge to merge them into one")
        return 2
    outputs = _outputs(args)
    loaded = [(path, load_report(path)) for path in args.reports]
    report = merge(loaded) if args.merge else loaded[0][1]
    if not outputs:
        print(render_summary(report))
        return 0
    write_reports(report, outputs)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    import json

    from app.diff import diff, diff_dict, diff_text
    from app.files import write_output
    from app.report.load import load_report

    change = diff(load_report(args.old), load_report(args.new))
    stream = sys.stderr if args.json == "-" else sys.stdout
    stream.write(diff_text(change))
    stream.flush()
    if args.json:
        write_output(args.json, json.dumps(diff_dict(change), indent=2, ensure_ascii=False))
    return 1 if change.regressed else 0


def _open_event_log() -> EventLog | None:
    """`ECOREADY_EVENT_LOG=PATH`: append every event of the run as a JSON line."""
    from app.eventlog import EventLog

    path = os.environ.get("ECOREADY_EVENT_LOG")
    if not path:
        return None
    try:
        return EventLog(open(path, "a", encoding="utf-8"))
    except OSError as exc:
        raise EcoreadyError(f"ECOREADY_EVENT_LOG={path}: {exc.strerror}") from None


def cmd_images(args: argparse.Namespace) -> int:
    import asyncio

    from app.config import load

    matrix = load(_matrix_path(args))
    if args.only:
        unknown = [i for i in args.only if i not in {c.id for c in matrix.components}]
        if unknown:
            eprint(f"ecoready: error: --only names unknown component(s): {', '.join(unknown)}")
            return 2

    async def work() -> int:
        from app.availability import check_images, exit_code
        from app.files import write_output
        from app.registry import RegistryClient
        from app.report.images import render_json, render_table

        async with RegistryClient(mirror=matrix.registry.mirror, insecure=matrix.registry.insecure) as client:
            report = await check_images(matrix, client, only=args.only, arches=args.arch)
        if args.json:
            write_output(args.json, render_json(report))
        if args.json != "-":
            sys.stdout.write(render_table(report))
            sys.stdout.flush()
        for note in report.notes:
            eprint(f"ecoready: note: {note}")
        return exit_code(report)

    return asyncio.run(work())


def cmd_tui(args: argparse.Namespace) -> int:
    from app.config import load
    from app.model import Profile
    from app.session import RunOptions
    from app.tui.app import run_app

    matrix = load(_matrix_path(args))
    options = RunOptions(
        only=getattr(args, "only", None),
        arches=getattr(args, "arch", None),
        profile=Profile(args.profile) if getattr(args, "profile", None) else None,
        concurrency=getattr(args, "concurrency", None),
    )
    return run_app(matrix, options, theme=getattr(args, "theme", None))


def cmd_cleanup(args: argparse.Namespace) -> int:
    import asyncio

    from app.model import Host

    hosts: tuple[Host, ...] = (Host(name="local"),)
    if args.matrix:
        from app.config import load
        from app.hosts import host_specs

        hosts = host_specs(load(args.matrix).hosts)

    async def work() -> int:
        from app.hosts import connect_all

        engines = await connect_all(hosts)
        code, removed = 0, 0
        try:
            for engine in engines:
                where = f" on host {engine.spec.name}" if args.matrix else ""
                if engine.host is None:
                    eprint(f"ecoready: error: {f'host {engine.spec.name}: ' if args.matrix else ''}{engine.error}")
                    code = 3
                    continue
                try:
                    swept = await engine.host.sweep(dead_owners=True, everything=args.all)
                except EcoreadyError as exc:
                    eprint(f"ecoready: error: host {engine.spec.name}: {exc}")
                    code = 3
                    continue
                removed += swept.total
                kinds = (("container", swept.containers), ("network", swept.networks), ("volume", swept.volumes))
                for kind, names in kinds:
                    for name in names:
                        eprint(f"removed {kind} {name}{where}")
        finally:
            for engine in engines:
                if engine.host is not None:
                    await engine.host.close()
        if not removed and code == 0:
            eprint("ecoready: nothing to clean up")
        return code

    return asyncio.run(work())


def cmd_doctor(args: argparse.Namespace) -> int:
    import asyncio

    async def work() -> int:
        from app.docker_host import DockerHost
        from app.platform import cpu_model, emulators, host_arch, page_size

        problems = 0
        eprint(f"ecoready {__version__}, python {sys.version.split()[0]}")
        eprint(f"host: {host_arch()} ({cpu_model() or 'unknown CPU'}), {os.cpu_count()} CPUs, page size {page_size()}")
        found = emulators()
        for arch, emulator in sorted(found.items()):
            problem = emulator.problem()
            state = "ok" if problem is None else f"PROBLEM: {problem}"
            eprint(
                f"emulator {arch}: {emulator.version or emulator.interpreter} flags {emulator.flags or '-'}: {state}"
            )
            problems += problem is not None
        if not found:
            eprint("emulators: none registered (only the native arch can run; `make setup` registers qemu-aarch64)")
        try:
            host = await DockerHost.connect()
        except EcoreadyError as exc:
            eprint(f"docker: {exc}")
            return 3
        try:
            facts = await host.facts({})
            eprint(
                f"docker: engine {facts.docker_version}, API {facts.api_version}, native {facts.native_arch}, "
                f"{facts.cpus} CPUs, {facts.memory_bytes / 2**30:.1f} GiB"
            )
        finally:
            await host.close()
        usage = os.statvfs("/var/lib/docker" if Path("/var/lib/docker").exists() else "/")
        eprint(f"disk: {usage.f_bavail * usage.f_frsize / 2**30:.1f} GiB free for docker")
        return 1 if problems else 0

    return asyncio.run(work())


def _lab_log(text: str) -> None:
    eprint(text)


def cmd_lab_build(args: argparse.Namespace) -> int:
    import asyncio

    async def work() -> int:
        from app.docker_host import DockerHost
        from app.lab import ARCHES, Lab

        host = await DockerHost.connect()
        try:
            await Lab(host, _lab_log).build(arches=args.arch or ARCHES, only=args.only)
        finally:
            await host.close()
        return 0

    return asyncio.run(work())


def cmd_lab_up(args: argparse.Namespace) -> int:
    from app.lab import REGISTRY, registry_up

    registry_up(_lab_log)
    eprint(f"lab: registry up on {REGISTRY}")
    return 0


def cmd_lab_down(args: argparse.Namespace) -> int:
    from app.lab import registry_down

    if not registry_down(_lab_log):
        eprint("lab: registry was not running")
    return 0


def cmd_lab_status(args: argparse.Namespace) -> int:
    import asyncio

    async def work() -> int:
        from app.docker_host import DockerHost
        from app.lab import status_lines

        host = await DockerHost.connect()
        try:
            lines, ok = await status_lines(host)
        finally:
            await host.close()
        for line in lines:
            print(line)
        return 0 if ok else 1

    return asyncio.run(work())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
