"""Platform fitness gathered through the engine: one short-lived, labelled container of an
arch on a host runs `fitness.SURVEY_SCRIPT` and exits; its output becomes a
`PlatformFitness`. It works the same on a local, tcp:// or ssh:// engine (nothing is read
on the machine ecoready runs on), and it is how an emulator on a remote host is verified:
if a container of the arch runs and says so, the host can serve that arch.

The image is one the run uses anyway (pulled once per host by the ImageStore), so the
survey costs one container start. No network, no privileges, bounded by a deadline, and
removed like every other resource of the run (its labels carry the run id).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ecoready.domain.blame import Cause
from ecoready.domain.errors import SurveyFailed
from ecoready.domain.model import PlatformFitness
from ecoready.domain.specs import ContainerSpec
from ecoready.domain.text import one_line
from ecoready.engine.aio import to_the_end
from ecoready.engine.platform import emulated_cpu_env
from ecoready.probe_api.exits import exit_cause
from ecoready.probe_api.run_context import RunContext, resource_labels
from ecoready.run.fitness import SURVEY_SCRIPT, failed, fitness_from_survey

SURVEY_SECONDS = 60.0  # native; scaled by the emulation factor for emulated arches
MAX_IMAGES = 3  # images tried in turn when one is not published for the arch
LOG_LINES = 400


@dataclass(frozen=True)
class Asked:
    fitness: PlatformFitness
    cause: Cause | None = None  # why it could not be asked; EMULATOR: the engine cannot run the arch


async def ask(
    run: RunContext,
    arch: str,
    *,
    emulated: bool,
    images: Sequence[str],
    kinds: Iterable[str] = (),
    seconds: float = SURVEY_SECONDS,
) -> Asked:
    """Platform fitness of `arch` on `run.host`, never raising: a failure becomes the
    fitness's `error` (the emulated hazard is still named) and its cause is data."""
    host = run.host.name
    tried: list[str] = []
    for reference in list(dict.fromkeys(images))[:MAX_IMAGES]:
        try:
            info = await run.images.ensure(reference, arch, for_cell=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # not published for the arch, registry down, pull failed
            tried.append(f"{reference}: {one_line(str(exc), 120)}")
            continue
        limit = seconds * (run.emulation_factor if emulated else 1.0)
        try:
            text = await _run_script(run, info.image_id, arch, limit, emulated=emulated)
        except asyncio.CancelledError:
            raise
        except SurveyFailed as exc:
            return Asked(failed(host, arch, emulated, one_line(exc.detail), reference), exc.cause or Cause.TOOL)
        except Exception as exc:
            return Asked(failed(host, arch, emulated, one_line(str(exc)) or type(exc).__name__, reference), Cause.TOOL)
        fitness = fitness_from_survey(text, host=host, arch=arch, emulated=emulated, image=reference, kinds=kinds)
        return Asked(fitness)
    why = "; ".join(tried) if tried else "no image of the matrix to run"
    return Asked(failed(host, arch, emulated, f"no image to ask with ({why})"), Cause.TOOL_IMAGE)


async def _run_script(run: RunContext, image_id: str, arch: str, limit: float, *, emulated: bool) -> str:
    """Run the script in a new container and return its output. The deadline is checked
    here rather than by a wrapper task: a wrapper abandons its task when cancelled twice
    (a run stopped while its cells are cancelled), and the removal must finish first."""
    labels = resource_labels(run, f"platform/{arch}", "platform")
    name = f"ecoready-{run.run_id[:8]}-platform-{arch}-{time.monotonic_ns() % 10**8}"
    spec = ContainerSpec(
        image=image_id,
        name=name,
        labels=labels,
        network=None,  # no network at all
        entrypoint=("sh", "-c"),
        command=(SURVEY_SCRIPT,),
        user="",
        mem_limit="256m",
        pids_limit=64,
        env=emulated_cpu_env(arch) if emulated else {},  # the CPU the cells of the arch see
    )
    deadline = time.monotonic() + limit
    container_id = await run.host.run(spec)
    try:
        delay = 0.1
        while True:
            state = await run.host.state(container_id)
            if not state.running:
                break
            if time.monotonic() > deadline:
                raise SurveyFailed(f"the survey container did not finish within {limit:.0f} s")
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 1.0)
        lines = await run.host.logs(container_id, LOG_LINES, max_line=0)
        text = "\n".join(lines)
        if state.exit_code not in (0, None) and "==end" not in text:
            if exit_cause(state, lines) is Cause.NOT_FOR_THIS_CPU:
                raise SurveyFailed(
                    f"cannot run {arch} containers here: exec format error (no emulator for {arch})",
                    cause=Cause.EMULATOR,
                )
            raise SurveyFailed(f"the survey exited with {state.exit_code}: {one_line(text or state.error)}")
        return text
    finally:
        await to_the_end(_remove(run, container_id))


async def _remove(run: RunContext, container_id: str) -> None:
    try:
        await run.host.remove_container(container_id)
    except Exception:  # noqa: S110 - the run's final sweep removes it by label
        pass
