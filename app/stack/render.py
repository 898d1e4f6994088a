"""Helm charts and kustomizations as `init --from` takes them: rendered by their own tool
when it is on the PATH (`helm template`, `kubectl kustomize` or `kustomize build`), under a
deadline and a bound on the output, which then goes through the same bounded reader as any
manifest (`kube.py`). Never a YAML error from inside a template: a chart without helm is a
line saying how to render it. A kustomization without its tools is read by `kustomize.py`.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.text import inert

RENDER_SECONDS = 60.0  # helm template / kustomize build, each
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def chart_of(path: Path) -> Path | None:
    """The Chart.yaml of a chart folder, else None."""
    chart = path / "Chart.yaml"
    return chart if path.is_dir() and chart.is_file() else None


def kustomization_of(path: Path) -> Path | None:
    """The kustomization file `path` is, or the one its folder holds; else None."""
    if path.is_file():
        return path if path.name in KUSTOMIZATIONS else None
    return next((path / n for n in KUSTOMIZATIONS if (path / n).is_file()), None) if path.is_dir() else None


def render_chart(chart_dir: Path, values: Sequence[str], limit: int) -> bytes:
    """`helm template` of the chart (values files passed through); ConfigError (exit 2)
    when helm is not on the PATH, fails, runs past the deadline or writes too much."""
    chart = chart_dir / "Chart.yaml"
    helm = shutil.which("helm")
    if helm is None:
        raise ConfigError(
            [
                Problem(
                    str(chart),
                    1,
                    1,
                    "a Helm chart, and helm is not on the PATH: render it with "
                    f"`helm template NAME {chart_dir} > rendered.yaml`, then `ecoready init --from rendered.yaml`",
                )
            ]
        )
    argv = [helm, "template", "ecoready", str(chart_dir)]
    for file in values:
        argv += ["--values", file]
    return run_bounded(argv, chart, "helm template", limit)


def render_kustomization(folder: Path, limit: int) -> bytes | None:
    """`kubectl kustomize` (or `kustomize build`) of the folder; None when neither is on
    the PATH."""
    kubectl, kustomize = shutil.which("kubectl"), shutil.which("kustomize")
    if kubectl is not None:
        argv, what = [kubectl, "kustomize", str(folder)], "kubectl kustomize"
    elif kustomize is not None:
        argv, what = [kustomize, "build", str(folder)], "kustomize build"
    else:
        return None
    file = kustomization_of(folder) or folder
    return run_bounded(argv, file, what, limit)


def run_bounded(argv: list[str], file: Path, what: str, limit: int, seconds: float = RENDER_SECONDS) -> bytes:
    """The standard output of `argv`, at most `limit` bytes within `seconds`; ConfigError
    at `file` (its tool's last line of stderr) when it fails, or is past either bound (the
    process is then killed)."""
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy()
    ) as proc:
        try:
            out, err = _collect(proc, limit, time.monotonic() + seconds)
        except _Past as past:
            proc.kill()
            raise ConfigError([Problem(str(file), 1, 1, f"{what}: {past}: not read")]) from None
        code = proc.wait()
    if code != 0:
        lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
        why = inert(lines[-1], 300) if lines else f"exit status {code}"
        raise ConfigError([Problem(str(file), 1, 1, f"{what} failed: {why}")])
    return out


class _Past(Exception):
    """A bound passed while collecting a tool's output."""


def _collect(proc: subprocess.Popen[bytes], limit: int, deadline: float) -> tuple[bytes, bytes]:
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    sizes = dict.fromkeys(chunks, 0)
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdout, proc.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Past(f"still running after {RENDER_SECONDS:.0f} s")
            for key, _ in selector.select(left):
                data = os.read(key.fd, 1 << 20)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                sizes[key.fd] += len(data)
                if sizes[key.fd] > limit:
                    raise _Past(f"wrote more than {limit} bytes")
                chunks[key.fd].append(data)
    return b"".join(chunks[proc.stdout.fileno()]), b"".join(chunks[proc.stderr.fileno()])
