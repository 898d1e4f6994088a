"""`ecoready lab build|up|down|status`: the offline lab's images, built from Debian packages
and served by a local registry (app/lab/)."""

from __future__ import annotations

import argparse

from ecoready.ui.console import eprint
from ecoready.ui.verbs import options


def add(verbs: options.Verbs) -> None:
    lab = verbs.add_parser(
        "lab",
        help="the offline lab: build|up|down|status",
        description="Build and serve the lab's images from Debian packages.",
    )
    actions = lab.add_subparsers(title="lab verbs", metavar="ACTION", required=True)
    parser = actions.add_parser(
        "build",
        help="build base and component images, publish them",
        description="Build (only what changed) and publish to the local registry.",
    )
    options.arch(parser, help="default: amd64,arm64")
    options.only(parser, help="only these images ('gaps': the deliberate availability gaps)", metavar="NAME,...")
    options.matrix(parser, help="only the images this matrix's rows run on (their backends' and the bench's too)")
    parser.add_argument(
        "--rows", type=options.comma_list, metavar="ID,...", help="with --matrix: only these rows' images"
    )
    parser.set_defaults(func=build)
    parser = actions.add_parser("up", help="start the local registry", description="Start the lab registry.")
    parser.set_defaults(func=up)
    parser = actions.add_parser("down", help="stop the local registry", description="Stop the lab registry.")
    parser.set_defaults(func=down)
    parser = actions.add_parser(
        "status",
        help="what is built and served",
        description="Show the lab's registry and whether each image is built from its current recipe "
        "and published (exit 1 when any is not: `lab build` redoes it).",
    )
    options.matrix(parser, help="only the images this matrix's rows run on")
    parser.set_defaults(func=status)


RESUME = "run `ecoready lab build` again: it keeps the images built already and resumes from this step"


def for_rows(args: argparse.Namespace) -> tuple[list[str] | None, bool]:
    """`--only` as `Lab.build` takes it: the images of `--matrix`'s rows (`--rows`) when
    given, and whether a gap row is among those rows."""
    from ecoready.domain.errors import UsageError

    if args.matrix is None:
        if args.rows:
            raise UsageError("--rows names rows of a matrix: give it with --matrix")
        return args.only, False
    if args.only:
        raise UsageError("--only and --matrix both choose the images: give one of them")
    from ecoready.lab.needs import needs
    from ecoready.matrix.load import load
    from ecoready.ui.args import only_known

    matrix = load(args.matrix)
    only_known(args.rows, matrix)
    wanted = needs(matrix, args.rows or [c.id for c in matrix.components])
    return [i.key for i in wanted.images] + (["hub"] if wanted.bases else []), wanted.gaps


def build(args: argparse.Namespace) -> int:
    import asyncio

    only, gap_rows = for_rows(args)
    if only == [] and not gap_rows:
        eprint("lab: the rows run on no lab image: nothing to build")
        return 0

    stopped: list[int] = []

    async def work() -> int:
        from ecoready.domain.errors import DeadlineExceeded, EngineError
        from ecoready.engine.docker_host import DockerHost
        from ecoready.lab.build import Lab
        from ecoready.lab.recipes import ARCHES
        from ecoready.ui.signals import catch_stop_signals, release_stop_signals

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def stop(signum: int) -> None:  # the first signal: cancel the build, its containers are removed
            if not stopped and task is not None:
                stopped.append(signum)
                task.cancel()

        catch_stop_signals(loop, stop)
        host = await DockerHost.connect()
        try:
            # what a killed build left (its one-off install containers) goes first
            await host.sweep(dead_owners=True)
            await Lab(host, eprint).build(arches=args.arch or ARCHES, only=only, gap_rows=gap_rows)
        except (DeadlineExceeded, EngineError) as exc:
            # every image is labelled with its recipe once built: a re-run skips those
            raise type(exc)(f"lab build: {exc.detail}; {RESUME}") from None
        finally:
            release_stop_signals(loop, ignore=bool(stopped))
            await host.close()
        return 0

    try:
        return asyncio.run(work())
    except asyncio.CancelledError:
        if not stopped:
            raise
        eprint(f"lab: build stopped by a signal; {RESUME}")
        return 128 + stopped[0]


def up(args: argparse.Namespace) -> int:
    from ecoready.lab.local_registry import registry_up
    from ecoready.lab.recipes import REGISTRY

    registry_up(eprint)
    eprint(f"lab: registry up on {REGISTRY}")
    return 0


def down(args: argparse.Namespace) -> int:
    from ecoready.lab.local_registry import registry_down

    if not registry_down(eprint):
        eprint("lab: registry was not running")
    return 0


def status(args: argparse.Namespace) -> int:
    import asyncio

    async def work() -> int:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.lab.status import status_lines

        wanted = None
        if args.matrix is not None:
            from ecoready.lab.needs import needs
            from ecoready.matrix.load import load

            matrix = load(args.matrix)
            wanted = needs(matrix, [c.id for c in matrix.components])
        host = await DockerHost.connect()
        try:
            lines, ok = await status_lines(host, wanted)
        finally:
            await host.close()
        for line in lines:
            print(line)
        return 0 if ok else 1

    return asyncio.run(work())
