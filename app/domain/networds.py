"""A failed connection in the user's words (pure): `cannot resolve the name`, `connection
refused`, `timed out`, never an exception's class name or errno. The kinds are data
(`NetFailure`), so a remedy can depend on them without parsing the words back."""

from __future__ import annotations

import enum
import errno
import socket
import ssl
from collections.abc import Iterator


class NetFailure(str, enum.Enum):
    NAME = "name"
    REFUSED = "refused"
    TIMEOUT = "timeout"
    NO_ROUTE = "no-route"
    TLS = "tls"
    UNTRUSTED = "untrusted"  # the TLS handshake refused the server's certificate
    CLOSED = "closed"
    OTHER = "other"


WORDS = {
    NetFailure.NAME: "cannot resolve the name",
    NetFailure.REFUSED: "connection refused",
    NetFailure.TIMEOUT: "timed out",
    NetFailure.NO_ROUTE: "no route to it (network unreachable)",
    NetFailure.TLS: "the TLS handshake failed",
    NetFailure.UNTRUSTED: "its TLS certificate is not trusted here",
    NetFailure.CLOSED: "the connection was closed before an answer",
    NetFailure.OTHER: "the connection failed",
}
_ERRNOS = {
    errno.ECONNREFUSED: NetFailure.REFUSED,
    errno.ETIMEDOUT: NetFailure.TIMEOUT,
    errno.EHOSTUNREACH: NetFailure.NO_ROUTE,
    errno.ENETUNREACH: NetFailure.NO_ROUTE,
    errno.ECONNRESET: NetFailure.CLOSED,
    errno.EPIPE: NetFailure.CLOSED,
}
# what the libraries say when only their message is left (httpx wraps the OSError in its
# own class, keeping the text): lower-case fragments, most specific first
_TEXTS = (
    ("name or service not known", NetFailure.NAME),
    ("temporary failure in name resolution", NetFailure.NAME),
    ("nodename nor servname", NetFailure.NAME),
    ("no address associated with hostname", NetFailure.NAME),
    ("getaddrinfo failed", NetFailure.NAME),
    ("[errno -2]", NetFailure.NAME),
    ("[errno -3]", NetFailure.NAME),
    ("[errno -5]", NetFailure.NAME),
    ("connection refused", NetFailure.REFUSED),
    ("certificate verify failed", NetFailure.UNTRUSTED),
    ("certificate", NetFailure.TLS),
    ("ssl", NetFailure.TLS),
    ("tls", NetFailure.TLS),
    ("timed out", NetFailure.TIMEOUT),
    ("timeout", NetFailure.TIMEOUT),
    ("no route to host", NetFailure.NO_ROUTE),
    ("network is unreachable", NetFailure.NO_ROUTE),
    ("connection reset", NetFailure.CLOSED),
    ("server disconnected", NetFailure.CLOSED),
    ("without sending", NetFailure.CLOSED),
    ("broken pipe", NetFailure.CLOSED),
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def failure_kind(exc: BaseException) -> NetFailure:
    """What kind of failure `exc` (or an exception behind it) is."""
    for link in _chain(exc):
        if isinstance(link, socket.gaierror):
            return NetFailure.NAME
        if isinstance(link, ssl.SSLCertVerificationError):
            return NetFailure.UNTRUSTED
        if isinstance(link, ssl.SSLError):
            return NetFailure.TLS
        if isinstance(link, (TimeoutError, socket.timeout)):
            return NetFailure.TIMEOUT
        if isinstance(link, OSError) and link.errno in _ERRNOS:
            return _ERRNOS[link.errno]
    text = " ".join(str(link) for link in _chain(exc)).lower()
    for fragment, kind in _TEXTS:
        if fragment in text:
            return kind
    if "timeout" in type(exc).__name__.lower():
        return NetFailure.TIMEOUT
    return NetFailure.OTHER


# a certificate refused is most often a private CA or a proxy that inspects TLS: the way out
TRUST_FIX = "trust its CA: add it to the system's trust store, or set SSL_CERT_FILE to a bundle that holds it"
# OpenSSL's verify codes (x509_vfy.h) whose way out is not trusting a CA
_CERT_FIXES = {
    9: "check this machine's clock, or renew the certificate",  # X509_V_ERR_CERT_NOT_YET_VALID
    10: "check this machine's clock, or renew the certificate",  # X509_V_ERR_CERT_HAS_EXPIRED
    62: "ask it by a name its certificate holds",  # X509_V_ERR_HOSTNAME_MISMATCH
    64: "ask it by a name its certificate holds",  # X509_V_ERR_IP_ADDRESS_MISMATCH
}


def network_words(exc: BaseException) -> str:
    """`cannot resolve the name`, `connection refused`, ...: `exc` in a user's words; a
    refused certificate says why (OpenSSL's reason) and the way out its verify code calls for
    (trusting its CA, unless it expired or names another host)."""
    kind = failure_kind(exc)
    if kind is not NetFailure.UNTRUSTED:
        return WORDS[kind]
    refused = next((link for link in _chain(exc) if isinstance(link, ssl.SSLCertVerificationError)), None)
    reason = (refused.verify_message or "").rstrip(".") if refused else ""
    fix = _CERT_FIXES.get(refused.verify_code, TRUST_FIX) if refused else TRUST_FIX
    return f"{WORDS[kind]}{f' ({reason})' if reason else ''}: {fix}"


def unreachable(exc: BaseException, url: str = "") -> str:
    """`unreachable (connection refused) for URL`; a refused certificate is no unreachable
    server: `URL: its TLS certificate is not trusted here (...): trust its CA: ...`."""
    words = network_words(exc)
    if failure_kind(exc) is NetFailure.UNTRUSTED:
        return f"{url}: {words}" if url else words
    return f"unreachable ({words}) for {url}" if url else f"unreachable ({words})"
