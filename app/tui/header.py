"""The header: what runs where. Hosts and their arches, native or emulated (with the
emulator's version), and the registries' state (rate limits, failures)."""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from app.model import HostFacts, Report
from app.present import EMULATED_MARK
from app.text import one_line


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
    if host.docker_version:
        extras.append(f"docker {host.docker_version}")
    if host.price_per_hour is not None:
        extras.append(f"${host.price_per_hour:g}/h")
    more = "  " + ", ".join(extras)
    if extras and text.cell_len + len(more) <= width - 2:  # the facts that matter stay on one line
        text.append(more, style=Style(dim=True))
    return text


def registry_status(report: Report) -> Text | None:
    """The registries' state: rate limit (limit/remaining) and failures, one line.

    The report does not carry per-registry status yet (another issue adds it); until then
    this says nothing and the header has no registry line. Wire the new report field here.
    """
    return None


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
