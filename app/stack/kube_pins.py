"""Arch pins of a Kubernetes pod spec (pure): where a workload is held to one arch, and
the YAML path of each place, so the migration plan can say which of them can go.

A pin is a `nodeSelector` on `kubernetes.io/arch` (or the older `beta.kubernetes.io/arch`),
a node affinity on those labels (required terms: OR of terms, AND of expressions;
preferred terms: a preference, kept as a pin all the same), or a toleration of an arch
taint, which only lets a pod onto that arch's tainted nodes: it is listed with the pin
when there is one, and said when it stands alone. Other keys are not arch pins and are not
read. Every list is walked whole, once: the time is linear in what the reader built, which
its bounds hold (bytes, alias expansion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ecoready.domain.model import normalize_arch

ARCH_LABELS = ("kubernetes.io/arch", "beta.kubernetes.io/arch")
ARCHES = ("amd64", "arm64")  # what a pin is read against: the arches a matrix checks


@dataclass(frozen=True)
class ArchPins:
    """What one pod spec says about arches."""

    arches: tuple[str, ...] = ARCHES  # where it may run (required selectors and affinities)
    places: tuple[str, ...] = ()  # the YAML path of each pin (and toleration), as written
    by: tuple[str, ...] = ()  # what pins it: "nodeSelector", "node affinity", "preferred node affinity"
    notes: tuple[str, ...] = ()  # what could not be read, a line each

    @property
    def platform(self) -> str:
        """`linux/<arch>` when the pins leave one arch; else ''."""
        return f"linux/{self.arches[0]}" if len(self.arches) == 1 and self.by else ""


def _arches(values: object) -> set[str] | None:
    if not isinstance(values, list):
        return None
    found = {normalize_arch(v) for v in values if isinstance(v, str)}
    return {a for a in found if a in ARCHES}


def _expression(expr: object) -> tuple[set[str], bool] | None:
    """(the arches a matchExpression on an arch label allows, whether it is one); None when
    it is not understood."""
    if not isinstance(expr, dict) or expr.get("key") not in ARCH_LABELS:
        return set(ARCHES), False
    operator, values = expr.get("operator"), _arches(expr.get("values"))
    if operator == "In" and values is not None:
        return values, True
    if operator == "NotIn" and values is not None:
        return set(ARCHES) - values, True
    if operator == "Exists":
        return set(ARCHES), True
    if operator == "DoesNotExist":
        return set(), True
    return None


def _term(term: object, where: str, places: list[str], notes: list[str]) -> set[str]:
    """The arches one nodeSelectorTerm allows (its expressions ANDed)."""
    allowed = set(ARCHES)
    expressions = term.get("matchExpressions") if isinstance(term, dict) else None
    if expressions is None:
        return allowed
    if not isinstance(expressions, list):
        notes.append(f"`{where}.matchExpressions` is not a list: not read")
        return allowed
    for i, expr in enumerate(expressions):
        read = _expression(expr)
        if read is None:
            notes.append(f"`{where}.matchExpressions[{i}]` on an arch label is not understood: not read")
            continue
        arches, on_arch = read
        if on_arch:
            places.append(f"{where}.matchExpressions[{i}]")
            allowed &= arches
    return allowed


def read_pins(
    pod: Mapping[str, object], prefix: str, affinity: Sequence[str] = ("affinity", "nodeAffinity")
) -> ArchPins:
    """The arch pins of a pod spec at YAML path `prefix` (`spec.template.spec`); `affinity`
    is where its node affinity lives (operators nest it: `affinity.advanced.nodeAffinity`)."""
    places: list[str] = []
    notes: list[str] = []
    by: list[str] = []
    allowed = _selector(pod.get("nodeSelector"), prefix, places, notes, by)
    node = at(pod, affinity)
    if isinstance(node, dict):
        allowed &= _affinity(node, ".".join((prefix, *affinity)), places, notes, by)
    tolerated = _tolerations(pod.get("tolerations"), f"{prefix}.tolerations", notes)
    if tolerated and by:
        places.extend(place for place, _arch in tolerated)
    elif tolerated:
        notes.extend(
            f"`{place}` tolerates the {arch} nodes' taint and nothing holds it to one arch: it may land on either"
            for place, arch in tolerated
        )
    if by and not allowed:
        notes.append(f"the arch pins under `{prefix}` leave no arch it may run on")
    return ArchPins(tuple(a for a in ARCHES if a in allowed), tuple(places), tuple(dict.fromkeys(by)), tuple(notes))


def _selector(selector: object, prefix: str, places: list[str], notes: list[str], by: list[str]) -> set[str]:
    """The arches a `nodeSelector` allows."""
    allowed = set(ARCHES)
    if selector is not None and not isinstance(selector, dict):
        notes.append(f"`{prefix}.nodeSelector` is not a mapping: not read")
    if not isinstance(selector, dict):
        return allowed
    for label in ARCH_LABELS:
        value = selector.get(label)
        if value is None:
            continue
        arch = normalize_arch(value) if isinstance(value, str) else None
        place = f'{prefix}.nodeSelector["{label}"]'
        places.append(place)
        if arch is None:
            notes.append(f"`{place}` is {value!r}, not an arch: not read")
            continue
        allowed &= {arch}
        by.append("nodeSelector")
    return allowed


def _affinity(node: Mapping[str, object], base: str, places: list[str], notes: list[str], by: list[str]) -> set[str]:
    """The arches a node affinity allows: required terms ORed; a preferred term that leaves
    one arch is a pin too, unless a selector or required term pins already."""
    allowed = set(ARCHES)
    required = at(node, ("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"))
    if isinstance(required, list) and required:
        before = len(places)
        union: set[str] = set()
        for i, term in enumerate(required):
            union |= _term(
                term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]", places, notes
            )
        if len(places) > before:
            allowed &= union
            by.append("node affinity")
    preferred = node.get("preferredDuringSchedulingIgnoredDuringExecution")
    for i, item in enumerate(preferred if isinstance(preferred, list) else []):
        weight = item.get("weight") if isinstance(item, dict) else None
        term = item.get("preference") if isinstance(item, dict) else None
        before = len(places)
        prefers = _term(term, f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference", places, notes)
        if len(places) > before and isinstance(weight, int) and weight > 0 and len(prefers) == 1:
            if "nodeSelector" not in by and "node affinity" not in by:
                allowed &= prefers
            by.append("preferred node affinity")
    return allowed


def _tolerations(value: object, where: str, notes: list[str]) -> list[tuple[str, str]]:
    """(path, arch) of each toleration of an arch taint (`kubernetes.io/arch=arm64:NoSchedule`)."""
    if value is None:
        return []
    if not isinstance(value, list):
        notes.append(f"`{where}` is not a list: not read")
        return []
    found = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or item.get("key") not in ARCH_LABELS:
            continue
        raw = item.get("value")
        arch = normalize_arch(raw) if isinstance(raw, str) else None
        found.append((f"{where}[{i}]", arch or "any arch's"))
    return found


def at(node: object, path: Sequence[str]) -> object:
    """The value at a path of mapping keys; None where one is missing or not a mapping."""
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node
