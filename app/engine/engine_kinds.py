"""The kinds of engine users have, as data: where each puts its socket, how to start it, and
how it gets emulation for a foreign arch. Discovery (engine/discovery.py) tries the
sockets; errors, `doctor` and the plan's remedies say the kind's own fix, never a `make`
target. Sources and what was verified here for real: docs/engines.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineKind:
    key: str
    name: str  # as users call it
    sockets: tuple[str, ...]  # well-known socket paths; `~` and `$XDG_RUNTIME_DIR` expanded
    start: str  # how to start it, when its socket is there but nothing answers
    emulate: str  # how to let it run the other arch ({arch}: the Docker arch wanted)


DOCKER_ENGINE = EngineKind(
    key="docker",
    name="Docker Engine",
    sockets=("/var/run/docker.sock",),
    start="start the Docker daemon (`sudo systemctl start docker`)",
    emulate=(
        "register qemu-user >= 8 for {arch} in the kernel's binfmt_misc, with the F flag "
        "(`docker run --privileged --rm tonistiigi/binfmt --install {arch}`, or the distribution's "
        "qemu-user-static package when it is >= 8)"
    ),
)
ROOTLESS_DOCKER = EngineKind(
    key="rootless-docker",
    name="rootless Docker",
    sockets=("$XDG_RUNTIME_DIR/docker.sock",),
    start="start it (`systemctl --user start docker`)",
    emulate=DOCKER_ENGINE.emulate,
)
DOCKER_DESKTOP = EngineKind(
    key="docker-desktop",
    name="Docker Desktop",
    sockets=("~/.docker/run/docker.sock", "~/.docker/desktop/docker.sock"),
    start="start Docker Desktop and wait until it says the engine is running",
    emulate=(
        "Docker Desktop runs {arch} containers with QEMU or Rosetta: turn on Settings > General > "
        "'Use Rosetta for x86_64/amd64 emulation on Apple Silicon' (amd64 on an Apple-silicon Mac), "
        "or on other machines `docker run --privileged --rm tonistiigi/binfmt --install {arch}`"
    ),
)
COLIMA = EngineKind(
    key="colima",
    name="Colima",
    sockets=("~/.colima/default/docker.sock", "~/.config/colima/default/docker.sock"),
    start="start it (`colima start`)",
    emulate=(
        "Colima's VM needs an emulator for {arch}: `colima start --vm-type vz --vz-rosetta` (amd64 "
        "on Apple silicon) or `colima ssh -- sudo docker run --privileged --rm tonistiigi/binfmt "
        "--install {arch}`"
    ),
)
ORBSTACK = EngineKind(
    key="orbstack",
    name="OrbStack",
    sockets=("~/.orbstack/run/docker.sock",),
    start="start OrbStack (`orb start`)",
    emulate=(
        "OrbStack runs amd64 with Rosetta and other arches with QEMU: check Settings > System > "
        "'Use Rosetta to run Intel code' and run `docker run --privileged --rm tonistiigi/binfmt "
        "--install {arch}` for the rest"
    ),
)
RANCHER_DESKTOP = EngineKind(
    key="rancher-desktop",
    name="Rancher Desktop",
    sockets=("~/.rd/docker.sock",),
    start="start Rancher Desktop with the dockerd (moby) container engine",
    emulate=(
        "Rancher Desktop's VM needs an emulator for {arch}: turn on Preferences > Virtual Machine "
        "> 'Enable Rosetta support' (amd64 on Apple silicon) or run `docker run --privileged --rm "
        "tonistiigi/binfmt --install {arch}`"
    ),
)
PODMAN = EngineKind(
    key="podman",
    name="Podman",
    sockets=("/run/podman/podman.sock", "$XDG_RUNTIME_DIR/podman/podman.sock"),
    start=(
        "start its Docker-compatible API (`systemctl --user start podman.socket`, rootful: "
        "`sudo systemctl start podman.socket`, on a Mac `podman machine start`)"
    ),
    emulate=(
        "Podman runs {arch} through the kernel's binfmt_misc: install qemu-user-static >= 8 "
        "(Fedora: `sudo dnf install qemu-user-static`; with `podman machine`, inside the machine: "
        "`podman machine ssh ls /proc/sys/fs/binfmt_misc` shows what is registered)"
    ),
)
REMOTE = EngineKind(
    key="remote",
    name="a remote engine",
    sockets=(),
    start="check that the host is up and that its engine listens where [[hosts]] or the context says (docs/hosts.md)",
    emulate=DOCKER_ENGINE.emulate.replace("register", "on that host, register", 1),
)

# The order sockets are tried in when neither DOCKER_HOST nor a context names one: the
# docker CLI's default first, then what each product puts in place of it.
KINDS: tuple[EngineKind, ...] = (
    DOCKER_ENGINE,
    ROOTLESS_DOCKER,
    DOCKER_DESKTOP,
    ORBSTACK,
    COLIMA,
    RANCHER_DESKTOP,
    PODMAN,
)
BY_KEY: dict[str, EngineKind] = {k.key: k for k in (*KINDS, REMOTE)}

WINDOWS_PIPE = "npipe:////./pipe/docker_engine"  # Docker Desktop's engine on Windows


def emulation_fix(arch: str, kinds: list[EngineKind]) -> str:
    """How to get `arch` served by engines of these kinds (each said once), or a native host."""
    ways = [k.emulate.format(arch=arch) for k in dict.fromkeys(kinds or [DOCKER_ENGINE])]
    return "; ".join(ways) + f"; or add a native {arch} host under [[hosts]] (docs/hosts.md)"


def expand_path(template: str, expand: dict[str, str]) -> str:
    """`~` -> HOME, `$XDG_RUNTIME_DIR` -> its value ("" when unknown: the path is skipped)."""
    out = template
    if out.startswith("~/"):
        home = expand.get("HOME", "")
        if not home:
            return ""
        out = home.rstrip("/") + out[1:]
    if "$XDG_RUNTIME_DIR" in out:
        runtime = expand.get("XDG_RUNTIME_DIR", "")
        if not runtime:
            return ""
        out = out.replace("$XDG_RUNTIME_DIR", runtime.rstrip("/"))
    return out


def kind_of_engine(version: Mapping[str, object], info: Mapping[str, object]) -> EngineKind | None:
    """What the engine says it is: /version's components and /info's operating system and
    name (Docker Desktop, OrbStack, Rancher Desktop and Colima say so there)."""
    components = version.get("Components")
    listed = components if isinstance(components, list) else []
    names = " ".join(str(c.get("Name", "")) for c in listed if isinstance(c, dict))
    if "Podman" in names:
        return PODMAN
    system = str(info.get("OperatingSystem", ""))
    name = str(info.get("Name", ""))
    if "Docker Desktop" in system:
        return DOCKER_DESKTOP
    if "OrbStack" in system or name == "orbstack":
        return ORBSTACK
    if "Rancher Desktop" in system or name.startswith("lima-rancher-desktop"):
        return RANCHER_DESKTOP
    if name == "colima" or name.startswith("colima-"):
        return COLIMA
    security = info.get("SecurityOptions")
    if isinstance(security, list) and any("rootless" in str(s) for s in security):
        return ROOTLESS_DOCKER
    return None
