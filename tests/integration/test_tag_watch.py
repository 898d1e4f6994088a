"""`ecoready check --tags` against a registry of the test's own (Debian's docker-registry on
a free loopback port, tiny images pushed by the test; no engine): tags republished between
two checks (an arch gained, an arch lost, one arch rebuilt alone, a newer tag that adds
arm64) are each said right, with the exit code and the webhook body a receiver of our own
gets; the compose pin of the image that gained arm64 is said to be droppable, at its file
and line; a third check says nothing new and posts nothing. And a check of the default
matrix's references costs no more requests than `ecoready images` warm."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ecoready.lab.oci_writer import IndexEntry, RegistryWriter
from ecoready.matrix.load import load
from ecoready.registry.client import RegistryClient
from ecoready.registry.manifests import parse_reference
from ecoready.registry.tag_watch import CREATED, observe
from tests.support.cli import ROOT, ecoready
from tests.support.receiver import Receiver
from tests.support.registry_servers import Registry, push_tiny_image, push_tiny_index, start_registry


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    (tmp_path / "storage").mkdir()
    registry = start_registry(tmp_path, tmp_path / "storage")
    yield registry
    registry.stop()


def stamp(at: datetime) -> str:
    return at.isoformat(timespec="seconds").replace("+00:00", "Z")


COMPOSE = """services:
  db:
    image: {host}/acme/db:8.4
    # built for amd64 only, for now
    platform: linux/amd64
  proxy:
    image: {host}/acme/proxy:3.0
  sql:
    image: {host}/acme/sql:3.0
  app:
    image: {host}/acme/app:1.0
