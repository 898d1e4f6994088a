#!/usr/bin/env bash
# Prepare a Debian host for ecoready's lab: Docker Engine, arm64 emulation (qemu >= 8),
# debootstrap and Debian's registry. Idempotent: every step checks before it acts.
# On a problem it prints ONE line saying what is missing and how to provide it, exit 3.
#   --test   also the test-only tools (Chromium, to screenshot the HTML report; a second
#            dockerd's tools and a private sshd; Podman; gcc, gcc-aarch64-linux-gnu and
#            their objdump for the build audit's per-target test)
set -euo pipefail

TEST_TOOLS=0
for arg in "$@"; do
  case "$arg" in
    --test) TEST_TOOLS=1 ;;
    *) printf 'setup: error: unknown option %s (known: --test)\n' "$arg" >&2; exit 2 ;;
  esac
done

LAB_DIR=${ECOREADY_LAB_DIR:-/var/lib/ecoready/lab}
QEMU_DIR="$LAB_DIR/qemu"
say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 3; }

[ "$(id -u)" = 0 ] || die "must run as root (docker, binfmt_misc and debootstrap need it): run 'sudo make ...'"
[ -r /etc/debian_version ] || die "not a Debian system (/etc/debian_version missing): the lab needs Debian 12 or newer with apt"

# The machine's own Debian mirror: users' sites have their own, never hard-code one.
mirror() {
  local m=""
  m=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  [ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  printf '%s' "${m:-http://deb.debian.org/debian}"
}
MIRROR=$(mirror)

apt_ready=0
need_pkgs() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ $apt_ready = 0 ]; then
    timeout 60 apt-get update -qq >/dev/null 2>&1 || die "cannot reach the Debian mirror $MIRROR (apt-get update failed): restore network access to it or set a reachable mirror in /etc/apt/sources.list.d"
    apt_ready=1
  fi
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || die "apt-get install ${missing[*]} failed: run it by hand to see why"
}

# --- Python for the virtual environment --------------------------------------------------
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || need_pkgs python3
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "$PYTHON is $("$PYTHON" -V 2>&1): ecoready needs Python >= 3.11 (set PYTHON=python3.x)"
"$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 || need_pkgs python3-venv

# --- Docker Engine -----------------------------------------------------------------
docker_answers() { timeout 10 docker info >/dev/null 2>&1; }
if ! docker_answers; then
  command -v dockerd >/dev/null 2>&1 || need_pkgs docker.io
  command -v docker >/dev/null 2>&1 || need_pkgs docker.io
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    say "starting dockerd (log: /var/log/ecoready-dockerd.log)"
    setsid nohup dockerd >/var/log/ecoready-dockerd.log 2>&1 </dev/null &
  fi
  for _ in $(seq 1 60); do docker_answers && break; sleep 1; done
  docker_answers || die "dockerd did not answer within 60 s: see /var/log/ecoready-dockerd.log"
fi

# --- lab tools from Debian ------------------------------------------------------------
need_pkgs debootstrap docker-registry ca-certificates curl

# --- test-only tools: a headless browser for the HTML report's screenshot test ---------
if [ "$TEST_TOOLS" = 1 ]; then need_pkgs chromium fonts-dejavu-core; fi

# --- test-only: compilers and GNU objdump for the build audit's per-target test -----------
# (tests/unit/test_audit_targets_objdump.py builds small programs for arm64 and x86-64 and
# checks the audit's verdicts per target CPU against objdump's reading of them)
if [ "$TEST_TOOLS" = 1 ]; then
  need_pkgs gcc binutils libc6-dev gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
fi

# --- test-only: what the second-engine tests need (tests/support/second_engine.py) --------
# A second dockerd is the one already installed; TLS certificates come from openssl; the
# ssh:// tests run Debian's sshd unpacked privately, on a loopback port the test chooses:
# installing openssh-server would enable a system service listening on port 22.
SSHD_DIR="$LAB_DIR/sshd"
sshd_ok() {
  local lib
  lib=$(dirname "$(find "$SSHD_DIR" -name 'libwrap.so.0' 2>/dev/null | head -n1)" 2>/dev/null)
  [ -x "$SSHD_DIR/usr/sbin/sshd" ] && LD_LIBRARY_PATH="$lib" "$SSHD_DIR/usr/sbin/sshd" -V 2>&1 | grep -q OpenSSH
}
if [ "$TEST_TOOLS" = 1 ]; then
  need_pkgs openssl iptables openssh-client
  if ! sshd_ok; then
    say "unpacking Debian's openssh-server privately into $SSHD_DIR (no service is installed)"
    tmp=$(mktemp -d)
    if ! (cd "$tmp" && timeout 120 apt-get download openssh-server libwrap0 >/dev/null 2>&1); then
      [ $apt_ready = 1 ] || { timeout 60 apt-get update -qq >/dev/null 2>&1 && apt_ready=1; }
      (cd "$tmp" && timeout 120 apt-get download openssh-server libwrap0 >/dev/null 2>&1) \
        || die "cannot download openssh-server from $MIRROR (the ssh:// host tests need its sshd)"
    fi
    rm -rf "$SSHD_DIR" && mkdir -p "$SSHD_DIR"
    for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$SSHD_DIR"; done
    rm -rf "$tmp"
    sshd_ok || die "the sshd unpacked into $SSHD_DIR does not run: see $SSHD_DIR"
  fi
  # sshd drops privileges to this user while it talks to a client (as Debian's package does)
  getent passwd sshd >/dev/null 2>&1 \
    || useradd --system --no-create-home --home-dir /run/sshd --shell /usr/sbin/nologin sshd \
    || die "cannot create the sshd privilege separation user"
