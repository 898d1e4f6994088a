"""Which services a service's environment names as a host (pure): `db`, `db:3306`,
`mysql://app@db/shop`, or another host name of theirs (a Kubernetes Service's
`db.shop.svc`). A host stands in a value where it is not preceded by a name character
(`[\\w.-]`) nor followed by one other than a dot.

Indexed once for a whole stack, so a stack of thousands of services (`kubectl get pods -A`)
costs each service the words of its own environment, not a look at every other service:
each value is cut into runs of name characters, a run stands for itself and for each of its
parts before a dot, and each of those is looked up among the services' host names. A host
name that holds another character (none that Kubernetes or compose allow) is searched for
as it is.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from ecoready.stack.services import Service

_RUN = re.compile(r"[\w.-]+")


def _words(values: Iterable[str]) -> set[str]:
    """Every text that stands as a host in `values`: each run of name characters, and each
    part of it before a dot."""
    found: set[str] = set()
    for value in values:
        for run in _RUN.findall(value):
            found.add(run)
            dot = run.find(".")
            while dot >= 0:
                found.add(run[:dot])
                dot = run.find(".", dot + 1)
    return found


class Hosts:
    """The host names of a stack's services (each one's name and aliases), indexed."""

    def __init__(self, by_name: Mapping[str, Service]) -> None:
        self.rank = {name: i for i, name in enumerate(by_name)}
        self.index: dict[str, list[str]] = {}
        self.odd: list[tuple[str, re.Pattern[str]]] = []  # host names with another character
        for name, service in by_name.items():
            for host in dict.fromkeys((name, *service.aliases)):
                if _RUN.fullmatch(host):
                    self.index.setdefault(host, []).append(name)
                else:
                    self.odd.append((name, re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w-])")))

    def named(self, service: Service, among: Collection[str] | None = None) -> list[str]:
        """The other services `service`'s environment names as a host (those of `among`
        only, when given), in the stack's order."""
        values = service.environment.values()
        found = {name for word in _words(values) for name in self.index.get(word, ())}
        found.update(name for name, token in self.odd if any(token.search(v) for v in values))
        found.discard(service.name)
        if among is not None:
            found.intersection_update(among)
        return sorted(found, key=lambda name: self.rank.get(name, len(self.rank)))
