"""Command line: verbs, arguments, exit codes. Heavy modules (docker, httpx, Textual, Rich)
are imported inside the verbs that need them, so `--help` and `validate` stay instant.

Exit codes: 0 all requested cells ready; 1 some not ready; 2 usage or config error;
3 environment error (docker unreachable, no emulator and no host for an arch, a registry
that could not be asked); 130/143 when interrupted by SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from app import __version__
from app.errors import ConfigError, EcoreadyError

DEFAULT_MATRIX = "matrix.toml"


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
    run.add_argument("--json", metavar="PATH", help="write the JSON report here ('-' = stdout)")
    run.add_argument("--only", type=_csv, metavar="ID,...", help="only these component ids")
    run.add_argument("--arch", type=_arches, metavar="ARCH,...", help="only these architectures")
    run.add_argument("--profile", choices=["smoke", "quick", "full"], help="benchmark depth (default: the matrix's)")
    run.add_argument("--concurrency", type=_positive_int, metavar="N", help="cells at once (default: from CPUs)")
    run.add_argument("--theme", choices=["dark", "light"], help="TUI colours (default: $ECOREADY_THEME or dark)")
    run.set_defaults(func=cmd_run)

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
        description="Remove resources of ecoready runs whose process is gone.",
    )
    cleanup.add_argument("--all", action="store_true", help="also those of runs that still look alive")
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
    lab_build.add_argument("--only", type=_csv, metavar="NAME,...", help="only these images")
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


def cmd_run(args: argparse.Namespace) -> int:
    if not args.headless:
        return cmd_tui(args)
    from app.config import load
    from app.model import Profile
    from app.session import RunOptions

    matrix = load(_matrix_path(args))
    options = RunOptions(
        only=args.only,
        arches=args.arch,
        profile=Profile(args.profile) if args.profile else None,
        concurrency=args.concurrency,
    )
    if args.only:
        unknown = [i for i in args.only if i not in {c.id for c in matrix.components}]
        if unknown:
            eprint(f"ecoready: error: --only names unknown component(s): {', '.join(unknown)}")
            return 2
    return asyncio.run(_headless(matrix, options, args.json))


async def _headless(matrix: object, options: object, json_path: str | None) -> int:
    from app.config import Matrix
    from app.events import Event
    from app.files import write_output
    from app.report import json as json_report
    from app.session import RunOptions, Session, exit_code
    from app.state import empty_report, reduce
    from app.tui.progress import make_progress

    assert isinstance(matrix, Matrix) and isinstance(options, RunOptions)
    report = empty_report()
    progress = make_progress(sys.stderr)

    def emit(event: Event) -> None:
        nonlocal report
        report = reduce(report, event)
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
        if report.run_id and json_path:
            write_output(json_path, json_report.render(report))
    if received:
        return 128 + received[0]
    return exit_code([c.status for c in report.cells.values()])


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
    async def work() -> int:
        from app.docker_host import DockerHost

        host = await DockerHost.connect()
        try:
            swept = await host.sweep(dead_owners=True, everything=args.all)
        finally:
            await host.close()
        if not swept.total:
            eprint("ecoready: nothing to clean up")
        for kind, names in (("container", swept.containers), ("network", swept.networks), ("volume", swept.volumes)):
            for name in names:
                eprint(f"removed {kind} {name}")
        return 0

    return asyncio.run(work())


def cmd_doctor(args: argparse.Namespace) -> int:
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
