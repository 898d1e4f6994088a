"""Platform fitness (pure): what a container of one arch on one host sees, and the known
hazards for databases there, one sentence each.

`SURVEY_SCRIPT` runs inside a short-lived container of the arch (app/run/survey.py starts it);
it prints sections (`==name`) that `fitness_from_survey` reads. Everything comes from what
the database itself would see: /proc/cpuinfo (under qemu-user: qemu's own), the auxiliary
vector the dynamic loader gets (`LD_SHOW_AUXV`), the glibc-hwcaps levels the loader
supports (`ld.so --help`), sysfs for THP, NUMA and caches, `getconf PAGESIZE`.
The text is container output: parsed defensively, never trusted to be well formed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ecoready.domain.model import UNAME_MACHINE, Hazard, PlatformFitness, normalize_arch

# POSIX sh and coreutils only (getconf, uname, cat): database images have them, and
# nothing here needs the network. Only the first processor block of /proc/cpuinfo is
# printed (a 192-CPU host has thousands of lines), plus the count of processors.
SURVEY_SCRIPT = r"""
echo "==uname"; uname -m; uname -r
echo "==nproc"; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null
echo "==pagesize"; getconf PAGESIZE 2>/dev/null
echo "==auxv"; LD_SHOW_AUXV=1 /bin/true 2>/dev/null
echo "==thp"; cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null
echo "==numa"; for n in /sys/devices/system/node/node[0-9]*; do [ -d "$n" ] && echo "${n##*/}"; done
echo "==cacheline"; cat /sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size 2>/dev/null
echo "==maxfreq"; cat /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq 2>/dev/null
echo "==hwcaps"
for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do
  [ -x "$l" ] && "$l" --help 2>/dev/null | while IFS= read -r line; do
    case "$line" in *x86-64-v*) echo "$line";; esac; done
done
echo "==cpuinfo"
n=0; first=1
while IFS= read -r line; do
  case "$line" in processor*) n=$((n+1));; esac
  if [ "$first" = 1 ]; then if [ -z "$line" ]; then first=0; else echo "$line"; fi; fi
