"""The grammar of the registry names a matrix or the environment may set (a mirror's
`host[:port][/prefix]`, an upstream registry, an `insecure` host): what image references
allow (the distribution reference grammar: DNS labels of at most 63 letters, digits and
inner hyphens, an IPv4 address, an IPv6 literal in brackets, a port 1-65535; lower-case
path components), checked before anything runs so that no thread, codec or connection
meets a name it cannot take.

Each check answers what is wrong, or None, in words that never repeat the value: a
setting may hold a password (`user:password@host`) and its message lands in CI logs.
"""

from __future__ import annotations

import ipaddress
import re

from ecoready.domain.text import acting_character, escaped

DOCKER_HUB = "docker.io"
_HUB_ALIASES = ("index.docker.io", "registry-1.docker.io", "hub.docker.com")
MAX_LABEL = 63  # a DNS label (RFC 1035); the IDNA codec refuses longer ones
MAX_HOST = 253  # a whole DNS name
MAX_PREFIX = 200  # a repository prefix (a repository path is at most 255 in all)
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\Z")
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*\Z")  # the distribution spec's path component


def upstream_name(registry: str) -> str:
    """A registry as references normalise it (Docker Hub's other names are docker.io)."""
    name = registry.strip().lower().rstrip("/")
    return DOCKER_HUB if name in _HUB_ALIASES else name


def value_problem(text: str) -> str | None:
    """What no setting may hold: nothing, a control or invisible character, whitespace,
    a scheme, credentials."""
    if not text:
        return "is empty"
    char = acting_character(text, layout_ok=False)
    if char is not None:
        return f"holds a control or invisible character ({escaped(char)}) at character {text.index(char) + 1}"
    if any(ch.isspace() for ch in text):
        return "holds whitespace"
    if "@" in text:
        return "holds credentials (user:password@): they go in the docker config (`docker login`), never here"
    if "://" in text:
        return "has a scheme: write host[:port] alone (plain-HTTP hosts go in `insecure`)"
    return None


def host_problem(text: str) -> str | None:
    """`host[:port]`, `[IPv6]:port`: what is wrong, or None."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return "has a '[' without its ']'"
        address, rest = text[1:close], text[close + 1 :]
        if "%" in address or not _ipv6(address):
            return "is not a well-formed IPv6 address in brackets"
        return _port_problem(rest[1:]) if rest.startswith(":") else ("has text after ']'" if rest else None)
    if text.count(":") > 1:
        return "is an IPv6 address without brackets: write [address]:port"
    name, colon, port = text.partition(":")
    return _name_problem(name) or (_port_problem(port) if colon else None)


def _name_problem(name: str) -> str | None:
    if not name:
        return "names no host"
    if not name.isascii():
        return "is not an ASCII host name: write an internationalised name in its xn-- (punycode) form"
    if len(name) > MAX_HOST:
        return f"is a host name of {len(name)} characters; at most {MAX_HOST}"
    labels = name.split(".")
    for i, label in enumerate(labels, start=1):
        if len(label) > MAX_LABEL:
            return f"has a label (part {i} of its host name) of {len(label)} characters; at most {MAX_LABEL}"
        if not _LABEL.match(label):
            what = "is empty" if not label else "is not letters, digits and inner hyphens"
            return f"has a label (part {i} of its host name) that {what}"
    if all(label.isdigit() for label in labels) and not _ipv4(name):
        return "is not an IPv4 address"
    return None


def _port_problem(port: str) -> str | None:
    if not (port.isdigit() and port.isascii() and len(port) <= 5 and 0 < int(port) <= 65535):
        return "has a port that is not a number from 1 to 65535"
    return None


def prefix_problem(prefix: str) -> str | None:
    """A mirror's repository prefix (`a/b`): lower-case path components."""
    if not prefix:
        return None
    if len(prefix) > MAX_PREFIX:
        return f"has a prefix of {len(prefix)} characters; at most {MAX_PREFIX}"
    for i, part in enumerate(prefix.split("/"), start=1):
        if not _COMPONENT.match(part):
            what = "is empty" if not part else "is not lower-case letters and digits, with . _ - between them"
            return f"has a prefix whose part {i} {what}"
    return None


def _ipv4(text: str) -> bool:
    return _parses(ipaddress.IPv4Address, text)


def _ipv6(text: str) -> bool:
    return _parses(ipaddress.IPv6Address, text)


def _parses(kind: type[ipaddress.IPv4Address | ipaddress.IPv6Address], text: str) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True
