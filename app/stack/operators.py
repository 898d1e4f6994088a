"""Operators' custom resources -> the stack's services (pure): each resource names the
images of its parts in its own fields; an empty field means the image the operator uses
by default (`operator_catalog.py`, with where it was read: the row's note says the image
is the default, so the user can put their own).

Each part becomes a service named `<resource>-<part>` (the resource's name for its one
server), with what it is (`known.py`), the part it works with, the Kubernetes Service
names the operator gives it (so an app naming them finds its backend), the arch pins of
the part's pod fields (`kube_pins.py`) and whether it stays up or runs to completion.
A part that is off is a line naming its image; so is an init container the operator adds
with another part's image; a resource of an operator ecoready does not read is a line
naming what that operator would run for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ecoready.stack.kube_pins import read_pins
from ecoready.stack.operator_catalog import OPERATORS, UNREAD, Operator, Part
from ecoready.stack.services import Service


def _at(node: object, path: Sequence[str]) -> object:
    for key in path:
        if isinstance(node, list) and key.startswith("name="):
            wanted = key.removeprefix("name=")
            node = next((i for i in node if isinstance(i, dict) and i.get("name") == wanted), None)
            continue
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


@dataclass(frozen=True)
class _Resource:
    kind: str
    name: str
    where: str
    operator: Operator
    values: Mapping[str, str]  # {name} and the operator's variables


def unread_operator(obj: Mapping[str, object]) -> str:
    """': what the operator runs for it' when the resource is of an operator ecoready
    knows but does not read; else ''."""
    kind, api = obj.get("kind"), obj.get("apiVersion")
    unread = UNREAD.get(kind) if isinstance(kind, str) else None
    if unread is None or not isinstance(api, str) or api.split("/", 1)[0] != unread.group:
        return ""
    return (
        f"; {unread.what} runs for it (by default, as of {unread.defaults_from}): {', '.join(unread.images)}: "
        "check those with `--images` or a matrix row each"
    )


def read_operator(obj: Mapping[str, object], where: str) -> tuple[list[Service], list[str]] | None:
    """(services, lines) of an operator's resource; None when it is no resource of the
    operators of `operator_catalog.py`."""
    kind, api = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api, str):
        return None
    operator = OPERATORS.get(kind)
    if operator is None or api.split("/", 1)[0] != operator.group:
        return None
    found = _at(obj, ("metadata", "name"))
    name = found if isinstance(found, str) and found else kind.lower()
    values = {"name": name}
    for var, (paths, default) in operator.variables.items():
        values[var] = next((v for p in paths if isinstance(v := _at(obj, p), str) and v), default)
    resource = _Resource(kind, name, where, operator, values)
    notes = [f"{where}: {operator.note}"] if operator.note else []
    services: dict[str, Service] = {}
    for part in operator.parts:
        service = _part(obj, resource, part, services, notes)
        if service is not None:
            services[part.name] = service
    found_services = list(services.values())
    for path in operator.extra_containers:
        found_services.extend(_extra_containers(obj, resource, path, notes))
    return found_services, notes


def _image(obj: Mapping[str, object], resource: _Resource, part: Part) -> tuple[str, str]:
    """(the part's image, how it was found: '' when the resource names it)."""
    for path in (part.image_at, *part.image_or) if part.image_at else part.image_or:
        raw = _at(obj, path)
        if isinstance(raw, str) and raw:
            return raw, ""
    if not part.default:
        return "", ""
    image = part.default.format(**resource.values)
    at = ".".join(part.image_at) if part.image_at else ""
    said = f"`{at}` is empty" if at else "the resource names no image"
    operator = resource.operator
    return image, f"{said}: checked with the operator's default {image} (as of {operator.defaults_from})"


def _enabled(obj: Mapping[str, object], part: Part, made: Mapping[str, Service]) -> str:
    """'' when the part is made, else why not."""
    if part.off_when is not None and _at(obj, part.off_when) not in (None, False, ""):
        return f"`{'.'.join(part.off_when)}` is set"
    if part.requires is not None and part.requires not in made:
        return f"it comes only with {part.requires}"
    if part.enabled_at is None:
        return ""
    value = _at(obj, part.enabled_at)
    if value is None:
        on = part.enabled_default
    else:  # `enabled: true`; a section that is there (`vtadmin: {}`); a list that is not empty
        on = value if isinstance(value, bool) else isinstance(value, dict) or bool(value)
    return "" if on else f"`{'.'.join(part.enabled_at)}` is off"


def _part(
    obj: Mapping[str, object], resource: _Resource, part: Part, made: Mapping[str, Service], notes: list[str]
) -> Service | None:
    where, name = resource.where, resource.name
    image, default_note = _image(obj, resource, part)
    label = part.name or name
    off = _enabled(obj, part, made)
    if off:
        notes.append(f"{where}: {off}: {label} ({image or 'no image named'}) left out")
        return None
    if not image:
        at = ".".join(part.image_at) if part.image_at else "its image"
        operator = resource.operator
        notes.append(f"{where}: `{at}` is empty and the operator has no default ({operator.defaults_from}): left out")
        return None
    if part.same_image_as is not None:
        other = made.get(part.same_image_as)
        if other is not None and other.image == image:
            notes.append(
                f"{where}: {part.what or label} ({part.name}) runs {image}, the image of {other.name}, "
                "before the pod starts: checked by that row, not a second one"
            )
            return None
    return _service(obj, resource, part, image, default_note)


def _service(obj: Mapping[str, object], resource: _Resource, part: Part, image: str, default_note: str) -> Service:
    where, name = resource.where, resource.name
    pod = _at(obj, part.pod_at) if part.pod_at else None
    pins = read_pins(pod, ".".join(part.pod_at or ()), part.affinity) if isinstance(pod, dict) else None
    depends = (f"{name}-{part.backend}" if part.backend else name,) if part.backend is not None else ()
    if resource.kind == "MaxScale" and not part.name:
        ref = _at(obj, ("spec", "mariaDbRef", "name"))
        depends = (ref,) if isinstance(ref, str) and ref else ()
    runs = part.what or part.name or "the server"
    return Service(
        name=f"{name}-{part.name}" if part.name else name,
        image=image,
        role=part.role,
        depends_on=depends,
        aliases=tuple(s.format(**resource.values) for s in part.services),
        platform=pins.platform if pins else "",
        pinned_by=f"{' and '.join(pins.by)} ({where})" if pins else "",
        pinned_at=tuple(f"{where}: {p}" for p in pins.places) if pins and pins.platform else (),
        notes=(
            *([f"{where}: {default_note}"] if default_note else []),
            *(f"{where}: {n}" for n in (pins.notes if pins else ())),
        ),
        daemon=not part.job,
        runs_as=f"{runs}, for {resource.kind}/{name} ({resource.operator.what})",
    )


def _extra_containers(
    obj: Mapping[str, object], resource: _Resource, path: Sequence[str], notes: list[str]
) -> list[Service]:
    """The user's own containers in the resource's pods (a MariaDB's `initContainers` and
    `sidecarContainers`, a MOCO cluster's other `podTemplate` containers): plain images."""
    items = _at(obj, path)
    if not isinstance(items, list):
        return []
    where, at = resource.where, ".".join(path)
    init = path[-1] == "initContainers"
    found = []
    for i, item in enumerate(items):
        image = item.get("image") if isinstance(item, dict) else None
        cname = item.get("name") if isinstance(item, dict) else None
        if isinstance(cname, str) and cname in resource.operator.skip_containers:
            continue
        if not isinstance(image, str) or not image:
            notes.append(f"{where}: `{at}[{i}]` names no image: left out")
            continue
        label = cname if isinstance(cname, str) and cname else f"{path[-1]}-{i}"
        found.append(
            Service(
                name=f"{resource.name}-{label}",
                image=image,
                notes=(
                    f"{where}: `{at}[{i}]` runs in the {resource.kind} pod: its command and environment are not read",
                ),
                daemon=not init,
                runs_as=f"{'an init container' if init else 'a container'} of {resource.kind}/{resource.name}",
            )
        )
    return found
