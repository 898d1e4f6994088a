"""Installing a package into an image, once: a driver row's driver from its registry.

The cell's network is internal (no way out), so the install runs in a container of its
own on the default bridge (which reaches the registries), from the cell's runtime image,
as root, with no secret in it: only the host's public trust store (so a site's TLS proxy
is trusted as on the host). When the script succeeds, the container is committed to a
local image `ecoready-cache/driver:<key>` labelled `ecoready.cache=driver`, never with a
run's labels, so sweeps leave it and the next run finds it: the key is the runtime image
id, the arch and the install script (which names the exact version), so a changed image,
version or recipe installs afresh. The installer container carries the run's labels while
it lives: a run killed mid-install leaves nothing a sweep does not find.

One install per key on an engine, not per run: the installer is labelled with its key
(`ecoready.installing`), and a run that finds a live one of another run (another process:
the TUI beside a scheduled check, two test workers) waits for it and then takes its image,
instead of compiling the same driver again beside it (a source build under emulation is
minutes of both cores). Two runs that start their installers at the same moment both see
both; the older installer (creation time, then id) goes on and the other steps back.

The script may print `ecoready-label: key=value` lines: facts of the install (how it went,
e.g. a wheel or a source build), kept as labels of the cached image for later runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ecoready.domain.errors import (
    DeadlineExceeded,
    EcoreadyError,
    EngineError,
    ImageUnavailable,
    InfraError,
    RegistryError,
)
from ecoready.domain.events import PackagingReported
from ecoready.domain.packaging import Packaging
from ecoready.domain.specs import (
    LABEL_CREATED,
    LABEL_OWNER,
    LABEL_OWNER_START,
    ContainerSpec,
    ExecResult,
    SecretFile,
)
from ecoready.domain.text import one_line
from ecoready.engine.aio import to_the_end
from ecoready.engine.owners import owner_alive, this_owner
from ecoready.packages.http import host_of
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.seams import EngineHost

CACHE_REPOSITORY = "ecoready-cache/driver"
LABEL_CACHE = "ecoready.cache"
LABEL_CACHE_KEY = "ecoready.cache.key"
LABEL_CACHE_OF = "ecoready.cache.of"  # what was installed, e.g. "pypi:mysqlclient==2.2.7"
LABEL_INSTALLING = "ecoready.installing"  # on an installer container: the key it installs
LABEL_LINE = "ecoready-label: "
STEP_LINE = "ecoready-step: "  # an install script says which step it is in: `echo ecoready-step: build`
TRUST_DIR = "/run/ecoready/trust"
TRUST_PEM = f"{TRUST_DIR}/ca-certificates.crt"
TRUST_JAVA = f"{TRUST_DIR}/java-cacerts"  # only when the host has a Java trust store
_JAVA_STORE = Path("/etc/ssl/certs/java/cacerts")
TRUST_ENV = {"SSL_CERT_FILE": TRUST_PEM}  # OpenSSL, Go and curl read it; recipes add their tools' own
RECIPE_VERSION = "1"  # part of every key: bump to install everything afresh
KILL_GRACE = 5  # seconds between TERM and KILL when an install runs out of time
TIMED_OUT = (124, 137)  # coreutils `timeout`: TERM worked / KILL was needed
RESOLVE_LIMIT = 60.0  # seconds for one name looked up in the installer (a resolver that never answers: ~10-20 s)
NOT_FOUND = 2  # getent's exit status when a key (the name) is not found
PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
CLAIM_POLL = 2.0  # seconds between looks at another run's installer of the same key
READ_TIMEOUT = 120.0  # seconds to read a file (a program of tens of MiB) out of an installed image


@dataclass(frozen=True)
class Installed:
    image_id: str  # the image with the install in it; "" when the script failed
    cached: bool  # found from an earlier run: nothing was installed now
    labels: Mapping[str, str] = field(default_factory=dict)  # the facts the script printed
    result: ExecResult | None = None  # the install's own output (None when cached)
    seconds: float = 0.0


@dataclass(frozen=True)
class InstallJob:
    """One install: `script` in a container of the runtime image, cached under `key`."""

    runtime_image_id: str
    key: str
    of: str  # what is installed, for messages and the cache label
    script: str
    env: Mapping[str, str]
    name: str  # the installer container's
    run_labels: Mapping[str, str]
    timeout: float
    cache: str = "driver"  # what kind of cached image it makes (`ecoready.cache`): driver, tool
    files: Mapping[str, bytes] = field(default_factory=dict)  # put into the installer first (sources)
    reaches: tuple[str, ...] = ()  # the registries' base URLs the script downloads from


def report_packaging(ctx: ProbeContext, packaging: Packaging) -> None:
    """What is known of a driver row's package, for the cell (an event) and the probe: the
    packaging stage's finding, then the install's outcome."""
    ctx.packaging = packaging
    ctx.run.emit(PackagingReported(ctx.cell.id, packaging))


def cache_key(runtime_image_id: str, arch: str, script: str, files: Mapping[str, bytes] | None = None) -> str:
    """The install's identity: the image, the arch, the script and the files it is given."""
    digest = hashlib.sha256("\0".join((RECIPE_VERSION, runtime_image_id, arch, script)).encode())
    for path, content in sorted((files or {}).items()):
        digest.update(b"\0" + path.encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()[:32]


def trust_files() -> dict[str, bytes]:
    """The host's public trust store for the installer: the PEM bundle ($SSL_CERT_FILE or
    OpenSSL's default) and, when the host has one, the Java trust store."""
    paths = ssl.get_default_verify_paths()
    pem = Path(os.environ.get("SSL_CERT_FILE") or paths.cafile or paths.openssl_cafile)
    files: dict[str, bytes] = {}
    if pem.is_file():
        files[TRUST_PEM] = pem.read_bytes()
    if _JAVA_STORE.is_file():
        files[TRUST_JAVA] = _JAVA_STORE.read_bytes()
    return files


def labels_printed(stdout: str) -> dict[str, str]:
    """The `ecoready-label: key=value` lines a script printed."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith(LABEL_LINE) and "=" in line:
            key, _, value = line[len(LABEL_LINE) :].partition("=")
            found[f"ecoready.install.{key.strip()}"] = value.strip()[:200]
    return found


def step_of(stdout: str) -> str:
    """The step an install script said it was in last (`ecoready-step: NAME`), or "" (none said)."""
    steps = [ln[len(STEP_LINE) :].strip() for ln in stdout.splitlines() if ln.startswith(STEP_LINE)]
    return steps[-1] if steps else ""


async def cached(host: EngineHost, key: str) -> Installed | None:
    """The image an earlier run committed for this key, if the engine still has it."""
    reference = f"{CACHE_REPOSITORY}:{key}"
    labels = await host.images.image_labels(reference)
    if labels is None or labels.get(LABEL_CACHE_KEY) != key:
        return None
    facts = {k: v for k, v in labels.items() if k.startswith("ecoready.install.")}
    return Installed(await host.images.image_id(reference), True, facts)


async def install(
    ctx: ProbeContext,
    script: str,
    *,
    of: str,
    env: Mapping[str, str],
    timeout: float,
    files: Mapping[str, bytes] | None = None,
    arch: str | None = None,
    reaches: tuple[str, ...] = (),
) -> Installed:
    """The cell's image with `script` run in it once: from the cache when an earlier run did
    it, else installed now (one install at a time per key: two cells of a run wanting the
    same wait for the first, and so does a run that finds another run's installer of it on
    the engine; then they find its image). `files` (path -> bytes) are put into the
    installer before the script runs. `arch`: the row's image for that arch instead of the
    cell's (a cross build on the engine's native arch, `native_arch`). A failed script
    gives `image_id == ""` and its output; an engine failure raises, and so does a registry of
    `reaches` (base URLs the script downloads from) whose name the installer cannot resolve."""
    arch = arch or ctx.arch
    runtime = await ctx.image() if arch == ctx.arch else await _image_for(ctx, arch, of)
    key = cache_key(runtime, arch, script, files)
    emulator_env = ctx.extra_env if arch == ctx.arch else {}  # QEMU_CPU is the cell's arch's
    async with ctx.run.install_locks.setdefault(key, asyncio.Lock()):
        job = InstallJob(
            runtime_image_id=runtime,
            key=key,
            of=of,
            script=script,
            env={**TRUST_ENV, **env, **emulator_env},
            name=ctx._name("installer"),
            run_labels=ctx.labels("installer"),
            timeout=timeout,
            files=dict(files or {}),
            reaches=reaches,
        )
        return await install_once(ctx.run.host, job)


async def _image_for(ctx: ProbeContext, arch: str, of: str) -> str:
    """The row's image for another arch than the cell's: one it lacks is not the component's
    `missing` (its own arch's image is there), it is the install's trouble."""
    try:
        return (await ctx.run.images.ensure(ctx.image_ref, arch)).image_id
    except ImageUnavailable as exc:
        raise InfraError(f"{ctx.image_ref} has no {arch} image to install {of} in: {exc}") from None


def native_arch(ctx: ProbeContext) -> str:
    """The arch the cell's engine runs natively (the cell's own when it is not emulated)."""
    facts = ctx.host_facts
    if not ctx.emulated:
        return ctx.arch
    if facts is None or not facts.native_arch:
        raise InfraError(f"the engine of {ctx.cell.id} did not say which arch it runs natively")
    return facts.native_arch


async def installed_file(ctx: ProbeContext, installed: Installed, path: str, *, max_bytes: int) -> bytes:
    """The bytes of `path` in an installed image (e.g. a program built there), read without
    running the image; an engine failure or a file that is not there raises InfraError."""
    (found,) = await ctx.run.host.images.read_files(
        installed.image_id, [[path]], labels=ctx.labels("reader"), max_bytes=max_bytes, timeout=READ_TIMEOUT
    )
    if found is None or found.note or not found.complete:
        what = "absent" if found is None else found.note or f"{found.size} bytes, more than {max_bytes}"
        raise InfraError(f"{path} cannot be read out of the installed image {installed.image_id[:19]}: {what}")
    return found.data


async def install_once(host: EngineHost, job: InstallJob) -> Installed:
    """The cached image of the job's key, waiting first for any other run's installer of it on this
    engine; else the install done here. Waiting is bounded: as long as an install of our
    own may take, from when the wait began."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + job.timeout + KILL_GRACE + 60
    while True:
        found = await cached(host, job.key)
        if found is not None:
            return found
        if await installers(host, job.key):
            if loop.time() > give_up:
                raise DeadlineExceeded(
                    f"another ecoready run has been installing {job.of} on this engine "
                    f"for longer than {job.timeout:.0f} s"
                )
            await asyncio.sleep(CLAIM_POLL)
            continue
        done = await _installer(host, job)
        if done is not None:
            return done


