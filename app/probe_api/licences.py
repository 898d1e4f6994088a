"""Images that stop at start asking for what only the user can give: a licence key or a
EULA's acceptance. The phrases recognised are data, one row each with what it asks for,
what to provide and where that wording is documented (`LICENCE_ASKS`); a container that
stopped with one of them in its log ends the stage as `LicenceRequired` (the cell is
`locked`, docs/architecture.md "Who is blamed"), never `broken` nor the tool's `error`.

Only a container that stopped is read: a running service that mentions its licence in its
log has not refused anything. Pure: the log lines come from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ecoready.domain.errors import LicenceRequired
from ecoready.domain.text import one_line


@dataclass(frozen=True)
class LicenceAsk:
    """One way an image says at start that it needs a licence key or a EULA's acceptance."""

    pattern: re.Pattern[str]
    wants: str  # what it asks for, completing "it stopped asking for …"
    provide: str  # the way out, in the user's terms
    source: str  # where this wording (and the way to provide it) is documented


ROW_ENV = "give it to the row (a `command` or `server` row's `env`), or pin a version that needs none"
LICENCE_ASKS: tuple[LicenceAsk, ...] = (
    LicenceAsk(
        re.compile(r"End-User License Agreement \(EULA\) must be accepted|\bACCEPT_EULA\b", re.IGNORECASE),
        "the acceptance of its End-User License Agreement (EULA)",
        "read the image's EULA and accept it as its documentation says (SQL Server: ACCEPT_EULA=Y in the "
        f"container's environment): {ROW_ENV}",
        "https://github.com/microsoft/mssql-docker/issues/199 (the image's own words when ACCEPT_EULA is not set)",
    ),
    LicenceAsk(
        re.compile(r"\blicense_key\b"),  # the setting's own name (an environment variable's is upper case)
        "a licence key (`license_key`)",
        "a licence key in the configuration's `license_key` (MaxScale 25.10: in the [maxscale] section, the key "
        "itself or the absolute path of a file holding it; a trial key comes from MariaDB's customer portal), "
        "or pin MaxScale 24.02, the last line usable without a key",
        "https://mariadb.com/docs/maxscale/maxscale-use-cases/maxscale-trial (MariaDB's docs, read 2026-12-03)",
    ),
    LicenceAsk(
        re.compile(
            r"\blicen[cs]e(\s+key)?\s+(is\s+)?(required|missing|not\s+(found|set|provided|given)|expired|invalid)"
            r"|\b(needs?|requires?)\s+(a\s+)?(valid\s+)?licen[cs]e(\s+key)?\b"
            r"|\bno\s+(valid\s+)?licen[cs]e(\s+key)?\s+(found|given|provided|set)\b",
            re.IGNORECASE,
        ),
        "a licence key",
        f"the licence key the image asks for (its log says how it reads one): {ROW_ENV}",
        "how commercial images word it at start (the lab's `lab/licensed:1`, containers/licensed/, says it so)",
    ),
)


def licence_refusal(lines: Sequence[str], who: str = "") -> LicenceRequired | None:
    """The `LicenceRequired` to end the stage with when the log of a container that stopped
    asks for a licence or a EULA's acceptance (the first row of `LICENCE_ASKS` that any line
    matches), else None. `who`: the container's role when it is not the cell's own."""
    for ask in LICENCE_ASKS:
        line = next((text for text in lines if ask.pattern.search(text)), None)
        if line is not None:
            said = f"stopped at start asking for {ask.wants}: {one_line(line.strip(), 200)}"
            return LicenceRequired(f"{who}: {said}" if who else said, fix=ask.provide)
    return None
