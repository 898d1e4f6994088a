"""Probes: one module per probe kind. Each drives a ProbeContext and never touches docker.

`KINDS` describes every kind without importing its module, so `ecoready validate` stays
fast: the name, the module, whether it needs a backend server, whether it can be one, and
the options it accepts in `[components.options]`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probes.base import Probe


@dataclass(frozen=True)
class ProbeKind:
    name: str
    module: str
    needs_backend: bool = False
    serves_sql: bool = False  # other components may name it as their backend
    options: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    required: tuple[str, ...] = ()  # options that must be given
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # allowed values of an option


_SERVER_OPTIONS: Mapping[str, type | tuple[type, ...]] = {
    "flavor": str,  # mariadb | mysql | percona: which env/client names the image uses
    "args": list,  # extra server arguments
    "env": dict,  # extra environment (never secrets: those are generated per run)
}

# The connector probe's languages: one smoke program each in the connectors image
# (Python twice: one program, two drivers).
CONNECTOR_LANGUAGES = (
    "c",
    "cpp",
    "java",
    "python-pymysql",
    "python-mysqlclient",
    "go",
    "nodejs",
    "php",
    "perl",
    "ruby",
)

_CONNECTOR_OPTIONS: Mapping[str, type | tuple[type, ...]] = {
    "language": str,  # which smoke program runs (CONNECTOR_LANGUAGES)
    "password": str,  # a literal the connector uses instead of the backend's password (failure tests)
}

KINDS: Mapping[str, ProbeKind] = {
    k.name: k
    for k in (
        ProbeKind("server", "probes.server", serves_sql=True, options=_SERVER_OPTIONS),
        ProbeKind(
            "connector",
            "probes.connector",
            needs_backend=True,
            options=_CONNECTOR_OPTIONS,
            required=("language",),
            choices={"language": CONNECTOR_LANGUAGES},
        ),
    )
}


def load(kind: str) -> type[Probe]:
    """The probe class of a kind (imports its module on first use)."""
    module = importlib.import_module(KINDS[kind].module)
    cls: type[Probe] = module.PROBE
    return cls