async def _names_resolve(host: EngineHost, container: str, job: InstallJob) -> None:
    """Each registry the script downloads from resolves in the installer, whose DNS is the
    engine's: a name that does not is the network's trouble, not the package's (the
    installers would say "No matching distribution", "Could not resolve host", and the
    install would be blamed). `getent hosts` (glibc's, and musl's on Alpine) answers 2 for
    a name it cannot resolve; an image without it, or a lookup past RESOLVE_LIMIT, leaves
    the install to say, and so does an install through a proxy (which resolves for it)."""
    if any(k.lower() in PROXY_VARIABLES for k, v in job.env.items() if v):
        return
    for url in job.reaches:
        name = urlsplit(url).hostname
        if not name:
            continue
        try:
            found = await host.exec(container, ["getent", "hosts", name], timeout=RESOLVE_LIMIT, user="0")
        except DeadlineExceeded:
            return
        if found.exit_code == NOT_FOUND:
            raise RegistryError(
                host_of(url),
                f"its name does not resolve in the engine's containers, so the install of {job.of} cannot "
                "download from it: the engine's DNS or network (its `dns` setting, a proxy) is at fault, not "
                "the package; re-run once a container on this engine resolves it",
            )


async def installers(host: EngineHost, key: str) -> list[str]:
    """The installer containers of `key` on the engine whose run still lives, oldest first
    (the engine's creation time to the nanosecond, then id: every run orders them alike,
    and one created after another looked finds that one older). A dead run's leftover is
    not a claim: the next sweep removes it."""
    containers, _, _ = await host.labelled(f"{LABEL_INSTALLING}={key}")
    me = this_owner()
    live = []
    for container in containers:
        labels = container.get("Labels") or {}
        if owner_alive(labels.get(LABEL_OWNER, ""), labels.get(LABEL_OWNER_START, ""), me):
            try:
                created = (await host.state(container["Id"])).created
            except EngineError:
                continue  # removed since the list: its install is over
            live.append((instant(created), str(container["Id"])))
    return [container for _, container in sorted(live)]


