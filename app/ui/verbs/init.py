"""`ecoready init`: a matrix for the user's own stack, from a compose file, Kubernetes
manifests (a file or a folder), the containers running on the engine, or a list of
images. It writes a matrix that validates (checked before it is written), with a comment
per row saying why it was mapped so, and prints what it could not decide. The mapping is
app/stack/; this only reads, writes and says."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import UsageError
from ecoready.domain.text import inert
from ecoready.ui.args import DEFAULT_MATRIX
from ecoready.ui.console import eprint
from ecoready.ui.verbs import options

if TYPE_CHECKING:  # only for annotations: the verb imports what it uses
    from ecoready.stack.mapping import Row
    from ecoready.stack.services import Service

DEFAULT_ARCHES = ("amd64", "arm64")


def add(verbs: options.Verbs) -> None:
    parser = verbs.add_parser(
        "init",
        help="write a matrix for your own stack: a compose file, Kubernetes manifests, running containers, or images",
        description="Map a stack onto matrix rows: known images onto their probes, backends from depends_on and "
        "the environment (Kubernetes: Service names), every other service onto the generic `command` probe; arch pins "
        "(compose `platform:`, Kubernetes nodeSelector, node affinity, arch tolerations) kept for the migration plan. "
        "The matrix validates; each row says why it was mapped so; what could not be decided is printed "
        "(docs/own-stack.md). No cluster is contacted: feed it `kubectl get -o yaml` or `helm template` output.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--from",
        dest="compose",
        metavar="FILE_OR_FOLDER",
        help="a docker compose file, Kubernetes manifests (a file: multi-document, List, YAML or JSON; or a folder "
        "of them), a Helm chart folder (rendered with `helm template`) or a kustomization (file or folder: "
        "`kubectl kustomize`/`kustomize build`, else its resources and images: read by ecoready)",
    )
    source.add_argument("--from-host", action="store_true", help="the containers running on the engine")
    source.add_argument("--images", type=options.comma_list, metavar="IMAGE,...", help="a list of image references")
    source.add_argument(
        "--default",
        action="store_true",
        help="the default matrix shipped with ecoready (the MySQL ecosystem's upstream images), to edit",
    )
    parser.add_argument(
        "--output",
        "-o",
        default=DEFAULT_MATRIX,
        metavar="PATH",
        help=f"where to write it ('-' = stdout; default ./{DEFAULT_MATRIX})",
    )
    parser.add_argument(
        "--values",
        action="append",
        metavar="FILE",
        help="a values file for the Helm chart of --from, passed to `helm template` (repeat for more)",
    )
    parser.add_argument("--force", action="store_true", help="replace the output file if it exists")
    options.arch(parser, help="the matrix's arches (default: amd64,arm64)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ecoready.matrix.load import parse
    from ecoready.stack.mapping import map_services
    from ecoready.stack.services import from_images
    from ecoready.stack.toml_out import comment, matrix_text

    output, images = args.output, args.images
    if output != "-" and Path(output).exists() and not args.force:
        raise UsageError(f"{output} exists: add --force to replace it, or write elsewhere with -o")
    if args.default:
        return _write_default(output)
    read_notes: list[str] = []
    if args.compose:
        from ecoready.stack.source import read_source

        title, services, read_notes = read_source(Path(args.compose), args.values or ())
        how = f"--from {args.compose}" + "".join(f" --values {v}" for v in args.values or ())
    elif args.from_host:
        services, engine = _host_services()
        title, how = f"containers on {engine}", "--from-host"
    else:
        services, title, how = from_images(images or ()), "images", "--images " + ",".join(images or ())
    mapped = map_services(services)
    undecided = (*read_notes, *mapped.undecided)
    if not mapped.rows:
        for line in undecided:
            eprint(f"ecoready: {inert(line, 300)}")
        raise UsageError("nothing to write: no service has an image reference")
    header = (
        f"Written by `ecoready init {how}`: one row per service, each with why it was mapped so.",
        "Review it, then `ecoready validate` and `ecoready run` (docs/own-stack.md).",
    )
    text = matrix_text(title, args.arch or DEFAULT_ARCHES, mapped.rows, header)
    if undecided:
        text += "\n" + "\n".join(comment(line) for line in ("Not decided (also printed):", *undecided)) + "\n"
    matrix = parse(text, output if output != "-" else "<stdout>")  # what init writes validates
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from ecoready.report.files import write_atomic

        write_atomic(output, text)
    where = "stdout" if output == "-" else output
    count = len(matrix.components)
    eprint(f"ecoready: wrote {where}: {count} component{'s' if count != 1 else ''} ({_counts(mapped.rows)})")
    for line in undecided:
        eprint(f"ecoready: not decided: {inert(line, 300)}")
    return 0


def _write_default(output: str) -> int:
    """The shipped default matrix, as it is (its comments say what each part does)."""
    from ecoready.matrix.load import load, shipped_matrix

    text = shipped_matrix().read_text(encoding="utf-8")
    count = len(load(shipped_matrix(), {}).components)
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from ecoready.report.files import write_atomic

        write_atomic(output, text)
    where = "stdout" if output == "-" else output
    eprint(f"ecoready: wrote {where}: the default matrix shipped with ecoready ({count} components)")
    return 0


def _counts(rows: Sequence[Row]) -> str:
    """`1 command, 2 server`: the rows by probe kind."""
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row.probe] = kinds.get(row.probe, 0) + 1
    return ", ".join(f"{n} {probe}" for probe, n in sorted(kinds.items()))


def _host_services() -> tuple[list[Service], str]:
    """The containers running on the engine (DOCKER_HOST or the default socket)."""
    import asyncio

    async def work() -> tuple[list[Service], str]:
        from ecoready.engine.docker_host import DockerHost
        from ecoready.stack.services import from_containers

        host = await DockerHost.connect()
        try:
            facts = host.facts({})
            containers = await host.running()
        finally:
            await host.close()
        return from_containers(containers, facts.native_arch), host.url or "the local engine"

    return asyncio.run(work())
