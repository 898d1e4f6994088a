"""What `init --from PATH` is, and its services: a Helm chart folder (rendered by helm), a
kustomization (file or folder: rendered by kubectl/kustomize, else read by `kustomize.py`),
Kubernetes manifests (a file or a folder: `kube.py`) or a compose file (`compose.py`).
Rendered output goes through the same bounded reader as a manifest file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ecoready.domain.errors import ConfigError, Problem
from ecoready.stack.kube import MAX_BYTES, is_kubernetes, parse_kubernetes, read_kubernetes
from ecoready.stack.render import chart_of, kustomization_of, render_chart, render_kustomization
from ecoready.stack.services import Service


def read_source(path: Path, values: Sequence[str] = ()) -> tuple[str, list[Service], list[str]]:
    """(title, services, lines about what was not read) of `--from PATH`; ConfigError
    (exit 2, file:line:col) for what cannot be read. `values`: a chart's values files."""
    chart = chart_of(path)
    if values and chart is None:
        raise ConfigError([Problem(str(path), 1, 1, "--values is for a Helm chart folder (one with Chart.yaml)")])
    if chart is not None:
        rendered = render_chart(path, values, MAX_BYTES)
        services, notes = _parsed(f"{path} (helm template)", rendered, chart)
        return f"{path.resolve().name} (Helm chart {path.name}, helm template)", services, notes
    kustomization = kustomization_of(path) or _overlay(path)
    if kustomization is not None:
        services, notes, how = _kustomized(kustomization)
        return f"{kustomization.parent.resolve().name} (kustomization, {how})", services, notes
    if is_kubernetes(path):
        project, services, notes = read_kubernetes(path)
        return f"{project} (Kubernetes manifests {path.name})", services, notes
    from ecoready.stack.compose import read_compose

    project, services, notes = read_compose(path)
    return f"{project} (from {path.name})", services, notes


def _overlay(folder: Path) -> Path | None:
    """The one kustomization of a folder that holds a base and its overlay (built as one:
    one server, not two); ConfigError when several are no one's base (say which to take)."""
    if not folder.is_dir():
        return None
    from ecoready.stack.kustomize import roots

    found = roots(folder)
    if len(found) > 1:
        names = ", ".join(str(f.parent.relative_to(folder)) for f in found[:8])
        raise ConfigError(
            [
                Problem(
                    str(folder),
                    1,
                    1,
                    f"{len(found)} kustomizations that are no one's base ({names}): give one to --from",
                )
            ]
        )
    return found[0] if found else None


def _parsed(file: str, data: bytes, origin: Path) -> tuple[list[Service], list[str]]:
    services, notes = parse_kubernetes([(file, data)])
    if not services:
        what = "no workload or operator resource with an image once rendered"
        raise ConfigError([Problem(str(origin), 1, 1, f"{what}: not Kubernetes manifests ecoready reads")])
    return services, notes


def _kustomized(kustomization: Path) -> tuple[list[Service], list[str], str]:
    rendered = render_kustomization(kustomization.parent, MAX_BYTES)
    if rendered is not None:
        services, notes = _parsed(f"{kustomization.parent} (kustomize build)", rendered, kustomization)
        return services, notes, "kustomize build"
    from ecoready.stack.kustomize import apply_images, build

    built = build(kustomization, MAX_BYTES)
    services, notes = parse_kubernetes(list(built.texts))
    if not services:
        what = "no workload or operator resource with an image in its resources"
        raise ConfigError([Problem(str(kustomization), 1, 1, f"{what}: not Kubernetes manifests ecoready reads")])
    services = [replace(s, image=apply_images(s.image, built.images)) if s.image else s for s in services]
    reading = "read by ecoready: neither kubectl nor kustomize is on the PATH"
    return services, [*built.notes, *notes], reading