done < /proc/cpuinfo
echo "==processors"; echo "$n"
echo "==end"
"""

MAX_FIELD = 160  # container text kept in the report is bounded

# The CPU features that matter to databases, as /proc/cpuinfo names them, and how the
# report names them. arm64: LSE atomics (mutexes, counters), CRC32 (InnoDB and binlog
# checksums), PMULL (CRC32C folding), SHA1/SHA2 (TLS, SHA2 passwords). amd64: SSE4.2's
# crc32 instruction, PCLMULQDQ (CRC folding), AVX2.
ARM64_FEATURES: Mapping[str, str] = {
    "atomics": "lse",
    "crc32": "crc32",
    "pmull": "pmull",
    "sha1": "sha1",
    "sha2": "sha2",
}
AMD64_FEATURES: Mapping[str, str] = {"sse4_2": "sse4.2", "pclmulqdq": "pclmul", "avx2": "avx2"}

# arm64 AT_HWCAP bits (Linux arch/arm64/include/uapi/asm/hwcap.h): used when a kernel
# prints no Features line.
ARM64_HWCAP_BITS: Mapping[str, int] = {"pmull": 4, "sha1": 5, "sha2": 6, "crc32": 7, "atomics": 8}

# x86-64 microarchitecture levels (x86-64 psABI), in /proc/cpuinfo's flag names
# (sse3 is "pni", lzcnt is "abm").
X86_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("x86-64-v2", frozenset({"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"})),
    ("x86-64-v3", frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"})),
    ("x86-64-v4", frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})),
)

# MIDR implementer -> (vendor, {part -> core}), as util-linux's lscpu names them
# (sys-utils/lscpu-arm.c); the server parts people run databases on.
ARM_PARTS: Mapping[str, tuple[str, Mapping[str, str]]] = {
    "0x41": (
        "ARM",
        {
            "0xd03": "Cortex-A53",
            "0xd07": "Cortex-A57",
            "0xd08": "Cortex-A72",
            "0xd0b": "Cortex-A76",
            "0xd0c": "Neoverse-N1",
            "0xd40": "Neoverse-V1",
            "0xd49": "Neoverse-N2",
            "0xd4f": "Neoverse-V2",
            "0xd84": "Neoverse-V3",
            "0xd8e": "Neoverse-N3",
        },
    ),
    "0x48": ("HiSilicon", {"0xd01": "TaiShan-v110", "0xd02": "TaiShan-v120"}),
    "0xc0": ("Ampere", {"0xac3": "Ampere-1", "0xac4": "Ampere-1a"}),
    "0x43": ("Cavium", {"0x0af": "ThunderX2-99xx"}),
    "0x46": ("Fujitsu", {"0x001": "A64FX"}),
}

# Components whose published binaries are known to fail on 64 KiB pages, by probe kind:
# they bundle jemalloc configured for 4 KiB pages, which aborts at start with
# "<jemalloc>: Unsupported system page size" (jemalloc/jemalloc#467).
NEEDS_64K_SAFE_BUILD: Mapping[str, str] = {
    "proxysql": "ProxySQL (bundled jemalloc built for 4 KiB pages: sysown/proxysql#3252, #4863)",
}


@dataclass(frozen=True)
class CpuInfo:
    """The first processor block of /proc/cpuinfo, and how many processors it listed."""

    model: str = ""
    processors: int = 0
    mhz: float | None = None
    flags: frozenset[str] = frozenset()  # x86 "flags" or arm "Features"
    implementer: str = ""
    part: str = ""
    vendor: str = ""  # x86 vendor_id ("GenuineIntel", "AuthenticAMD")
    family: int | None = None  # x86 "cpu family"
    model_number: int | None = None  # x86 "model"

    @property
    def cpu_part(self) -> str:
        """The CPU's part as app/domain/cpus.py looks it up: "0x41:0xd0c" (arm64 MIDR
        implementer and part) or "GenuineIntel:0x6:0x55" (x86 vendor, family, model); "" when
        the kernel gives neither (qemu-user shows its own)."""
        if self.implementer and self.part:
            return f"{self.implementer}:{self.part}"
        if self.vendor and self.family is not None and self.model_number is not None:
            return f"{self.vendor}:{self.family:#x}:{self.model_number:#x}"
        return ""


def sections(text: str) -> dict[str, list[str]]:
    """`==name` headed sections of the survey output (lines stripped of trailing space)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("=="):
            current = out.setdefault(line[2:].strip(), [])
        elif current is not None:
            current.append(line)
    return out


def parse_cpuinfo(text: str | Iterable[str]) -> CpuInfo:
    """Model, clock, flags and MIDR of the first processor block; processors counted over
    all of it. Handles x86 (`model name`, `flags`) and arm64 (`Features`, `CPU part`)."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    fields: dict[str, str] = {}
    processors = 0
    in_first = True
    for line in lines:
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if not sep:
            if not line.strip() and processors:
                in_first = False
            continue
        if key == "processor" and value.strip().isdigit():
            processors += 1
        if in_first and key not in fields:
            fields[key] = value.strip()
    flags = fields.get("flags") or fields.get("features") or ""
    implementer = fields.get("cpu implementer", "").lower()
    part = fields.get("cpu part", "").lower()
    model = fields.get("model name", "")
    named = arm_core_name(implementer, part)
    if named and (implementer in ARM_PARTS or not model):  # arm64 kernels print no model name
        model = named
    return CpuInfo(
        model=_short(model),
        processors=processors,
        mhz=_float(fields.get("cpu mhz", "")),
        flags=frozenset(flags.split()),
        implementer=implementer,
        part=part,
        vendor=fields.get("vendor_id", ""),
        family=_int(fields.get("cpu family", "")),
        model_number=_int(fields.get("model", "")),
    )


def arm_core_name(implementer: str, part: str) -> str:
    """ "ARM Neoverse-N1" for MIDR implementer 0x41 part 0xd0c; "" when unknown."""
    if not implementer:
        return ""
    vendor, parts = ARM_PARTS.get(implementer, ("", {}))
    core = parts.get(part, "")
    if vendor and core:
        return f"{vendor} {core}"
    return f"{vendor or 'implementer ' + implementer} part {part}" if part else ""


def auxv(lines: Iterable[str]) -> dict[str, str]:
    """`LD_SHOW_AUXV=1` output: AT_HWCAP, AT_HWCAP2, AT_PAGESZ, AT_PLATFORM, ..."""
    out: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key.startswith("AT_"):
            out[key.strip()] = value.strip()
    return out


def arm64_flags_from_hwcap(hwcap: str) -> frozenset[str]:
    try:
        bits = int(hwcap, 16)
    except ValueError:
        return frozenset()
    return frozenset(name for name, bit in ARM64_HWCAP_BITS.items() if bits >> bit & 1)


def x86_level_from_flags(flags: Iterable[str]) -> str:
    """The highest x86-64 level all of whose flags are present ("x86-64" for the baseline)."""
    have = set(flags)
    level = "x86-64"
    for name, needed in X86_LEVELS:
        if not needed <= have:
            break
        level = name
    return level


def x86_level_from_hwcaps(lines: Iterable[str]) -> str:
    """The highest level glibc's loader reports as supported (`ld.so --help`, glibc >= 2.33)."""
    supported = []
    for line in lines:
        match = re.match(r"\s*(x86-64-v\d)\s*\(supported", line)
        if match:
            supported.append(match.group(1))
    return max(supported) if supported else ""


