"""Which resources a sweep removes (engine/owners.py `swept`), from their labels alone:
all of them, a run's, or those whose owner process is gone; never a live run's, nor one
owned on another machine (we cannot tell whether it lives)."""

from __future__ import annotations

import os

from ecoready.domain.specs import LABEL_OWNER, LABEL_OWNER_START, LABEL_RUN
from ecoready.engine.owners import OwnerInfo, swept, this_owner

ME = this_owner()


def labels(run: str, owner: str, start: str = "") -> dict[str, str]:
    return {LABEL_RUN: run, LABEL_OWNER: owner, LABEL_OWNER_START: start}


def unused_pid() -> int:
    pid = 4_000_000  # above the usual pid_max (4194304 at most): found free below it
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid -= 1


def test_a_run_s_own_sweep_takes_its_resources_only() -> None:
    mine = labels("run-a", f"{ME.hostname}:{ME.pid}", ME.start)
    other = labels("run-b", f"{ME.hostname}:{ME.pid}", ME.start)
    assert swept(mine, run_id="run-a", dead_owners=False, everything=False, me=ME)
    assert not swept(other, run_id="run-a", dead_owners=False, everything=False, me=ME)
    assert not swept(None, run_id="run-a", dead_owners=False, everything=False, me=ME)


def test_dead_owners_are_swept_and_live_or_foreign_ones_kept() -> None:
    def dead(owner: str, start: str = "") -> bool:
        return swept(labels("r", owner, start), run_id=None, dead_owners=True, everything=False, me=ME)

    assert not dead(f"{ME.hostname}:{ME.pid}", ME.start)  # this very process
    assert dead(f"{ME.hostname}:{ME.pid}", "an earlier start")  # its pid, reused
    assert dead(f"{ME.hostname}:{unused_pid()}")
    assert dead(f"{ME.hostname}:not-a-pid")
    assert not dead(f"another-machine:{unused_pid()}")  # cannot tell: kept


def test_everything_takes_everything_and_nothing_asked_takes_nothing() -> None:
    other = OwnerInfo("elsewhere", 1, "")
    assert swept(None, run_id=None, dead_owners=False, everything=True, me=other)
    assert not swept(labels("r", "x:1"), run_id=None, dead_owners=False, everything=False, me=other)
