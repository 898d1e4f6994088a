"""The registry client against registries with the manners of the wild, each a front of
ours (tests/support/registry_fronts.py: MannersFront, RateLimitedFront) before a real
docker-registry holding tiny images, over real sockets, with a cold disk cache and then a
warm one:

- HEAD on manifests refused (405, 501, or a bare 404): asked again with GET, for tags,
  suffixed tags and digests alike, remembered for the run and on disk, so the warm run does
  not fail where the cold one worked;
- 429 with Retry-After (seconds or an HTTP date) waited for within the budget, past it
  `rate limited` with the time it would have needed; RateLimit-Remaining 0 spends nothing;
- one repository that never answers fails its own lookups only; three in a row, the registry;
- a missing repository and a missing tag told apart.

Times are bounded by the client's own timeouts; the only waits asserted are the ones the
client counts (`waited_s`), never a clock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ecoready.domain.errors import RegistryError
from ecoready.domain.images import Availability
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry.cache import DiskCache
from ecoready.registry.client import RegistryClient
from tests.support.cli import ecoready
from tests.support.registry_fronts import MannersFront, RateLimitedFront
from tests.support.registry_servers import Registry, push_tiny_image, push_tiny_index, start_registry

# A hanging repository costs its lookups this read timeout; the registry's other answers
# must come within it too, on a CI machine whose two cores the engine tests keep busy
# (a 1 s read timed out on a plain answer there once).
SHORT = httpx.Timeout(connect=5.0, read=5.0, write=5.0, pool=5.0)
SAFETY = 60  # seconds: a lookup that takes longer is stuck, and the test says so


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """test/multi:1 an index of amd64 and arm64 (3 tags in all); test/suffix:2 amd64 only,
    with its arm64 image as 2-aarch64; test/slow and test/other two more indexes."""
    work = tmp_path_factory.mktemp("manners")
    storage = work / "storage"
    storage.mkdir()
    registry = start_registry(work, storage)
    writer = RegistryWriter(registry.url)
    try:
        for repo in ("test/multi", "test/slow", "test/other", "test/third"):
            push_tiny_index(writer, repo, "1")
        push_tiny_image(writer, "test/suffix", "2", "amd64")
        push_tiny_image(writer, "test/suffix", "2-aarch64", "arm64")
    finally:
        writer.close()
    yield registry
    registry.stop()


async def resolve_all(client: RegistryClient, host: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(image, arch) -> the verdict and how (or `error: …`), all asked at once."""

    async def one(image: str, arch: str) -> str:
        try:
            found: Availability = await client.resolve(f"{host}/{image}", arch)
        except RegistryError as exc:
            return f"error: {exc.reason}"
        return f"{found.verdict.value}: {found.found_as or found.detail}"

    answers = await asyncio.wait_for(asyncio.gather(*(one(i, a) for i, a in pairs)), SAFETY)
    return dict(zip(pairs, answers, strict=True))


PAIRS = [
    ("test/multi:1", "amd64"),
    ("test/multi:1", "arm64"),
    ("test/suffix:2", "amd64"),
    ("test/suffix:2", "arm64"),
    ("test/multi:9", "amd64"),
    ("test/none:1", "arm64"),
]


def expected(host: str) -> dict[tuple[str, str], str]:
    return {
        ("test/multi:1", "amd64"): "available: index",
        ("test/multi:1", "arm64"): "available: index",
        ("test/suffix:2", "amd64"): "available: single manifest",
        ("test/suffix:2", "arm64"): "available: tag 2-aarch64",
        ("test/multi:9", "amd64"): f"missing: {host}/test/multi:9: tag not found; "
        "the repository has 3 tags; no 9-amd64 or 9-x86_64 tag",
        ("test/none:1", "arm64"): f"missing: {host}/test/none:1: repository not found",
    }


# -- HEAD refused ------------------------------------------------------------------------
@pytest.mark.parametrize("refusal", [405, 501, 404])
async def test_a_registry_that_refuses_head_is_asked_with_get_cold_and_warm(
    upstream: Registry, tmp_path: Path, refusal: int
) -> None:
    rude = MannersFront(upstream.url, head_answer=refusal)
    try:
        runs = []
        for _ in ("cold", "warm"):
            before = len(rude.asked)
            async with RegistryClient(cache=DiskCache(tmp_path / "cache")) as client:
                runs.append(await resolve_all(client, rude.host, PAIRS))
                (status,) = client.statuses()
            heads = [p for m, p in rude.asked[before:] if m == "HEAD"]
            assert status.error == "", status
            assert all(v.split(":")[0] != "error" for v in runs[-1].values()), runs[-1]
        assert runs[0] == runs[1] == expected(rude.host)
        # the warm run knew from the disk cache: not one HEAD (the cold one learnt it from one or two)
        assert heads == []
        assert 1 <= rude.count("HEAD") <= 5  # at most one per suffix probe under way, and one to try
    finally:
        rude.stop()


