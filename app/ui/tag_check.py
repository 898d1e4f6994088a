"""`ecoready check --tags` (and each round of `watch --tags`): the tag watch, registries
only. Ask every image reference of the matrix what its tag publishes (`registry/tag_watch.py`),
judge it against the history's records under the history's lock (`judge/tag_findings.py`,
`judge/tag_history.py`), say what changed and which arch pins can go (`report/migration.py`),
and tell the webhook when something is new."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ecoready.domain.errors import UsageError
from ecoready.domain.model import Component, ComponentOrigin
from ecoready.domain.tagwatch import TagSeen
from ecoready.matrix.document import Matrix
from ecoready.ui.console import eprint


@dataclass(frozen=True)
class TagCheckRequest:
    """One tag check as the command line asked for it."""

    history: Path
    webhook: str | None
    webhook_option: str  # how the URL was given, for error messages
    matrix_path: str
    behind_after: timedelta
    search_every: timedelta  # how often other tags are searched for an arch a tag lacks
    only: tuple[str, ...] = ()
    arches: tuple[str, ...] = ()


def components(matrix: Matrix, only: tuple[str, ...]) -> list[Component]:
    return [c for c in matrix.components if not only or c.id in only]


def look(
    matrix: Matrix, references: list[str], watched: list[str], searched: dict[str, set[str]]
) -> tuple[TagSeen, ...]:
    """Ask the registries (the connections opened while the modules load, as `images` does)."""
    from ecoready.registry.early import open_early

    settings = matrix.registry
    early = open_early(references, mirrors=settings.mirrors, insecure=settings.insecure)

    async def work() -> tuple[TagSeen, ...]:
        from ecoready.registry.client import RegistryClient
        from ecoready.registry.tag_watch import observe_all

        async with RegistryClient.for_settings(settings, early=early) as client:
            return await observe_all(client, references, watched, searched)

    return asyncio.run(work())


def tag_check_once(request: TagCheckRequest) -> int:
    """One tag check; its exit code (1 an arch lost, 3 a registry not asked, else 0)."""
    from ecoready.judge import history, tag_history
    from ecoready.judge.tag_findings import exit_code, judge, published_since, searched_recently
    from ecoready.judge.tag_words import payload, text, worth_posting
    from ecoready.judge.webhook import post, url_problem
    from ecoready.matrix.load import load
    from ecoready.report.migration import drop_pin_text, pins_published

    history.prepare(request.history)
    problem = url_problem(request.webhook) if request.webhook else None
    if problem:
        raise UsageError(f"{request.webhook_option}: {problem}")
    matrix = load(request.matrix_path)  # read every time: a watch picks up edits
    chosen = components(matrix, request.only)
    watched = list(request.arches or matrix.arches)
    # read without the lock (the file is replaced whole): which tag searches can wait
    asked = datetime.now(UTC).replace(microsecond=0)
    records = tag_history.read(request.history, [], aside=False)
    recent = searched_recently(records, asked, request.search_every)
    seen = look(matrix, [c.image for c in chosen], watched, recent)
    problems: list[str] = []
    with tag_history.locked(request.history):
        records = tag_history.read(request.history, problems)
        judged = judge(records, seen, watched, asked, request.behind_after)
        tag_history.write(request.history, judged.records)
    for line in problems:
        eprint(f"ecoready: tag history: {line}")
    origins = [ComponentOrigin(c.id, c.image, c.service, c.platform, c.pinned_at) for c in chosen]
    pins = [drop_pin_text(p) for p in pins_published(origins, published_since(judged.records), watched)]
    sys.stdout.write(text(judged, request.history, len(seen), pins))
    sys.stdout.flush()
    posted = False
    if request.webhook and worth_posting(judged):
        failure = asyncio.run(post(request.webhook, payload(judged, matrix.path, pins)))
        if failure:
            eprint(f"ecoready: {failure} (the check goes on)")
        posted = not failure
    told = " and told the webhook" if posted else ""
    many = "s" if len(seen) != 1 else ""
    eprint(f"ecoready: tags of {len(seen)} reference{many} recorded in {request.history / tag_history.FILE}{told}")
    return exit_code(judged)
