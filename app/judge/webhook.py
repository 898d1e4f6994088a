"""Tell a webhook what changed: one JSON POST, Slack-compatible (`text`) plus the
structured diff (`diff`).

Posting never blocks a check for long (explicit connect/read/write timeouts and a total
deadline) and never fails it: a problem comes back as one line for stderr. Webhook URLs
are secrets (a Slack URL is its own credential), so messages show only scheme and host.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from ecoready import __version__
from ecoready.domain.text import inert
from ecoready.judge.diff import Diff, diff_dict, diff_lines, headline

CONNECT_S = 5.0
READ_S = 10.0
TOTAL_S = 20.0
MAX_LINES = 30  # Slack truncates long messages; the structured diff carries everything


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a webhook (None when it can)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "the webhook URL must start with http:// or https://"
    if not parts.hostname:
        return "the webhook URL has no host"
    return None


def shown(url: str) -> str:
    """`https://hooks.slack.com/…`: enough to recognise the target, not enough to use it."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/…"


def slack_escape(text: str) -> str:
    """Slack reads `<...>` as links and mentions (`<!channel>`): escape its three characters."""
    return inert(text, 0).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def payload(d: Diff) -> dict[str, Any]:
    lines = diff_lines(d)
    shown_lines = lines[:MAX_LINES]
    if len(lines) > MAX_LINES:
        shown_lines.append(f"... and {len(lines) - MAX_LINES} more (see the diff)")
    text = "\n".join([f"ecoready: {d.matrix}: {headline(d)}", *(f"• {line}" for line in shown_lines)])
    return {"text": slack_escape(text), "diff": diff_dict(d), "ecoready": __version__}


async def _post(url: str, body: dict[str, Any]) -> str | None:
    import httpx

    timeout = httpx.Timeout(connect=CONNECT_S, read=READ_S, write=READ_S, pool=CONNECT_S)
    # trust_env: a webhook is usually on the internet, reached through the site's proxy settings
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=True) as client:
        try:
            # only the status is read: a body a webhook sends back (of any size) is not
            async with client.stream(
                "POST", url, json=body, headers={"User-Agent": f"ecoready/{__version__}"}
            ) as response:
                status = response.status_code
        except httpx.TimeoutException:
            return f"webhook {shown(url)}: no answer in time"
        except httpx.HTTPError as exc:
            return f"webhook {shown(url)}: {type(exc).__name__}: {inert(str(exc), 200).replace(url, shown(url))}"
    if not 200 <= status < 300:
        return f"webhook {shown(url)} answered HTTP {status}"
    return None


async def post(url: str, body: dict[str, Any], total_s: float = TOTAL_S) -> str | None:
    """POST `body`; None when the webhook took it, else why not (one line)."""
    problem = url_problem(url)
    if problem:
        return problem
    try:
        async with asyncio.timeout(total_s):
            return await _post(url, body)
    except TimeoutError:
        return f"webhook {shown(url)}: gave up after {total_s:g} s"
