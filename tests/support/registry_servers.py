"""Test-owned registries, for real: Debian's docker-registry (distribution 2.8) on free
loopback ports with temporary storage, open, behind htpasswd Basic auth, or behind token
auth with a small token server of our own that follows the distribution token spec (RS256
JWTs whose `kid` is the libtrust fingerprint of the key in the registry's
`rootcertbundle`). The fronts that give such a registry the manners of others are in
tests/support/registry_fronts.py.
"""

from __future__ import annotations

import base64
import ctypes
import gzip
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from ecoready.lab.oci_writer import IndexEntry, Manifest, RegistryWriter

REGISTRY_BIN = shutil.which("docker-registry") or "/usr/bin/docker-registry"
DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- registries -----------------------------------------------------------------------
@dataclass
class Registry:
    host: str  # 127.0.0.1:PORT
    log: Path
    proc: subprocess.Popen[bytes]
    scheme: str = "http"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}"

    def protocols(self) -> list[str]:
        """The protocol of each request served, in order, from its access log (`HTTP/2.0`)."""
        lines = self.log.read_text(errors="replace").splitlines()
        return [line.split('"')[1].rsplit(" ", 1)[-1] for line in lines if line.startswith("127.0.0.1 - ")]

    def requests(self) -> int:
        """Requests the registry served, from its access log (one line per request)."""
        return sum(1 for line in self.log.read_text(errors="replace").splitlines() if line.startswith("127.0.0.1 - "))

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def start_registry(
    work: Path, storage: Path, *, auth: str = "", readonly: bool = False, tls: Path | None = None
) -> Registry:
    """docker-registry serving `storage` on a free loopback port; `auth` is the YAML of its
    `auth:` section (htpasswd or token); with `tls`, a folder as second_engine's
    make_certificates lays it out (its server certificate must name 127.0.0.1), HTTPS only,
    where Go's net/http offers HTTP/2 (ALPN h2) as well as HTTP/1.1."""
    port = free_port()
    served = f"http:\n  addr: 127.0.0.1:{port}\n"
    if tls is not None:
        served += f"  tls:\n    certificate: {tls / 'server-cert.pem'}\n    key: {tls / 'server-key.pem'}\n"
    config = work / f"registry-{port}.yml"
    log = work / f"registry-{port}.log"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: info\n  formatter: text\n"
        "storage:\n"
        f"  filesystem:\n    rootdirectory: {storage}\n"
        "  maintenance:\n    uploadpurging:\n      enabled: false\n"
        f"    readonly:\n      enabled: {'true' if readonly else 'false'}\n"
        f"{served}{auth}"
    )
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [REGISTRY_BIN, "serve", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    registry = Registry(f"127.0.0.1:{port}", log, proc, "http" if tls is None else "https")
    verify = True if tls is None else ssl.create_default_context(cafile=tls / "ca.pem")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            if httpx.get(f"{registry.url}/v2/", timeout=1, verify=verify).status_code in (200, 401):
                return registry
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    registry.stop()
    raise RuntimeError(f"docker-registry did not start: {log.read_text(errors='replace')[-500:]}")


def bcrypt_htpasswd(user: str, password: str) -> str:
    """An htpasswd line with a bcrypt hash (distribution accepts only bcrypt), made by the
    system's libcrypt (Debian's libxcrypt implements $2b$)."""
    lib = ctypes.CDLL("libcrypt.so.1")
    lib.crypt_gensalt.restype = ctypes.c_char_p
    lib.crypt_gensalt.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int]
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    salt = lib.crypt_gensalt(b"$2b$", 5, None, 0)
    hashed = lib.crypt(password.encode(), salt)
    assert hashed and hashed.startswith(b"$2b$"), "libcrypt has no bcrypt"
    return f"{user}:{hashed.decode()}\n"


def htpasswd_auth(work: Path, user: str, password: str) -> str:
    path = work / "htpasswd"
    path.write_text(bcrypt_htpasswd(user, password))
    return f"auth:\n  htpasswd:\n    realm: ecoready-test\n    path: {path}\n"


# -- a token server per the distribution token spec ------------------------------------
def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def libtrust_key_id(der_public_key: bytes) -> str:
    """distribution 2.8 looks a token's `kid` up among its root certificates' keys by the
    libtrust fingerprint: SHA-256 of the DER public key, first 240 bits, base32 in 4s."""
    text = base64.b32encode(hashlib.sha256(der_public_key).digest()[:30]).decode().rstrip("=")
    return ":".join(text[i : i + 4] for i in range(0, len(text), 4))


