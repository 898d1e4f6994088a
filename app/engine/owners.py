"""Who owns what ecoready created: this process (host name, pid and start time, against
pid reuse), whether the owner of a labelled resource still runs, and which resources a
sweep removes."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_RUN
from ecoready.engine.proc import process_start


@dataclass(frozen=True)
class OwnerInfo:
    hostname: str
    pid: int
    start: str


def this_owner() -> OwnerInfo:
    pid = os.getpid()
    return OwnerInfo(socket.gethostname(), pid, process_start(pid))


def owner_alive(owner: str, start: str, me: OwnerInfo) -> bool:
    """Whether the process that owns a resource still runs. Owners on other machines are
    assumed alive: we cannot tell, and must never remove a live run's resources."""
    host, _, pid_text = owner.rpartition(":")
    if host != me.hostname:
        return True
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == me.pid:
        return start in ("", me.start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not start or process_start(pid) == start


def swept(
    labels: Mapping[str, str] | None, *, run_id: str | None, dead_owners: bool, everything: bool, me: OwnerInfo
) -> bool:
    """Whether a sweep removes a resource with these labels: all of them (`everything`),
    those of the run `run_id`, or those whose owner process is gone (`dead_owners`)."""
    labels = labels or {}
    if everything:
        return True
    if run_id is not None and labels.get(LABEL_RUN) == run_id:
        return True
    if dead_owners:
        return not owner_alive(labels.get(LABEL_OWNER, ""), labels.get(LABEL_OWNER_START, ""), me)
    return False