"""


def test_republished_tags_are_said_with_the_exit_code_the_webhook_and_the_pin(
    registry: Registry, tmp_path: Path
) -> None:
    host = registry.host
    now = datetime.now(UTC)
    old, rebuilt = stamp(now - timedelta(days=40)), stamp(now - timedelta(days=10))
    writer = RegistryWriter(registry.url)
    push_tiny_index(writer, "acme/db", "8.4", ("amd64",))
    push_tiny_index(writer, "acme/proxy", "3.0")
    push_tiny_index(writer, "acme/sql", "3.0", created={"amd64": old, "arm64": old})
    push_tiny_index(writer, "acme/app", "1.0", ("amd64",))
    (tmp_path / "compose.yaml").write_text(COMPOSE.format(host=host))
    stack, history = tmp_path / "stack.toml", tmp_path / "history"
    made = ecoready("init", "--from", str(tmp_path / "compose.yaml"), "-o", str(stack))
    assert made.returncode == 0, made.stderr
    assert 'pinned_at = ["compose.yaml:5: services.db.platform"]' in stack.read_text()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    check = ("check", "--tags", "--matrix", str(stack), "--history", str(history))
    with Receiver() as hook:
        env_hook = {**env, "ECOREADY_WEBHOOK_URL": hook.url}
        first = ecoready(*check, env=env_hook, timeout=60)
        assert first.returncode == 0, first.stderr
        assert first.stdout.startswith(f"first look at 4 references: recorded in {history}\n"), first.stdout
        assert "drop `platform" not in first.stdout
        assert f"{host}/acme/app:1.0 lacks arm64" not in first.stdout  # no other tag has it yet

        push_tiny_index(writer, "acme/db", "8.4")  # gains arm64
        push_tiny_index(writer, "acme/proxy", "3.0", ("amd64",))  # loses arm64
        push_tiny_index(  # amd64 rebuilt (10 days ago), arm64 not
            writer, "acme/sql", "3.0", build={"amd64": "2"}, created={"amd64": rebuilt, "arm64": old}
        )
        push_tiny_index(writer, "acme/app", "1.1")  # a newer version, with arm64
        started = time.monotonic()
        # --search-every 0: other tags are searched again now (by default at most once a day)
        second = ecoready(*check, "--search-every", "0", env=env_hook, timeout=60)
        seconds = time.monotonic() - started
        third = ecoready(*check, env=env_hook, timeout=60)  # searched an instant ago: the answers stand
    writer.close()
    assert second.returncode == 1, second.stderr  # a tag lost an arch: a regression
    today = stamp(now)[:10]
    said = second.stdout.splitlines()
    assert f"{host}/acme/db:8.4 now publishes arm64, seen {today}" in said[0], said
    assert said[1] == f"{host}/acme/proxy:3.0 no longer publishes arm64, seen {today}: a regression"
    # the arch left the index, but the vendor's `3.0-only-arm64` tag still has it (push_tiny_index tags each entry)
    assert said[2] == (
        f"{host}/acme/proxy:3.0 lacks arm64; 3.0-only-arm64 publishes it (the same version under that name): "
        "use 3.0-only-arm64"
    )
    assert said[3].startswith(f"arm64 of {host}/acme/sql:3.0 is 10 days behind amd64: amd64 rebuilt {rebuilt[:10]}")
    assert said[4] == (
        f"{host}/acme/app:1.0 lacks arm64; 1.1 publishes it (a newer version of the same line): upgrade to >= 1.1"
    )
    assert said[5] == (
        "drop `platform: linux/amd64` from service db (compose.yaml:5: services.db.platform): "
        f"its image publishes arm64 since {today}"
    )
    assert len(said) == 6
    assert "told the webhook" in second.stderr and seconds < 10

    assert third.returncode == 0, third.stderr  # the arch stays lost: said once
    assert "no longer publishes" not in third.stdout and "now publishes" not in third.stdout
    assert "10 days behind amd64" in third.stdout and "(said before)" in third.stdout
    assert "drop `platform: linux/amd64` from service db" in third.stdout  # still true, still said

    assert len(hook.posts) == 1  # the first check recorded, the third had nothing new
    (post,) = hook.posts
    assert post["text"].startswith(f"ecoready: {stack}: 1 arch lost (a regression)\n• {host}/acme/db:8.4 now")
    findings = {(f["change"], f["reference"].split("/", 1)[1], f["arch"]): f for f in post["tags"]["findings"]}
    assert set(findings) == {
        ("gained", "acme/db:8.4", "arm64"),
        ("lost", "acme/proxy:3.0", "arm64"),
        ("newer tag", "acme/app:1.0", "arm64"),
        ("newer tag", "acme/proxy:3.0", "arm64"),
        ("behind", "acme/sql:3.0", "arm64"),
    }
    assert findings[("lost", "acme/proxy:3.0", "arm64")]["regression"] is True
    assert findings[("behind", "acme/sql:3.0", "arm64")]["other"] == "amd64"
    assert findings[("behind", "acme/sql:3.0", "arm64")]["since"] == rebuilt
    assert findings[("newer tag", "acme/app:1.0", "arm64")]["other"] == "1.1"
    assert post["tags"]["pins"] == [said[5]]

    # the history: one readable line per reference and arch
    lines = (history / "tags.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert sorted((r["reference"].split("/", 1)[1], r["arch"]) for r in records) == [
        (f"acme/{name}", arch) for name in ("app:1.0", "db:8.4", "proxy:3.0", "sql:3.0") for arch in ("amd64", "arm64")
    ]
    gained = next(r for r in records if r["reference"].endswith("db:8.4") and r["arch"] == "arm64")
    assert gained["first_seen"].startswith(today) and gained["baseline"] is False


def one_image(registry: Registry, tmp_path: Path) -> Path:
    """A matrix of one two-arch image, pushed to `registry`."""
    writer = RegistryWriter(registry.url)
    push_tiny_index(writer, "acme/db", "8.4")
    writer.close()
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        f'[[components]]\nid = "db"\ncategory = "app"\nprobe = "command"\nimage = "{registry.host}/acme/db:8.4"\n'
    )
    return matrix


def test_a_corrupted_history_is_said_and_set_aside(registry: Registry, tmp_path: Path) -> None:
    matrix = one_image(registry, tmp_path)
    history = tmp_path / "history"
    history.mkdir()
    (history / "tags.jsonl").write_text('{"reference": "x", "arch": "amd64"}\nnot json\n')
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = ecoready("check", "--tags", "--matrix", str(matrix), "--history", str(history), env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"ecoready: tag history: {history / 'tags.jsonl'}: cannot be read (" in result.stderr
    assert "cannot be read (tags.jsonl:1.digest: missing); set aside as tags.jsonl.corrupt-" in result.stderr
    aside = list(history.glob("tags.jsonl.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text().endswith("not json\n")
    assert len((history / "tags.jsonl").read_text().splitlines()) == 2  # a new history, amd64 and arm64
    assert result.stdout.startswith("first look at 1 reference")


PREFIXES = {"docker.io": "hub", "container-registry.oracle.com": "ocr"}


def test_the_default_matrix_costs_no_more_requests_than_images_warm(registry: Registry, tmp_path: Path) -> None:
    """The default matrix's references, each a tiny two-arch index in a mirror of our own
    (as test_shipped_matrix lays it out): `images` cold, then warm, then the tag watch
    twice (its first look, and a later one) with the same disk cache, counted in the
    registry's access log."""
    matrix = load(ROOT / "matrix.toml", {})
    references = {c.image for c in matrix.components}
    references |= {str(v) for c in matrix.components for k, v in c.options.items() if k.endswith("image")}
    references.add(matrix.sysbench.image or matrix.sysbench.base)
    writer = RegistryWriter(registry.url)
    for reference in sorted(references):
        ref = parse_reference(reference)
        push_tiny_index(writer, f"{PREFIXES[ref.registry]}/{ref.repository}", ref.tag or "latest")
    writer.close()
    mirrors = ",".join(f"{upstream}={registry.host}/{prefix}" for upstream, prefix in PREFIXES.items())
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "ECOREADY_REGISTRY_MIRRORS": mirrors}
    default = str(ROOT / "matrix.toml")

    def requests(*args: str) -> tuple[int, float, str]:
        before = registry.requests()
        started = time.monotonic()
        result = ecoready(*args, "--matrix", default, env=env, timeout=120)
        assert result.returncode == 0, result.stderr + result.stdout[-2000:]
        time.sleep(0.3)  # the access log line of the last request
        return registry.requests() - before, time.monotonic() - started, result.stdout

    requests("images")  # cold: fills the disk cache
    warm, _, _ = requests("images")
    tags = ("check", "--tags", "--history", str(tmp_path / "history"))
    first, _, said = requests(*tags)
    assert said.startswith(f"first look at {len({c.image for c in matrix.components})} references")
    again, seconds, said = requests(*tags)
    assert said.startswith("no change in the ")
    assert first <= warm and again <= warm, (first, again, warm)
    assert seconds < 10