@dataclass
class TokenServer:
    work: Path
    users: dict[str, str]
    issuer: str = "ecoready-test-issuer"
    service: str = "ecoready-test-registry"
    issued: list[tuple[str, str]] = field(default_factory=list)  # (user or "", scope)
    refused: int = 0

    def __post_init__(self) -> None:
        self.key = self.work / "token.key"
        self.cert = self.work / "token.crt"
        subprocess.run(
            [
                *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(self.key)),
                *("-out", str(self.cert), "-subj", "/CN=ecoready-test-token", "-days", "2"),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        der = subprocess.run(
            ["openssl", "pkey", "-in", str(self.key), "-pubout", "-outform", "DER"],
            check=True,
            capture_output=True,
            timeout=30,
        ).stdout
        self.kid = libtrust_key_id(der)
        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def realm(self) -> str:
        return f"http://127.0.0.1:{self.port}/token"

    def auth_yaml(self) -> str:
        return (
            "auth:\n  token:\n"
            f"    realm: {self.realm}\n    service: {self.service}\n"
            f"    issuer: {self.issuer}\n    rootcertbundle: {self.cert}\n"
        )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sign(self, claims: dict[str, object]) -> str:
        header = {"typ": "JWT", "alg": "RS256", "kid": self.kid}
        signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        signature = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", str(self.key)],
            input=signing_input.encode(),
            check=True,
            capture_output=True,
            timeout=30,
        ).stdout
        return f"{signing_input}.{_b64url(signature)}"

    def grant(self, user: str, scope: str) -> list[dict[str, object]]:
        """Anonymous users may pull anything but `private/...`; known users everything."""
        kind, _, rest = scope.partition(":")
        name, _, actions = rest.rpartition(":")
        wanted = [a for a in actions.split(",") if a]
        allowed = [a for a in wanted if a == "pull" and (user or not name.startswith("private/"))]
        return [{"type": kind, "name": name, "actions": allowed}] if kind == "repository" and allowed else []

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

            def _json(self, status: int, data: dict[str, object]) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="ecoready-test-token"')
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path != "/token":
                    self._json(404, {"error": "not found"})
                    return
                query = parse_qs(url.query)
                user = ""
                header = self.headers.get("Authorization", "")
                if header.startswith("Basic "):
                    name, _, password = base64.b64decode(header[6:]).decode().partition(":")
                    if server.users.get(name) != password:
                        server.refused += 1
                        self._json(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
                        return
                    user = name
                if query.get("service", [""])[0] != server.service:
                    self._json(400, {"errors": [{"code": "DENIED", "message": "unknown service"}]})
                    return
                access = [a for scope in query.get("scope", []) for a in server.grant(user, scope)]
                now = int(time.time())
                claims = {
                    "iss": server.issuer,
                    "sub": user,
                    "aud": server.service,
                    "exp": now + 300,
                    "nbf": now - 5,
                    "iat": now,
                    "jti": uuid.uuid4().hex,
                    "access": access,
                }
                token = server.sign(claims)
                server.issued.extend((user, s) for s in query.get("scope", []))
                self._json(200, {"token": token, "access_token": token, "expires_in": 300})

        return Handler


# -- tiny real images --------------------------------------------------------------------
def tiny_layer(text: str) -> bytes:
    """A gzipped tar with one file; deterministic bytes for the same text."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        data = text.encode()
        info = tarfile.TarInfo("hello.txt")
        info.size, info.mtime, info.mode = len(data), 0, 0o644
        tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def push_tiny_image(
    writer: RegistryWriter,
    repo: str,
    tag: str,
    arch: str,
    text: str = "",
    *,
    build: str = "",
    created: str = "",
) -> Manifest:
    """A real (if useless) single-arch image: config with its architecture, one layer (of
    `text`: one nobody has, for a pull that must download it). Another `build` makes
    another image (digest); `created` dates its config."""
    layer = tiny_layer(text or f"tiny image for {arch}\n{build}")
    diff_id = "sha256:" + hashlib.sha256(gzip.decompress(layer)).hexdigest()
    dated = {"created": created} if created else {}
    config = json.dumps(
        {
            "architecture": arch,
            "os": "linux",
            "config": {},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
            **dated,
        },
        sort_keys=True,
    ).encode()
    config_digest = writer.put_blob(repo, config)
    layer_digest = writer.put_blob(repo, layer)
    body = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": DOCKER_V2,
            "config": {
                "mediaType": "application/vnd.docker.container.image.v1+json",
                "size": len(config),
                "digest": config_digest,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "size": len(layer),
                    "digest": layer_digest,
                }
            ],
        },
        indent=3,
    ).encode()
    digest = writer.put_manifest(repo, tag, DOCKER_V2, body)
    return Manifest(DOCKER_V2, digest, body)


def push_tiny_index(
    writer: RegistryWriter,
    repo: str,
    tag: str,
    arches: tuple[str, ...] = ("amd64", "arm64"),
    *,
    build: dict[str, str] | None = None,
    created: dict[str, str] | None = None,
) -> str:
    """An index of tiny images, one per arch (each also tagged `TAG-only-ARCH`); `build`
    and `created` per arch, as push_tiny_image takes them."""
    entries = [
        IndexEntry(
            push_tiny_image(
                writer,
                repo,
                f"{tag}-only-{arch}",
                arch,
                build=(build or {}).get(arch, ""),
                created=(created or {}).get(arch, ""),
            ),
            "linux",
            arch,
            "v8" if arch == "arm64" else None,
        )
        for arch in arches
    ]
    return writer.put_index(repo, tag, entries)


def docker_config(work: Path, config: dict[str, object]) -> Path:
    """A docker config directory (for DOCKER_CONFIG) holding `config` as config.json."""
    path = work / f"docker-config-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    return path


def credential_helper(work: Path, name: str, secrets: dict[str, tuple[str, str]]) -> Path:
    """A `docker-credential-<name>` program (the helper protocol: `get`, server URL on stdin,
    JSON on stdout) in a directory to put on PATH; it logs each server URL it was asked."""
    bin_dir = work / f"helper-bin-{name}"
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / f"docker-credential-{name}"
    table = json.dumps({k: {"Username": u, "Secret": s} for k, (u, s) in secrets.items()})
    asked = bin_dir / "asked.log"
    program.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"table = json.loads({table!r})\n"
        "if sys.argv[1:] != ['get']:\n    sys.exit(1)\n"
        "server = sys.stdin.read().strip()\n"
        f"open({str(asked)!r}, 'a').write(server + '\\n')\n"
        "if server not in table:\n"
        "    print('credentials not found in native keychain'); sys.exit(1)\n"
        "entry = dict(table[server], ServerURL=server)\n"
        "print(json.dumps(entry))\n"
    )
    program.chmod(0o755)
    return bin_dir