fi

# --- test-only: Podman, the second kind of engine (tests/support/podman_engine.py) ------
# Debian's podman serves the Docker-compatible API on a socket the test starts itself; no
# podman service is enabled. netavark + aardvark-dns give its networks container DNS
# (the connectors reach their server by name). The lab registry is plain HTTP on loopback:
# podman refuses that unless registries.conf says the registry is insecure. The drop-in is
# written only when its content differs, so a warm run changes nothing.
PODMAN_REGISTRIES=/etc/containers/registries.conf.d/ecoready-lab.conf
if [ "$TEST_TOOLS" = 1 ]; then
  need_pkgs podman netavark aardvark-dns
  want=$'# written by ecoready scripts/setup-host.sh --test: the lab registry is plain HTTP\n[[registry]]\nlocation = "127.0.0.1:5000"\ninsecure = true\n'
  if [ "$(cat "$PODMAN_REGISTRIES" 2>/dev/null)"$'\n' != "$want" ]; then
    mkdir -p "$(dirname "$PODMAN_REGISTRIES")"
    printf '%s' "$want" >"$PODMAN_REGISTRIES" || die "cannot write $PODMAN_REGISTRIES (podman needs it to pull from the lab registry)"
    say "wrote $PODMAN_REGISTRIES (the lab registry 127.0.0.1:5000 is insecure for podman)"
  fi
fi

# --- arm64 emulation: binfmt_misc + qemu-user >= 8 ------------------------------------
# bookworm's qemu 7.2 makes mariadbd reserve terabytes and get OOM-killed: take qemu from
# trixie, unpacked privately (never installed into the host system).
if [ "$(uname -m)" = x86_64 ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc \
    || die "cannot mount binfmt_misc: the kernel needs CONFIG_BINFMT_MISC (or run on a native arm64 host)"
  qemu_bin="$QEMU_DIR/usr/bin/qemu-aarch64"
  qemu_ok() { [ -x "$qemu_bin" ] && "$qemu_bin" --version 2>/dev/null | grep -qE 'version (8|9|[1-9][0-9])\.'; }
  if ! qemu_ok; then
    say "fetching qemu-user from Debian trixie (qemu >= 8)"
    tmp=$(mktemp -d)
    mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
    printf 'deb %s trixie main\n' "$MIRROR" >"$tmp/sources.list"
    opts=(-oDir::Etc::SourceList="$tmp/sources.list" -oDir::Etc::SourceParts=/dev/null -oDir::State::Lists="$tmp/lists" -oDir::Cache::Archives="$tmp/archives" -oAPT::Architecture=amd64)
    timeout 120 apt-get "${opts[@]}" update -qq >/dev/null 2>&1 || die "cannot read the trixie suite from $MIRROR: qemu >= 8 is needed for arm64 emulation"
    (cd "$tmp" && timeout 300 apt-get "${opts[@]}" download qemu-user >/dev/null 2>&1) || die "cannot download qemu-user from trixie on $MIRROR"
    rm -rf "$QEMU_DIR" && mkdir -p "$QEMU_DIR"
    dpkg -x "$tmp"/qemu-user_*.deb "$QEMU_DIR"
    rm -rf "$tmp"
    qemu_ok || die "the qemu-aarch64 unpacked from trixie does not run: see $QEMU_DIR"
  fi
  reg=/proc/sys/fs/binfmt_misc/qemu-aarch64
  if [ -e "$reg" ] && ! grep -q "interpreter $qemu_bin" "$reg"; then
    echo -1 >"$reg"   # another (possibly too old) qemu: replace it with ours
  fi
  if [ ! -e "$reg" ]; then
    # magic/mask as in Debian's qemu-aarch64 binfmt.d file; F = open the interpreter now so
    # it works inside containers, C = credentials, P = preserve argv[0], O = open binary.
    magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    printf ':qemu-aarch64:M::%s:%s:%s:OCPF' "$magic" "$mask" "$qemu_bin" >/proc/sys/fs/binfmt_misc/register \
      || die "cannot register the aarch64 binfmt handler"
  fi
  grep -q '^enabled' "$reg" || die "the qemu-aarch64 binfmt handler is registered but disabled: echo 1 > $reg"
fi
say "host ready: docker $(docker version -f '{{.Server.Version}}' 2>/dev/null), $( [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && "$QEMU_DIR/usr/bin/qemu-aarch64" --version | head -n1 || echo 'native')"