def test_watch_tags_repeats_the_tag_check_and_usage_errors_are_exit_2(registry: Registry, tmp_path: Path) -> None:
    matrix = one_image(registry, tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    tags = ("--tags", "--matrix", str(matrix), "--history", str(tmp_path / "history"))
    watched = ecoready("watch", "--every", "1s", "--runs", "2", *tags, env=env, timeout=60)
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout == "first look at 1 reference: recorded in " + str(tmp_path / "history") + "\n" + (
        "no change in the 1 tag watched\n"
    )
    assert "ecoready: watch: check 1 ended with exit 0" in watched.stderr
    for wrong, said in (
        (("--profile", "smoke"), "--tags asks the registries only, nothing runs: drop --profile"),
        (("--json", str(tmp_path / "r.json")), "drop the report outputs"),
        (("--behind-after", "soon"), "--behind-after: cannot read 'soon' as a duration"),
        (("--only", "nope"), "--only names unknown component(s)"),
    ):
        refused = ecoready("check", *tags, *wrong, env=env, timeout=60)
        assert refused.returncode == 2 and said in refused.stderr, (wrong, refused.stderr)
        assert "Traceback" not in refused.stderr
    assert ecoready("watch", "--every", "1s", *tags, "--profile", "smoke", env=env).returncode == 2


async def test_the_publication_time_is_the_configs_else_the_indexs(registry: Registry) -> None:
    writer = RegistryWriter(registry.url)
    dated = push_tiny_image(writer, "acme/x", "a", "amd64", created="2026-11-01T00:00:00Z")
    plain = push_tiny_image(writer, "acme/x", "b", "arm64")
    annotated = {CREATED: "2026-11-02T00:00:00Z"}
    entries = [IndexEntry(dated, "linux", "amd64"), IndexEntry(plain, "linux", "arm64", "v8", annotated)]
    writer.put_index("acme/x", "1", entries, oci=True)
    writer.close()
    base = f"{registry.host}/acme/x"
    async with RegistryClient(cache=False) as client:
        index = await observe(client, f"{base}:1", ("amd64", "arm64"))
        single = await observe(client, f"{base}:a", ("amd64", "arm64"))
        absent = await observe(client, f"{base}:nope", ("amd64",))
    assert [(a.arch, a.digest, a.published) for a in index.arches] == [
        ("amd64", dated.digest, "2026-11-01T00:00:00Z"),
        ("arm64", plain.digest, "2026-11-02T00:00:00Z"),
    ]
    assert [(a.arch, a.published) for a in single.arches] == [("amd64", "2026-11-01T00:00:00Z")]
    assert not absent.found and absent.arches == () and not absent.error
