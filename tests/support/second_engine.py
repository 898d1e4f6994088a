"""A second, test-owned Docker engine on this machine, reachable three ways: its unix
socket, `tcp://127.0.0.1:<port>` with TLS client certificates, and `ssh://` through a
test-owned sshd on a loopback port. The machine's own dockerd is never touched: other
people's runs live there.

The engine: the installed `dockerd` with its own --data-root, --exec-root (so its own
managed containerd), --pidfile and sockets, and settings that keep it off the main
engine's feet:
- `--bridge=ecoready-e2`: a default bridge of its own (an interface this fixture creates).
  NOT `--bridge=none`: a dockerd started with it deletes the host's `docker0` interface
  (it "removes the default bridge"), which breaks the main engine's default network.
  A dockerd restarted after a kill -9 deletes `docker0` too (its stale-network cleanup),
  so `start()` puts the host's `docker0` back exactly as it was when that happens;
- `--iptables=false`: with iptables on, a starting dockerd flushes the DOCKER chains the
  main engine's rules live in. Container DNS on user-defined networks still works (the
  embedded resolver's rules live in each container's own namespace), but bridged traffic
  crosses the host's FORWARD chain, whose policy the main engine set to DROP: one ACCEPT
  rule for this engine's address pool (10.213.0.0/16) is inserted while it runs, and
  removed after.
It pulls the lab images from the lab registry on 127.0.0.1:5000 (loopback registries are
insecure by default), into its own data root.

The sshd is Debian's, unpacked privately by `scripts/setup-host.sh --test` (never a system
service): loopback only, key authentication only, a generated host key and client key,
`SetEnv DOCKER_HOST=` the engine's socket, so `docker system dial-stdio` (which docker-py
runs over ssh) reaches this engine. The client side is a HOME folder of its own with
`.ssh/config` (host alias `ecoready-second`) and `.ssh/known_hosts`: run ecoready with
`env=engine.ssh_env()`.

Use the `second_engine` fixture (session scope; registered in tests/conftest.py). A test
that stops or kills the engine calls `engine.ensure_running()` first if it needs it again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

LAB_DIR = Path(os.environ.get("ECOREADY_LAB_DIR", "/var/lib/ecoready/lab"))
SSHD_DIR = LAB_DIR / "sshd"
ADDRESS_POOL = "10.213.0.0/16"
BRIDGE = "ecoready-e2"  # the second engine's default bridge; never touch the host's docker0
BRIDGE_ADDRESS = "10.212.0.1/24"
FORWARD_RULE = ["-s", ADDRESS_POOL, "-d", ADDRESS_POOL, "-m", "comment", "--comment", "ecoready-test-engine"]
SSH_ALIAS = "ecoready-second"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(argv: list[str], timeout: float = 60, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True, cwd=cwd)


def _addresses(interface: str) -> list[str] | None:
    """The CIDR addresses of a network interface, or None when it does not exist."""
    shown = subprocess.run(["ip", "-j", "addr", "show", interface], capture_output=True, text=True, timeout=30)
    if shown.returncode != 0:
        return None
    return [
        f"{a['local']}/{a['prefixlen']}"
        for link in json.loads(shown.stdout)
        for a in link.get("addr_info", [])
        if a.get("family") == "inet"
    ]


def _restore(interface: str, addresses: list[str] | None) -> None:
    """Put back a bridge a restarting dockerd deleted (the main engine's docker0)."""
    if addresses is None or _addresses(interface) is not None:
        return
    run(["ip", "link", "add", interface, "type", "bridge"])
    for address in addresses:
        run(["ip", "addr", "add", address, "dev", interface])
    run(["ip", "link", "set", interface, "up"])


def make_certificates(folder: Path, server_names: str = "IP:127.0.0.1") -> None:
    """A CA, a server certificate for `server_names` (a subjectAltName value: 127.0.0.1
    unless told) and a client certificate (openssl CLI)."""
    folder.mkdir(parents=True, exist_ok=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run(
        [
            "openssl",
            "req",
            "-x509",
            *ec,
            "-keyout",
            "ca-key.pem",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=ecoready test CA",
        ],
        cwd=folder,
    )
    for name, cn, usage in (
        ("server", "127.0.0.1", f"subjectAltName={server_names}\nextendedKeyUsage=serverAuth\n"),
        ("client", "ecoready test client", "extendedKeyUsage=clientAuth\n"),
    ):
        (folder / f"{name}.ext").write_text(usage)
        run(
            ["openssl", "req", *ec, "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", f"/CN={cn}"],
            cwd=folder,
        )
        run(
            [
                "openssl",
                "x509",
                "-req",
                "-in",
                f"{name}.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca-key.pem",
                "-CAcreateserial",
                "-out",
                f"{name}-cert.pem",
                "-days",
                "2",
                "-extfile",
                f"{name}.ext",
            ],
            cwd=folder,
        )
    # what a client's tls_dir holds, named as DOCKER_CERT_PATH names them
    client = folder / "client"
    client.mkdir(exist_ok=True)
    shutil.copy(folder / "ca.pem", client / "ca.pem")
    shutil.copy(folder / "client-cert.pem", client / "cert.pem")
    shutil.copy(folder / "client-key.pem", client / "key.pem")
    for key in folder.rglob("*key.pem"):
        key.chmod(0o600)


class SecondEngine:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.socket = root / "docker.sock"
        self.tls_port = free_port()
        self.certs = root / "certs"
        self.proc: subprocess.Popen[bytes] | None = None
        self.sshd: subprocess.Popen[bytes] | None = None
        self.ssh_port = 0
        self.home = root / "home"
        self._rule = False
        self.log = root / "dockerd.log"

    # -- addresses ---------------------------------------------------------------------
    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def tls_url(self) -> str:
        return f"tcp://127.0.0.1:{self.tls_port}"

    @property
    def tls_dir(self) -> Path:
        return self.certs / "client"

    def ssh_url(self) -> str:
        """The engine through the test sshd (started on first use). The port is in the URL:
        docker-py adds :22 to an ssh:// URL without one, so a Port line of ~/.ssh/config is
        never used (its HostName, User and IdentityFile are)."""
        self.start_sshd()
        return f"ssh://{SSH_ALIAS}:{self.ssh_port}"

    def ssh_env(self) -> dict[str, str]:
        """Environment for an ecoready process that reaches the engine over ssh://: its own
        HOME (ssh config and known_hosts), no agent."""
        return {"HOME": str(self.home), "SSH_AUTH_SOCK": ""}

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        if not self.certs.exists():
            make_certificates(self.certs)
        self._reap_orphans()
        self._forget_dead_containerd()
        self._bridge_up()
        docker0 = _addresses("docker0")
        argv = [
            "dockerd",
            f"--data-root={self.root / 'data'}",
            f"--exec-root={self.root / 'exec'}",
            f"--pidfile={self.root / 'dockerd.pid'}",
            f"--host={self.unix_url}",
            f"--host=tcp://127.0.0.1:{self.tls_port}",
            "--tlsverify",
            f"--tlscacert={self.certs / 'ca.pem'}",
            f"--tlscert={self.certs / 'server-cert.pem'}",
            f"--tlskey={self.certs / 'server-key.pem'}",
            f"--bridge={BRIDGE}",
            "--iptables=false",
            "--ip-masq=false",
            "--ip-forward=false",
            f"--default-address-pool=base={ADDRESS_POOL},size=24",
            "--cgroup-parent=ecoready-test-engine",
            "--log-level=warn",
        ]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        if not self._rule:
            run(["iptables", "-I", "FORWARD", *FORWARD_RULE, "-j", "ACCEPT"])
            self._rule = True
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text()[-2000:]
                raise RuntimeError(f"the second dockerd exited ({self.proc.returncode}): {tail}")
            if self.docker("version", check=False).returncode == 0:
                _restore("docker0", docker0)
                return
            time.sleep(0.3)
        raise RuntimeError(f"the second dockerd did not answer within 60 s: {self.log.read_text()[-2000:]}")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure_running(self) -> None:
        if not self.running():
            self.start()

    def stop(self) -> None:
        """`dockerd` stopped the way a service manager stops it (SIGTERM: it stops its
        containers, without live-restore, and exits)."""
        if self.running():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=90)

    def kill(self) -> None:
        """`dockerd` killed (SIGKILL). Its managed containerd dies with it; the containers
        live on under their shims, orphans: `start()` reaps them first, as a reboot would."""
        if self.running():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def _forget_dead_containerd(self) -> None:
        """After a kill, the engine's containerd dies too, but until it is reaped it still
        looks alive to the next dockerd ("containerd is still running"), which then waits
        for it in vain: wait for it to go (or kill it: it is this engine's, by the pid it
        recorded), then drop its pid file so that a new one starts."""
        pid_file = self.root / "exec" / "containerd" / "containerd.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid) and str(self.root).encode() in _cmdline(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        pid_file.unlink(missing_ok=True)

    def _reap_orphans(self) -> None:
        """Kill the shims of this engine that outlived it, and the container processes under
        them: found by this engine's own containerd address in the shims' command lines,
        so nothing of any other engine is touched."""
        address = f"{self.root / 'exec'}/containerd/".encode()
        parents: dict[int, int] = {}
        shims: list[int] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdline = (entry / "cmdline").read_bytes()
                if b"containerd-shim" in cmdline and address in cmdline:
                    shims.append(int(entry.name))
        doomed: list[int] = []
        frontier = list(shims)
        while frontier:
            pid = frontier.pop()
            children = [child for child, parent in parents.items() if parent == pid]
            doomed.extend(children)
            frontier.extend(children)
        for pid in [*reversed(doomed), *shims]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def docker(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            env={**os.environ, "DOCKER_HOST": self.unix_url},
        )

    def labelled(self, label: str) -> dict[str, list[str]]:
        """ids of containers, networks and volumes carrying `label` on this engine."""
        out = {}
        for kind, cmd in (
            ("containers", ["ps", "-aq"]),
            ("networks", ["network", "ls", "-q"]),
            ("volumes", ["volume", "ls", "-q"]),
        ):
            out[kind] = self.docker(*cmd, "--filter", f"label={label}").stdout.split()
        return out

    def info(self) -> dict[str, object]:
        data: dict[str, object] = json.loads(self.docker("info", "--format", "{{json .}}").stdout)
        return data

    # -- sshd --------------------------------------------------------------------------
    def start_sshd(self) -> None:
        if self.sshd is not None and self.sshd.poll() is None:
            return
        binary = SSHD_DIR / "usr" / "sbin" / "sshd"
        libs = sorted({str(p.parent) for p in SSHD_DIR.rglob("libwrap.so.0")})
        if not binary.exists() or not libs:
            pytest.fail(f"no private sshd in {SSHD_DIR}: run `make test-host` (scripts/setup-host.sh --test)")
        keys = self.root / "ssh"
        keys.mkdir(exist_ok=True)
        for name in ("host_ed25519", "client_ed25519"):
            if not (keys / name).exists():
                comment = f"ecoready-test-{name}"
                run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(keys / name)])
        (keys / "authorized_keys").write_text((keys / "client_ed25519.pub").read_text())
        self.ssh_port = self.ssh_port or free_port()
        config = keys / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.ssh_port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {keys / 'host_ed25519'}",
                    f"PidFile {keys / 'sshd.pid'}",
                    f"AuthorizedKeysFile {keys / 'authorized_keys'}",
                    "StrictModes no",  # the keys live under the test's temporary folder
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PermitRootLogin prohibit-password",
                    "AllowUsers root",
                    "UsePAM no",
                    "UseDNS no",
                    "X11Forwarding no",
                    "AllowTcpForwarding no",
                    "AllowAgentForwarding no",
                    "PrintMotd no",
                    "MaxSessions 64",
                    "MaxStartups 64",
                    f"SetEnv DOCKER_HOST={self.unix_url}",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
        with (self.root / "sshd.log").open("ab") as log:
            self.sshd = subprocess.Popen(
                [str(binary), "-D", "-e", "-f", str(config)],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                env={"LD_LIBRARY_PATH": ":".join(libs), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                start_new_session=True,
            )
        dot_ssh = self.home / ".ssh"
        dot_ssh.mkdir(parents=True, exist_ok=True)
        (dot_ssh / "config").write_text(
            f"Host {SSH_ALIAS}\n  HostName 127.0.0.1\n  Port {self.ssh_port}\n  User root\n"
            f"  IdentityFile {keys / 'client_ed25519'}\n  IdentitiesOnly yes\n"
        )
        host_key = (keys / "host_ed25519.pub").read_text().split()
        (dot_ssh / "known_hosts").write_text(f"[127.0.0.1]:{self.ssh_port} {host_key[0]} {host_key[1]}\n")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.sshd.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.root / 'sshd.log').read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.ssh_port), timeout=1):
                return
            time.sleep(0.2)
        raise RuntimeError("the test sshd did not listen within 20 s")

    # -- teardown ----------------------------------------------------------------------
    def close(self) -> None:
        """Stop sshd and the engine (restarting a killed engine first so that it stops its
        orphaned containers), drop the FORWARD rule, unmount and remove the data root."""
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.sshd.wait(timeout=10)
        self.stop()
        self._reap_orphans()
        self._stop_containerd()
        if self._rule:
            drop = ["iptables", "-D", "FORWARD", *FORWARD_RULE, "-j", "ACCEPT"]
            subprocess.run(drop, capture_output=True, timeout=30)
            self._rule = False
        self._unmount()
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True, timeout=30)
        shutil.rmtree(self.root / "data", ignore_errors=True)
        shutil.rmtree(self.root / "exec", ignore_errors=True)

    def _bridge_up(self) -> None:
        """The engine's own default bridge (idempotent)."""
        if subprocess.run(["ip", "link", "show", BRIDGE], capture_output=True).returncode != 0:
            run(["ip", "link", "add", BRIDGE, "type", "bridge"])
            run(["ip", "addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE])
        run(["ip", "link", "set", BRIDGE, "up"])

    def _stop_containerd(self) -> None:
        """The engine's own managed containerd, by the pid it recorded (normally gone
        with the engine already)."""
        pid_file = self.root / "exec" / "containerd" / "containerd.pid"
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"containerd" in cmdline and str(self.root).encode() in cmdline:
                os.kill(pid, signal.SIGTERM)

    def _unmount(self) -> None:
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for point in sorted((m for m in mounts if m.startswith(str(self.root))), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.fixture(scope="session")
def second_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecondEngine]:
    """The second engine, started once per test session and removed at its end."""
    for tool in ("dockerd", "openssl", "iptables", "ssh-keygen"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run `make test-host` (scripts/setup-host.sh --test)")
    # a short path: unix socket paths are limited to 107 bytes
    root = Path(tmp_path_factory.mktemp("engine2"))
    engine = SecondEngine(root)
    try:
        engine.start()
        yield engine
    finally:
        engine.close()