def thp_mode(lines: Sequence[str]) -> str:
    """The bracketed choice of `always [madvise] never`."""
    for line in lines:
        match = re.search(r"\[(\w+)\]", line)
        if match:
            return match.group(1)
    return ""


def fitness_from_survey(
    text: str,
    *,
    host: str,
    arch: str,
    emulated: bool,
    image: str = "",
    kinds: Iterable[str] = (),
) -> PlatformFitness:
    """Read the survey output; `kinds` are the probe kinds the run puts on this host and
    arch (to name the components a hazard concerns)."""
    got = sections(text)
    if "uname" not in got:
        first = next((ln for ln in text.splitlines() if ln.strip()), "no output")
        return PlatformFitness(host, arch, emulated, image=image, error=f"survey did not run: {_short(first)}")
    uname = got.get("uname", [])
    cpu = parse_cpuinfo(got.get("cpuinfo", []))
    vector = auxv(got.get("auxv", []))
    machine = _short(uname[0]) if uname else ""
    seen_arch = normalize_arch(machine) or arch
    flags = cpu.flags
    if seen_arch == "arm64" and not flags and "AT_HWCAP" in vector:
        flags = arm64_flags_from_hwcap(vector["AT_HWCAP"])
    wanted = ARM64_FEATURES if seen_arch == "arm64" else AMD64_FEATURES if seen_arch == "amd64" else {}
    level = ""
    if seen_arch == "amd64":
        level = x86_level_from_hwcaps(got.get("hwcaps", []))
        if not level and "sse2" in flags:  # an x86 cpuinfo (not the host's, under emulation)
            level = x86_level_from_flags(flags)
    page = _int(_first(got.get("pagesize", []))) or _int(vector.get("AT_PAGESZ", ""))
    max_khz = _int(_first(got.get("maxfreq", [])))
    fitness = PlatformFitness(
        host=host,
        arch=arch,
        emulated=emulated,
        image=image,
        machine=machine,
        kernel=_short(uname[1]) if len(uname) > 1 else "",
        cpu_model=cpu.model,
        cpu_part="" if emulated else cpu.cpu_part,  # qemu-user's cpuinfo is qemu's model, not a machine
        cpus=_int(_first(got.get("nproc", []))) or cpu.processors or _int(_first(got.get("processors", []))) or 0,
        mhz=round(max_khz / 1000, 1) if max_khz else cpu.mhz,
        features=tuple(name for key, name in wanted.items() if key in flags),
        missing=tuple(name for key, name in wanted.items() if key not in flags) if flags else (),
        x86_level=level,
        cache_line=_int(_first(got.get("cacheline", []))),
        page_size=page,
        thp=thp_mode(got.get("thp", [])),
        numa_nodes=len([n for n in got.get("numa", []) if n.startswith("node")]) or None,
    )
    problems = []
    if seen_arch != arch:
        problems.append(f"the container ran as {machine or 'an unknown arch'}, not {UNAME_MACHINE.get(arch, arch)}")
    fitness = replace(fitness, hazards=hazards(fitness, kinds))
    return replace(fitness, error="; ".join(problems)) if problems else fitness


