"""The verbs that look something up and print it: `validate` (matrix files), `images`
(registries only), `drivers` (package registries only), `report` (re-render saved
reports), `diff` (two saved reports), `plan` (the migration plan of a saved report).
Results go to stdout, diagnostics to stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence

from ecoready.domain.errors import ConfigError, ReportError, UsageError
from ecoready.matrix.document import Matrix
from ecoready.matrix.load import load
from ecoready.ui.console import eprint, say


def validate(files: Sequence[str]) -> int:
    """Every problem of every file as `file:line:col: message`; 2 when any has one."""
    failed = 0
    for file in files:
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
    out = []
    for component in matrix.components:
        image = component.image
        if "@" in image:
            continue  # pinned by digest
        name = image.rsplit("/", 1)[-1]
        tag = name.split(":", 1)[1] if ":" in name else ""
        if tag in ("", "latest"):
            out.append(f"component {component.id!r}: image {image!r} floats ({tag or 'no tag'}): pin a version tag")
    return out


def images(matrix: Matrix, json_path: str | None, only: Sequence[str] | None, arches: Sequence[str] | None) -> int:
    """Is each component's image published for each arch? A table (and/or JSON)."""
    import asyncio

    async def work() -> int:
        from ecoready.registry.availability import check_images, exit_code
        from ecoready.registry.client import RegistryClient
        from ecoready.report.files import write_output
        from ecoready.report.images_table import render_json, render_table

        async with RegistryClient(
            mirror=matrix.registry.mirror,
            insecure=matrix.registry.insecure,
            wait_budget=matrix.registry.rate_limit_wait,
        ) as client:
            report = await check_images(matrix, client, only=only, arches=arches)
        unwritten = None
        if json_path:
            try:
                write_output(json_path, render_json(report))
            except ReportError as exc:
                unwritten = exc  # the table still shows what was found
        if json_path != "-":
            sys.stdout.write(render_table(report))
            sys.stdout.flush()
        for note in report.notes:
            eprint(f"ecoready: note: {note}")
        if unwritten is not None:
            raise unwritten
        return exit_code(report)

    return asyncio.run(work())


def drivers(
    specs: Sequence[str],
    matrix: Matrix | None,
    only: Sequence[str] | None,
    arches: Sequence[str] | None,
    json_path: str | None,
) -> int:
    """Does each driver pin ship a prebuilt artifact for each arch? The pins given (each
    checked before anything is asked), or the driver rows of `matrix`. A table (and/or JSON)."""
    import asyncio

    from ecoready.domain.drivers import DriverSpec, parse_driver
    from ecoready.matrix.kinds import KINDS

    pins: list[tuple[str, DriverSpec]] = []
    for text in specs:
        try:
            pins.append(("", parse_driver(text)))
        except ValueError as exc:
            raise UsageError(f"{text!r}: {exc}") from None
    for component in matrix.components if matrix is not None else ():
        option = KINDS[component.probe].installs
        if option and component.options.get(option) and (not only or component.id in only):
            pins.append((component.id, parse_driver(str(component.options[option]))))
    if not pins:
        raise UsageError(f"{matrix.path if matrix else 'the matrix'} has no driver rows (a connector's `driver`)")
    arches = arches or (matrix.arches if matrix is not None else ("amd64", "arm64"))

    async def work() -> int:
        from ecoready.packages.check import check_drivers, exit_code
        from ecoready.packages.client import PackageClient
        from ecoready.report.drivers_table import render_json, render_table
        from ecoready.report.files import write_output

        async with PackageClient() as client:
            result = await check_drivers(pins, arches, client)
        if json_path:
            write_output(json_path, render_json(result))
        if json_path != "-":
            sys.stdout.write(render_table(result))
            sys.stdout.flush()
        for check in result.checks:
            if check.config_error:
                eprint(f"ecoready: error: {check.row + ': ' if check.row else ''}{check.error}")
        return exit_code(result)

    return asyncio.run(work())


def report(paths: Sequence[str], merge: bool, outputs: Mapping[str, str]) -> int:
    """Re-render saved reports (merged with `merge`); without outputs, print the grid."""
    from ecoready.report.load import load_report
    from ecoready.report.merge import merge as merge_reports
    from ecoready.report.summary import render_summary
    from ecoready.ui.headless import deliver

    if len(paths) > 1 and not merge:
        eprint("ecoready: error: several reports given: add --merge to merge them into one")
        return 2
    loaded = [(path, load_report(path)) for path in paths]
    result = merge_reports(loaded) if merge else loaded[0][1]
    if not outputs:
        print(render_summary(result))
        return 0
    return 0 if deliver(result, outputs, keep=False) else ReportError.exit_code


def diff(old: str | None, new: str | None, json_path: str | None, history: str | None = None) -> int:
    """What changed between two saved reports (without them: the last two of the history);
    1 when anything regressed."""
    from pathlib import Path

    from ecoready.judge import history as stored_reports
    from ecoready.judge.diff import diff as diff_reports
    from ecoready.judge.diff import diff_dict, diff_text
    from ecoready.report.files import write_output
    from ecoready.report.load import load_report

    if old is None or new is None:
        if old is not None:
            raise UsageError("diff takes two reports (OLD.json NEW.json), or none for the last two of the history")
        folder = Path(history).expanduser() if history else stored_reports.default_dir()
        stored = stored_reports.entries(folder)
        if len(stored) < 2:
            raise UsageError(f"{folder}: {len(stored)} report(s) in the history: give OLD.json and NEW.json")
        old, new = str(stored[-2]), str(stored[-1])
    change = diff_reports(load_report(old), load_report(new))
    stream = sys.stderr if json_path == "-" else sys.stdout
    stream.write(diff_text(change))
    stream.flush()
    if json_path:
        write_output(json_path, json.dumps(diff_dict(change), indent=2, ensure_ascii=False))
    return 1 if change.regressed else 0


def plan(path: str) -> int:
    """The migration plan of a saved report, as Markdown tables (report/markdown.py)."""
    from ecoready.report.common import run_line
    from ecoready.report.load import load_report
    from ecoready.report.markdown import md, migration

    saved = load_report(path)
    if not saved.migration.origins:
        eprint(f"ecoready: error: {path}: no migration plan: the run that wrote it predates it (run again)")
        return 2
    print("\n".join([f"# Migration plan: {md(saved.matrix)}", "", md(run_line(saved)), "", *migration(saved)]).rstrip())
    return 0
