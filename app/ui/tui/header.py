"""The header: what runs where. Hosts and their arches, native or emulated (with the
emulator's version), and the registries' state (rate limits, failures)."""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ecoready.domain.model import HostFacts, Report
from ecoready.domain.text import one_line
from ecoready.report.status_words import EMULATED_MARK


def short_emulator(description: str) -> str:
    """`qemu-aarch64 version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)` -> `qemu-aarch64 10.0.13`."""
    text = re.sub(r"\s*\(.*\)\s*$", "", one_line(description, 120))
    return text.replace(" version ", " ")


def host_line(host: HostFacts, arches: tuple[str, ...], width: int = 200) -> Text:
    """`local: amd64 native · arm64 ᵉemulated (qemu-aarch64 10.0.4)`, for the run's arches."""
    text = Text(f"{one_line(host.name, 40)}: ", style="bold")
    text.append(f"{host.native_arch} native")
    # arches sharing one emulator read as one group: "arm64, s390x ᵉemulated (qemu 10.0)"
    groups: dict[str, list[str]] = {}
    for arch in host.emulated_arches:
        if not arches or arch in arches:
            groups.setdefault(host.emulators.get(arch, ""), []).append(arch)
    for emulator, names in groups.items():
        text.append(" · ")
        text.append(f"{', '.join(names)} {EMULATED_MARK}emulated", style=Style(italic=True))
        if emulator:
            text.append(f" ({short_emulator(emulator)})", style=Style(dim=True))
    extras = []
    if host.cpus:
        extras.append(f"{host.cpus} CPUs")
    if host.docker_version and not host.engine:  # the engine's line below names its version
        extras.append(f"docker {host.docker_version}")
    for unit, price in (("h", host.price_per_hour), ("mo", host.price_per_month), ("yr", host.price_per_year)):
        if price is not None:
            extras.append(f"${price:g}/{unit}")
    more = "  " + ", ".join(extras)
    if extras and text.cell_len + len(more) <= width - 2:  # the facts that matter stay on one line
        text.append(more, style=Style(dim=True))
    engine = f"  {one_line(host.engine, 160)}"  # which engine answered, and how it was found
    if host.engine and text.cell_len + len(engine) <= width - 2:
        text.append(engine, style=Style(dim=True))
    return text


def registry_status(report: Report) -> Text | None:
    """The registries as last seen: requests made, the rate limit left, the last failure.
    `127.0.0.1:5000 14 req · registry-1.docker.io 9 req, 91/100 per 6h left`."""
    if not report.registries:
        return None
    text = Text("registries: ", style=Style(bold=True))
    for i, status in enumerate(report.registries):
        if i:
            text.append(" · ")
        text.append(one_line(status.registry, 60))
        text.append(f" {status.requests} req", style=Style(dim=True))
        if status.limit is not None:
            left = "?" if status.remaining is None else str(status.remaining)
            window = ""
            if status.window_s:
                hours, rest = divmod(status.window_s, 3600)
                window = f" per {hours}h" if hours and not rest else f" per {status.window_s}s"
            low = status.remaining is not None and status.remaining <= max(1, status.limit // 10)
            text.append(f", {left}/{status.limit}{window} left", style=Style(bold=low, reverse=low))
        if status.error:
            text.append(f" ⚠ {one_line(status.error, 80)}", style=Style(bold=True))
    return text


def header_text(report: Report, title: str, width: int = 200, failed: bool = False) -> Text:
    text = Text("ecoready", style="bold")
    text.append(f"  {one_line(title, 80)}")
    if report.run_id:
        text.append(f"  run {report.run_id[:8]} · profile {report.profile.value}", style=Style(dim=True))
    for host in report.hosts:
        text.append("\n")
        text.append_text(host_line(host, report.arches, width))
    if not report.hosts:
        waiting = "no run: see the line at the bottom" if failed else "connecting to the docker engine…"
        text.append(f"\n{waiting}", style=Style(dim=True))
    registries = registry_status(report)
    if registries is not None:
        text.append("\n")
        text.append_text(registries)
    return text


class RunHeader(Static):
    """Hosts, arches, emulation and registries; redrawn when the run (re)starts."""

    def show(self, report: Report, title: str, width: int = 200, failed: bool = False) -> None:
        self.update(header_text(report, title, width, failed))