def hazards(f: PlatformFitness, kinds: Iterable[str] = ()) -> tuple[Hazard, ...]:
    """The known hazards of a platform for databases, one sentence each."""
    found: list[Hazard] = []
    if f.emulated:
        found.append(
            Hazard(
                "emulated",
                f"{f.arch} runs under emulation here: it shows whether things start, but its numbers are "
                "not performance (qemu-user is several times slower and lacks io_uring and native AIO)",
            )
        )
    if f.page_size and f.page_size > 4096:
        concerned = [NEEDS_64K_SAFE_BUILD[k] for k in dict.fromkeys(kinds) if k in NEEDS_64K_SAFE_BUILD]
        who = (
            f"; in this run: {', '.join(concerned)}"
            if concerned
            else "; known to need a 64k-safe build: " + ", ".join(NEEDS_64K_SAFE_BUILD.values())
        )
        found.append(
            Hazard(
                "page-64k" if f.page_size >= 65536 else "page-large",
                f"{f.page_size // 1024} KiB pages: binaries that bundle jemalloc or tcmalloc built for 4 KiB pages "
                f"abort at start (`<jemalloc>: Unsupported system page size`){who}",
            )
        )
    if f.arch == "arm64" and "lse" in f.missing:
        found.append(
            Hazard(
                "no-lse",
                "no LSE atomics (an ARMv8.0 core): mutexes and counters fall back to exclusive load/store "
                "loops that scale badly when many threads contend; prefer Neoverse N1 or newer",
            )
        )
    crc = {"arm64": ("crc32", "pmull"), "amd64": ("sse4.2", "pclmul")}.get(f.arch, ())
    lacking = [name for name in crc if name in f.missing]
    if lacking:
        found.append(
            Hazard(
                "no-crc32",
                f"no {' or '.join(lacking)}: InnoDB and binlog checksums (CRC-32C) run in software, "
                "costing CPU on every page read and write",
            )
        )
    if f.arch == "amd64" and f.x86_level in ("x86-64", "x86-64-v2"):
        needs = (
            "images built on UBI 9 / Oracle Linux 9 (MySQL 8.4 and 9.x, Percona Server 8.4, PXC 8.4) need "
            "x86-64-v2 and stop with `CPU does not support x86-64-v2`"
            if f.x86_level == "x86-64"
            else "images built on UBI 10 / RHEL 10 need x86-64-v3 and stop with `CPU does not support x86-64-v3`"
        )
        found.append(Hazard("x86-64-level", f"this CPU offers {f.x86_level} only: {needs}"))
    if f.thp == "always":
        found.append(
            Hazard(
                "thp-always",
                "transparent huge pages = always: databases see latency spikes and memory bloat from "
                "compaction and khugepaged; set it to madvise or never",
            )
        )
    if f.numa_nodes and f.numa_nodes > 1:
        found.append(
            Hazard(
                "numa",
                f"{f.numa_nodes} NUMA nodes: a server spread over them pays remote-memory latency; pin it to "
                "one node (cpuset) or interleave its memory (innodb_numa_interleave)",
            )
        )
    if f.cache_line and f.cache_line != 64:
        found.append(
            Hazard(
                "cache-line",
                f"{f.cache_line}-byte cache lines: data padded for 64-byte lines shares lines here (false "
                "sharing under contention)",
            )
        )
    return tuple(found)


def failed(host: str, arch: str, emulated: bool, reason: str, image: str = "") -> PlatformFitness:
    """A platform that could not be asked, and why (emulation still named as a hazard)."""
    base = PlatformFitness(host, arch, emulated, image=image, error=_short(reason, 300))
    return replace(base, hazards=hazards(base))


def _first(lines: Sequence[str]) -> str:
    for line in lines:
        if line.strip():
            return line.strip()
    return ""


def _int(text: str) -> int | None:
    text = text.strip()
    if text.lower().startswith("0x"):
        try:
            return int(text, 16)
        except ValueError:
            return None
    return int(text) if text.isdigit() and len(text) < 19 else None


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < 1e6 else None


def _short(text: str, limit: int = MAX_FIELD) -> str:
    text = "".join(ch for ch in text if ch.isprintable()).strip()
    return text[:limit]
