"""What a probe holds on to: its containers, and the SQL endpoints of servers it started."""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.probe_api.secrets import Secret


@dataclass(frozen=True)
class Container:
    id: str
    name: str
    alias: str  # its name on the cell network
    role: str
    image: str
    image_id: str  # what the engine ran (content-addressed: the same id, the same files)


@dataclass(frozen=True)
class Endpoint:
    """How other containers on the cell network reach a SQL server this probe started."""

    host: str  # network alias
    port: int
    user: str
    password: Secret
    container: Container  # the server's own container: has a client binary
    flavor: str = "mariadb"
    x_port: int | None = None  # the X Protocol's port (MySQL's X Plugin); None: the server has none