def instant(created: str) -> tuple[str, int]:
    """An RFC 3339 time as the engine writes it (`2026-11-26T16:50:01.1234Z`: trailing zeros
    of the fraction dropped) in an order that compares: (seconds part, nanoseconds)."""
    whole, _, rest = created.partition(".")
    digits = "".join(ch for ch in rest if ch.isdigit())
    return whole.removesuffix("Z"), int((digits + "000000000")[:9]) if digits else 0


async def _installer(host: EngineHost, job: InstallJob) -> Installed | None:
    """Run the job's script in a fresh installer container of the runtime image; commit it when the
    script succeeds. None when an older installer of the same key turned out to be there
    (started at the same moment by another run): ours steps back before the script runs.
    The installer is removed whatever happens."""
    files = {**trust_files(), **job.files}
    spec = ContainerSpec(
        image=job.runtime_image_id,
        name=job.name,
        labels={**job.run_labels, LABEL_INSTALLING: job.key},
        network="bridge",  # a way out to the registries; the cell's network has none
        command=("sleep", "infinity"),
        files=tuple(SecretFile(path, content) for path, content in files.items()),
        files_dir=TRUST_DIR,
        user="0",
        mem_limit="2g",
    )
    started = asyncio.get_running_loop().time()
    container = await host.run(spec)
    try:
        oldest = await installers(host, job.key)
        if oldest and oldest[0] != container:
            return None
        await _names_resolve(host, container, job)
        # `timeout` inside ends a stuck install itself, so its output is still there to say why
        limited = ["timeout", "-k", str(KILL_GRACE), f"{job.timeout:.0f}", "sh", "-c", job.script]
        result = await host.exec(container, limited, timeout=job.timeout + KILL_GRACE + 30, user="0", env=job.env)
        if result.exit_code in TIMED_OUT:
            last = one_line(result.stdout + "\n" + result.stderr, 160)
            step = step_of(result.stdout)
            within = f"its {step} step" if step else "it"
            raise DeadlineExceeded(
                f"the install of {job.of} did not finish within {job.timeout:.0f} s: {within} ran out of time "
                f"(last: {last})"
            )
        facts = labels_printed(result.stdout)
        if not result.ok:
            return Installed("", False, facts, result, asyncio.get_running_loop().time() - started)
        labels = {
            LABEL_CACHE: job.cache,
            LABEL_CACHE_KEY: job.key,
            LABEL_CACHE_OF: job.of,
            LABEL_CREATED: datetime.now(UTC).isoformat(timespec="seconds"),
            **facts,
        }
        try:
            image_id = await host.images.commit(container, CACHE_REPOSITORY, job.key, labels)
        except DeadlineExceeded as exc:
            raise DeadlineExceeded(
                f"installing {job.of}: {exc.detail}; the engine is too busy: a re-run installs it again "
                "(nothing was cached), best when the machine is less loaded"
            ) from None
        return Installed(image_id, False, facts, result, asyncio.get_running_loop().time() - started)
    finally:
        await to_the_end(_remove(host, container))


async def _remove(host: EngineHost, container: str) -> None:
    try:
        await host.remove_container(container)
    except EcoreadyError:
        pass  # labelled with the run: the run's final sweep removes it
