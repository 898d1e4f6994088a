"""Each registry as this run knows it, and the manners it asks of us. Its status as shown
(requests, rate limit, time waited, last failure), and whether and when it may be asked:

- a 429 with `Retry-After` (seconds or an HTTP date) is waited for and the request sent
  again, every request to that registry pausing meanwhile, within a budget per registry
  and run (`[registry] rate_limit_wait`, 10 s); past it, `rate limited` naming the time it
  would have needed, and the registry is left alone until the time it asked for;
- once the registry says `RateLimit-Remaining: 0`, no GET of a manifest (which Docker Hub
  counts) is sent to it: each would be refused; HEADs (not counted) still go;
- a registry is down (left alone for a while, its lookups failing at once) when connecting
  to it fails, or when three repositories in a row got no answer in time; a request that
  hangs for one repository fails that repository's lookups only.

Nothing here sends a request: `transport.py` asks these before each and tells them after.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from ecoready.domain.errors import RegistryError
from ecoready.domain.images import RegistryStatus
from ecoready.registry.headers import parse_rate_limit, source_kind

DOWN_FOR = 30.0  # seconds a registry that failed is not asked again (its cells fail fast)
HUNG_REPOSITORIES = 3  # repositories in a row without an answer in time: the registry is down


class Manners:
    """The registries of one run (by name for their statuses, by API host for the rest)."""

    def __init__(self, *, wait_budget: float, on_status: Callable[[RegistryStatus], None] | None = None) -> None:
        self.wait_budget = wait_budget
        self.on_status = on_status
        self._status: dict[str, RegistryStatus] = {}
        self._down: dict[str, tuple[float, str]] = {}
        self._hung: dict[tuple[str, str], tuple[float, str]] = {}  # (host, repository) without an answer
        self._hung_in_a_row: dict[str, set[str]] = {}  # host -> repositories since its last answer
        self._resume_at: dict[str, float] = {}  # host -> when it asked to be asked again (429)
        self._held: dict[str, tuple[float, str]] = {}  # host -> until, why: over the wait budget

    # -- status ---------------------------------------------------------------------
    def statuses(self) -> tuple[RegistryStatus, ...]:
        """Every registry asked so far, in order of first contact."""
        return tuple(self._status.values())

    def update(self, registry: str, **changes: Any) -> None:
        old = self._status.get(registry)
        new = replace(old or RegistryStatus(registry), **changes)
        self._status[registry] = new
        if self.on_status is not None and (old is None or replace(old, requests=new.requests) != new):
            self.on_status(new)  # a change worth showing: first contact, rate limit, failure

    def count(self, registry: str) -> None:
        old = self._status.get(registry)
        self.update(registry, requests=(old.requests if old else 0) + 1)

    def note_rate_limit(self, registry: str, headers: httpx.Headers) -> None:
        if "ratelimit-limit" not in headers and "ratelimit-remaining" not in headers:
            return
        limit, window = parse_rate_limit(headers.get("ratelimit-limit", ""))
        remaining, _ = parse_rate_limit(headers.get("ratelimit-remaining", ""))
        seen = self._status.get(registry)
        if remaining is not None and seen is not None and seen.remaining is not None:
            remaining = min(remaining, seen.remaining)  # answers of concurrent requests arrive in any order
        source = headers.get("docker-ratelimit-source", "")
        self.update(
            registry, limit=limit, remaining=remaining, window_s=window, source=source_kind(source) if source else ""
        )

    # -- before a request -------------------------------------------------------------
    def fail_fast(self, host: str, registry: str, repository: str) -> None:
        """Raise at once for a registry down, a repository hanging, a registry held back."""
        now = time.monotonic()
        for failed in (self._down.get(host), self._hung.get((host, repository))):
            if failed is not None and now - failed[0] < DOWN_FOR:
                raise RegistryError(registry, failed[1])
        held = self._held.get(host)
        if held is not None and now < held[0]:
            raise RegistryError(registry, held[1])

    def spare_the_limit(self, registry: str, method: str, path: str) -> None:
        """No GET of a manifest once the registry said none remain (RateLimit-Remaining: 0):
        it would be refused, and Docker Hub counts the attempt."""
        seen = self._status.get(registry)
        if method == "GET" and path.startswith("manifests/") and seen is not None and seen.remaining == 0:
            per = f" per {seconds(seen.window_s)}" if seen.window_s else ""
            limit = f" of {seen.limit}{per}" if seen.limit is not None else ""
            raise RegistryError(
                registry, f"rate limit reached: RateLimit-Remaining is 0{limit}; no request spent on it"
            )

    async def pause(self, host: str) -> None:
        """Wait while the registry asked us to (its Retry-After): no request meanwhile."""
        delay = self._resume_at.get(host, 0.0) - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    # -- after it -----------------------------------------------------------------------
    def answered(self, host: str) -> None:
        self._hung_in_a_row.pop(host, None)

    def postpone(self, host: str, registry: str, wait: float) -> None:
        """The registry asked to wait `wait` seconds: every request to it waits until then,
        unless that takes this run's waits for it past the budget (then `rate limited`, and
        the registry is not asked again before the time it named)."""
        now = time.monotonic()
        resume = max(self._resume_at.get(host, now), now)
        longer = max(0.0, now + wait - resume)
        waited = (self._status[registry].waited_s if registry in self._status else 0.0) + longer
        if waited > self.wait_budget:
            reason = (
                f"rate limited (HTTP 429): the registry asks to wait {seconds(wait)}, {seconds(waited)} in all, "
                f"over the {seconds(self.wait_budget)} a run waits per registry ([registry] rate_limit_wait)"
            )
            self._held[host] = (now + wait, reason)
            raise RegistryError(registry, reason)
        self._resume_at[host] = resume + longer
        self.update(registry, waited_s=round(waited, 2))

    def went_down(self, host: str, registry: str, reason: str) -> RegistryError:
        self._down[host] = (time.monotonic(), reason)
        return RegistryError(registry, reason)

    def no_answer(self, host: str, registry: str, repository: str, reason: str, *, connecting: bool) -> RegistryError:
        """A request that got no answer in time: its repository's lookups fail from now on,
        not the registry's, unless `connecting` failed or it is the third repository in a
        row (or not a repository's request: a token, say)."""
        if connecting or not repository:
            return self.went_down(host, registry, reason)
        hung = self._hung_in_a_row.setdefault(host, set())
        hung.add(repository)
        if len(hung) >= HUNG_REPOSITORIES:
            return self.went_down(host, registry, f"{reason} for {len(hung)} repositories in a row")
        reason = f"{reason} for {repository}"
        self._hung[(host, repository)] = (time.monotonic(), reason)
        return RegistryError(registry, reason)


def seconds(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") + " s"