async def test_a_registry_that_answers_head_is_asked_with_head_when_warm(upstream: Registry, tmp_path: Path) -> None:
    polite = MannersFront(upstream.url)
    try:
        for _ in ("cold", "warm"):
            async with RegistryClient(cache=DiskCache(tmp_path / "cache")) as client:
                assert await resolve_all(client, polite.host, PAIRS) == expected(polite.host)
        # the warm run: a HEAD per tag it had seen, GET only for what is not on disk
        assert polite.count("HEAD", "/manifests/1") >= 1 and polite.count("HEAD", "/manifests/2") >= 1
    finally:
        polite.stop()


# -- 429 with Retry-After ----------------------------------------------------------------
@pytest.mark.parametrize("retry_after", ["1", "date:2"])
@pytest.mark.parametrize("cache", ["cold", "warm"])
async def test_a_429_with_retry_after_is_waited_for_within_the_budget(
    upstream: Registry, tmp_path: Path, retry_after: str, cache: str
) -> None:
    disk = DiskCache(tmp_path / "cache")
    busy = MannersFront(upstream.url, retry_after=retry_after)
    try:
        if cache == "warm":  # then the lookups are HEADs, and those are throttled
            async with RegistryClient(cache=disk) as client:
                await resolve_all(client, busy.host, PAIRS[:2])
        busy.throttle = 2
        async with RegistryClient(cache=disk) as client:
            answers = await resolve_all(client, busy.host, PAIRS[:2])
            (status,) = client.statuses()
    finally:
        busy.stop()
    assert answers == {pair: "available: index" for pair in PAIRS[:2]}
    assert busy.throttled == 2 and status.error == ""
    # waited as asked, twice in a row (an HTTP date has whole seconds: 1 to 2 s each)
    if retry_after.startswith("date:"):
        assert 1.5 <= status.waited_s <= 4.0
    else:
        assert status.waited_s == pytest.approx(2.0, abs=0.05)
    if cache == "warm":
        assert busy.count("HEAD") >= 3  # two refused, one answered


async def test_a_wait_past_the_budget_is_rate_limited_with_the_time_it_needed(upstream: Registry) -> None:
    busy = MannersFront(upstream.url, throttle=100, retry_after="30")
    try:
        async with RegistryClient(cache=False, wait_budget=10) as client:
            answers = await resolve_all(client, busy.host, PAIRS)
            (status,) = client.statuses()
    finally:
        busy.stop()
    reason = (
        "rate limited (HTTP 429): the registry asks to wait 30 s, 30 s in all, "
        "over the 10 s a run waits per registry ([registry] rate_limit_wait)"
    )
    assert set(answers.values()) == {f"error: {reason}"}
    assert status.waited_s == 0 and status.error == reason
    # the first wave (one request per tag, sent before any answer) was refused; nothing was
    # sent after the answer: it asked to be left alone for 30 s
    assert busy.throttled == len({image for image, _ in PAIRS}) == len(busy.asked)


async def test_a_429_without_retry_after_is_an_error_at_once(upstream: Registry) -> None:
    busy = MannersFront(upstream.url, throttle=100, retry_after="")
    try:
        async with RegistryClient(cache=False) as client:
            answers = await resolve_all(client, busy.host, PAIRS[:1])
    finally:
        busy.stop()
    assert answers == {PAIRS[0]: "error: rate limit reached (HTTP 429)"}


def test_the_wait_budget_comes_from_the_matrix(upstream: Registry, tmp_path: Path) -> None:
    for budget, code, verdict in ((1, 3, "error"), (5, 0, "available")):
        busy = MannersFront(upstream.url, throttle=1, retry_after="2")
        matrix = tmp_path / f"m{budget}.toml"
        matrix.write_text(
            f"arches = ['amd64']\nprofile = 'smoke'\n[registry]\nrate_limit_wait = {budget}\n"
            f'[[components]]\nid = "m"\ncategory = "server"\nprobe = "server"\nimage = "{busy.host}/test/multi:1"\n'
        )
        try:
            result = ecoready("images", "--matrix", str(matrix), "--json", "-", env={"XDG_CACHE_HOME": str(tmp_path)})
        finally:
            busy.stop()
        assert result.returncode == code, result.stderr
        (check,) = json.loads(result.stdout)["checks"]
        assert check["verdict"] == verdict, check
        if verdict == "error":
            assert "asks to wait 2 s, 2 s in all, over the 1 s a run waits per registry" in check["detail"]


