"""What `ecoready lab status` prints: the registry, the emulator per arch, and for every
lab image and gap whether it is built from its current recipe and published."""

from __future__ import annotations

from ecoready.engine.docker_host import DockerHost
from ecoready.engine.platform import emulators, host_arch
from ecoready.lab.build import Lab
from ecoready.lab.gaps import gap_status
from ecoready.lab.local_registry import registry_running
from ecoready.lab.needs import Needs
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.lab.recipes import ARCHES, IMAGES, RECIPE_LABEL, REGISTRY, image_tag


async def status_lines(host: DockerHost, needs: Needs | None = None) -> tuple[list[str], bool]:
    """What `ecoready lab status` prints, and whether the lab is complete (with `needs`:
    whether what those rows run on is: lab/needs.py)."""
    lines = []
    ok = True
    up = registry_running()
    ok &= up
    lines.append(f"registry {REGISTRY}: {'up' if up else 'down (ecoready lab up)'}")
    for arch in ARCHES:
        emulator = emulators().get(arch)
        if arch == host_arch():
            lines.append(f"{arch}: native")
        elif emulator is None:
            lines.append(f"{arch}: no emulator (scripts/setup-host.sh registers qemu-user)")
        else:
            lines.append(
                f"{arch}: emulated by {emulator.version or emulator.interpreter}"
                + (f" - {emulator.problem()}" if emulator.problem() else "")
            )
    writer = RegistryWriter(f"http://{REGISTRY}", timeout=3) if up else None
    lab = Lab(host, lambda _: None)
    try:
        for image in IMAGES if needs is None else needs.images:
            for arch in image.arches:
                labels = await host.images.image_labels(image_tag(image, arch))
                recipe = lab.recipe(image, arch)
                if labels is None:
                    built = "not built"
                else:
                    # a recipe that changed since (a Dockerfile, a base): `lab build` redoes it
                    built = "built" if labels.get(RECIPE_LABEL) == recipe else "built, out of date"
                pushed = ""
                if writer is not None:
                    pushed = ", published" if writer.manifest(f"{arch}/{image.name}", image.tag) else ", not published"
                ok &= built == "built" and pushed == ", published"
                lines.append(f"  lab/{image.key} {arch}: {built}{pushed}")
        if writer is not None and (needs is None or needs.gaps):
            for name, current in gap_status(writer):
                ok &= current
                state = "published" if current else "not published (ecoready lab build --only gaps)"
                lines.append(f"  {name} (gap): {state}")
    finally:
        if writer is not None:
            writer.close()
    return lines, ok