async def test_rate_limit_remaining_zero_spends_no_more_requests(upstream: Registry) -> None:
    limited = RateLimitedFront(upstream.url, remaining=1)
    try:
        async with RegistryClient(cache=False) as client:
            with pytest.raises(RegistryError) as caught:
                await asyncio.wait_for(client.resolve(f"{limited.host}/test/multi:1", "arm64"), SAFETY)
            asked = client.statuses()[0].requests
    finally:
        limited.stop()
    # the index came (the last one left), the arm64 manifest would be refused: not asked for
    assert "RateLimit-Remaining is 0 of 100 per 21600 s; no request spent on it" in str(caught.value)
    assert asked == 1 and limited.remaining == 0


# -- a 500 for a moment ---------------------------------------------------------------------
async def test_a_500_for_a_moment_is_asked_again_and_a_lasting_one_is_the_registrys(upstream: Registry) -> None:
    # Docker's distribution answers a read of a tag whose link a push is rewriting with a
    # 500 ("invalid checksum digest format"): `make demo`'s first run met one while the
    # next wave's build published
    clean = MannersFront(upstream.url)
    once = MannersFront(upstream.url, fail=1)
    lasting = MannersFront(upstream.url, fail=1000)
    try:
        answers = []
        for front in (clean, once, lasting):  # a client each: none reads another's memo
            async with RegistryClient(cache=False, timeout=SHORT) as client:
                answers.append(await resolve_all(client, front.host, PAIRS[:1]))
        plain, recovered, failed = answers
    finally:
        for front in (clean, once, lasting):
            front.stop()
    assert list(recovered.values()) == list(plain.values()) == ["available: index"]
    assert once.count("", "/manifests/") == clean.count("", "/manifests/") + 1  # the 500, then as usual
    (verdict,) = failed.values()
    assert verdict == "error: server error (HTTP 500)", verdict
    assert lasting.count("", "/manifests/") == 2  # asked once more, then it is the registry's


# -- one repository that never answers -----------------------------------------------------
@pytest.mark.parametrize("cache", ["cold", "warm"])
async def test_one_hanging_repository_does_not_condemn_its_registry(
    upstream: Registry, tmp_path: Path, cache: str
) -> None:
    disk = DiskCache(tmp_path / "cache")
    slow = MannersFront(upstream.url, hang=frozenset({"test/slow"}))
    try:
        pairs = [("test/slow:1", "amd64"), ("test/slow:1", "arm64"), *PAIRS[:4], ("test/other:1", "arm64")]
        if cache == "warm":
            async with RegistryClient(cache=disk, timeout=SHORT) as client:
                await resolve_all(client, slow.host, pairs[2:])
        async with RegistryClient(cache=disk, timeout=SHORT) as client:
            answers = await resolve_all(client, slow.host, pairs)
            again = await resolve_all(client, slow.host, [("test/third:1", "amd64"), ("test/slow:1", "amd64")])
    finally:
        slow.stop()
    hung = "error: no answer in time (read timeout, 5 s) for test/slow"
    assert answers[("test/slow:1", "amd64")] == answers[("test/slow:1", "arm64")] == hung
    assert {k: v for k, v in answers.items() if k[0] != "test/slow:1"} == {
        **{k: v for k, v in expected(slow.host).items() if k in pairs},
        ("test/other:1", "arm64"): "available: index",
    }
    # later lookups: the registry is still asked, the hanging repository fails at once
    assert again == {("test/third:1", "amd64"): "available: index", ("test/slow:1", "amd64"): hung}
    assert slow.count("", "/test/slow/") == 1


async def test_three_hanging_repositories_in_a_row_mean_the_registry_is_down(upstream: Registry) -> None:
    dead = MannersFront(upstream.url, hang=frozenset({"test/multi", "test/slow", "test/other", "test/third"}))
    try:
        async with RegistryClient(cache=False, timeout=SHORT) as client:
            first = await resolve_all(client, dead.host, [("test/multi:1", "amd64")])
            second = await resolve_all(client, dead.host, [("test/slow:1", "amd64")])
            third = await resolve_all(client, dead.host, [("test/other:1", "amd64")])
            fourth = await resolve_all(client, dead.host, [("test/third:1", "amd64")])
    finally:
        dead.stop()
    assert list(first.values()) == ["error: no answer in time (read timeout, 5 s) for test/multi"]
    assert list(second.values()) == ["error: no answer in time (read timeout, 5 s) for test/slow"]
    down = "error: no answer in time (read timeout, 5 s) for 3 repositories in a row"
    assert list(third.values()) == list(fourth.values()) == [down]
    assert dead.count("", "/test/third/") == 0  # down: not asked
