"""The tag watch's judgement, history and pins, in-process (the registry side runs against
a real registry in tests/integration/test_tag_watch.py)."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ecoready.domain.errors import DataError, EnvironmentProblem
from ecoready.domain.model import ComponentOrigin
from ecoready.domain.tagwatch import ArchImage, NewerTag, TagRecord, TagSeen
from ecoready.judge import tag_history
from ecoready.judge.tag_findings import Change, exit_code, judge, published_since, searched_recently
from ecoready.judge.tag_words import finding_line, payload, worth_posting
from ecoready.report.migration import drop_pin_text, pins_published
from ecoready.stack.compose import parse_compose
from ecoready.stack.yaml_bounded import key_lines

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
DAY = timedelta(days=1)
BOTH = ("amd64", "arm64")


def seen(reference: str, *arches: tuple[str, str], published: dict[str, str] | None = None) -> TagSeen:
    images = tuple(ArchImage(a, d, (published or {}).get(a, "")) for a, d in arches)
    return TagSeen(reference, images)


def test_the_first_look_records_and_says_nothing_then_gained_and_lost_are_said_once() -> None:
    first = judge({}, [seen("db:8.4", ("amd64", "sha256:a1"))], BOTH, T0, 3 * DAY)
    assert first.findings == () and first.first == ("db:8.4",)
    assert first.records[("db:8.4", "arm64")].digest == "" and first.records[("db:8.4", "arm64")].baseline
    second = judge(first.records, [seen("db:8.4", ("amd64", "sha256:a1"), ("arm64", "sha256:b1"))], BOTH, T0 + DAY, DAY)
    assert [(f.change, f.arch, f.since) for f in second.findings] == [(Change.GAINED, "arm64", "2026-12-02T10:00:00Z")]
    assert exit_code(second) == 0 and worth_posting(second)
    assert finding_line(second.findings[0]) == "db:8.4 now publishes arm64, seen 2026-12-02 (b1)"
    third = judge(second.records, [seen("db:8.4", ("amd64", "sha256:a1"))], BOTH, T0 + 2 * DAY, DAY)
    assert [(f.change, f.regression) for f in third.findings] == [(Change.LOST, True)]
    assert exit_code(third) == 1
    fourth = judge(third.records, [seen("db:8.4", ("amd64", "sha256:a1"))], BOTH, T0 + 3 * DAY, DAY)
    assert fourth.findings == () and exit_code(fourth) == 0  # lost once, said once


def test_an_arch_rebuilt_alone_makes_the_other_behind_after_the_threshold() -> None:
    both = seen("proxysql:3.0", ("amd64", "sha256:a1"), ("arm64", "sha256:b1"))
    start = judge({}, [both], BOTH, T0, 3 * DAY)
    rebuilt = seen("proxysql:3.0", ("amd64", "sha256:a2"), ("arm64", "sha256:b1"))
    soon = judge(start.records, [rebuilt], BOTH, T0 + DAY, 3 * DAY)
    assert soon.findings == ()  # rebuilt a day ago: not yet behind
    later = judge(soon.records, [rebuilt], BOTH, T0 + 10 * DAY, 3 * DAY)
    (behind,) = later.findings
    assert (behind.change, behind.arch, behind.other, behind.days, behind.news) == (
        Change.BEHIND,
        "arm64",
        "amd64",
        9.0,
        True,
    )
    assert finding_line(behind).startswith("arm64 of proxysql:3.0 is 9 days behind amd64: amd64 rebuilt 2026-12-02")
    again = judge(later.records, [rebuilt], BOTH, T0 + 11 * DAY, 3 * DAY)
    assert [f.news for f in again.findings] == [False] and not worth_posting(again)
    caught_up = seen("proxysql:3.0", ("amd64", "sha256:a2"), ("arm64", "sha256:b2"))
    assert judge(again.records, [caught_up], BOTH, T0 + 12 * DAY, 3 * DAY).findings == ()


def test_configs_dated_apart_say_behind_at_the_first_look_and_dated_together_do_not() -> None:
    apart = {"amd64": "2026-11-20T00:00:00Z", "arm64": "2026-11-01T00:00:00.123456789Z"}
    one = seen("proxysql:3.0", ("amd64", "sha256:a1"), ("arm64", "sha256:b1"), published=apart)
    (behind,) = judge({}, [one], BOTH, T0, 3 * DAY).findings
    assert behind.since == "2026-11-20T00:00:00Z" and behind.days == pytest.approx(11.42, abs=0.01)
    together = {"amd64": "2026-11-20T00:00:00Z", "arm64": "2026-11-19T23:10:00Z"}
    other = seen("mysql:8.4", ("amd64", "sha256:a1"), ("arm64", "sha256:b1"), published=together)
    assert judge({}, [other], BOTH, T0, 3 * DAY).findings == ()


def test_a_newer_tag_is_news_once_and_an_unasked_registry_is_exit_3_and_keeps_the_records() -> None:
    lacking = TagSeen(
        "app:1.0", (ArchImage("amd64", "sha256:a1"),), newer=(NewerTag("arm64", "1.1", False),), searched=("arm64",)
    )
    first = judge({}, [lacking], BOTH, T0, DAY)
    assert [(f.change, f.other, f.news) for f in first.findings] == [(Change.NEWER_TAG, "1.1", True)]
    assert finding_line(first.findings[0]) == (
        "app:1.0 lacks arm64; 1.1 publishes it (a newer version of the same line): upgrade to >= 1.1"
    )
    second = judge(first.records, [lacking], BOTH, T0 + DAY, DAY)
    assert [f.news for f in second.findings] == [False]
    assert searched_recently(second.records, T0 + DAY + timedelta(hours=1), DAY) == {"app:1.0": {"arm64"}}
    assert searched_recently(second.records, T0 + 2 * DAY, DAY) == {}
    not_asked = TagSeen("app:1.0", (ArchImage("amd64", "sha256:a1"),))  # the search waits: its answer stands
    kept = judge(second.records, [not_asked], BOTH, T0 + DAY, DAY)
    assert [(f.other, f.news) for f in kept.findings] == [("1.1", False)]
    assert kept.records[("app:1.0", "arm64")].searched_at == second.records[("app:1.0", "arm64")].searched_at
    none = judge(kept.records, [replace(not_asked, searched=("arm64",))], BOTH, T0 + 3 * DAY, DAY)
    assert none.findings == () and none.records[("app:1.0", "arm64")].upgrade == ""
    failed = judge(second.records, [TagSeen("app:1.0", registry="r.example", error="unreachable")], BOTH, T0, DAY)
    assert exit_code(failed) == 3 and failed.records == second.records
    body = payload(failed, "m.toml")
    assert "app:1.0: not checked: registry r.example: unreachable" in body["text"]


def test_the_webhook_body_carries_the_findings_as_data_and_escapes_the_text() -> None:
    start = judge({}, [seen("<!channel>:1", ("amd64", "sha256:a1"))], BOTH, T0, DAY)
    gained = judge(start.records, [seen("<!channel>:1", ("amd64", "sha256:a1"), ("arm64", "sha256:b"))], BOTH, T0, DAY)
    body = payload(gained, "m.toml", ["drop it"])
    assert body["text"].startswith("ecoready: m.toml: 1 change in the tags watched\n• &lt;!channel&gt;:1 now publishes")
    assert body["tags"]["findings"][0]["change"] == "gained" and body["tags"]["findings"][0]["regression"] is False
    assert body["tags"]["pins"] == ["drop it"]


def test_the_history_reads_back_what_it_wrote_bounded_and_sorted(tmp_path: Path) -> None:
    records = judge({}, [seen("b:1", ("amd64", "sha256:a")), seen("a:1", ("arm64", "sha256:b"))], BOTH, T0, DAY).records
    tag_history.write(tmp_path, records)
    text = (tmp_path / tag_history.FILE).read_text()
    assert [line.split('"')[3] for line in text.splitlines()] == ["a:1", "a:1", "b:1", "b:1"]
    problems: list[str] = []
    assert tag_history.read(tmp_path, problems) == records and problems == []
    many = {
        (f"r{n}", "amd64"): TagRecord(
            f"r{n}", "amd64", "", "", "2026-12-01T00:00:00Z", f"2026-12-{1 + n % 28:02d}T00:00:00Z"
        )
        for n in range(60)
    }
    assert len(tag_history.render(many).splitlines()) == 60
    old = tag_history.MAX_RECORDS
    try:
        tag_history.MAX_RECORDS = 10
        kept = tag_history.parse(tag_history.render(many))
    finally:
        tag_history.MAX_RECORDS = old
    assert len(kept) == 10 and min(r.last_seen for r in kept.values()) >= "2026-12-24"  # the 10 seen last


@pytest.mark.parametrize(
    "text",
    [
        "not json\n",
        '{"reference": "a", "arch": "amd64"}\n',
        tag_history.render({("a", "amd64"): TagRecord("a", "amd64", "", "", "yesterday", "2026-12-01T00:00:00Z")}),
        "\xff\n",
    ],
)
def test_an_unreadable_history_is_said_and_set_aside(tmp_path: Path, text: str) -> None:
    (tmp_path / tag_history.FILE).write_bytes(text.encode("latin-1"))
    problems: list[str] = []
    assert tag_history.read(tmp_path, problems) == {}
    (problem,) = problems
    assert "cannot be read (" in problem and "set aside as tags.jsonl.corrupt-" in problem
    assert not (tmp_path / tag_history.FILE).exists()
    assert [p.read_bytes() for p in tmp_path.glob("tags.jsonl.corrupt-*")] == [text.encode("latin-1")]


def test_a_record_twice_is_refused() -> None:
    at = "2026-12-01T00:00:00Z"
    line = tag_history.render({("a", "amd64"): TagRecord("a", "amd64", "", "", at, at)})
    with pytest.raises(DataError, match="a amd64 is recorded twice"):
        tag_history.parse(line + line)


def test_checks_that_overlap_take_turns_and_lose_no_record(tmp_path: Path) -> None:
    def writer(name: str) -> None:
        for n in range(15):
            with tag_history.locked(tmp_path):
                records = tag_history.read(tmp_path, [])
                at = f"2026-12-01T00:00:{n:02d}Z"
                records[(f"{name}:{n}", "amd64")] = TagRecord(f"{name}:{n}", "amd64", "sha256:x", at, at, at)
                tag_history.write(tmp_path, records)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(tag_history.read(tmp_path, [])) == 45


def test_a_lock_held_too_long_is_an_environment_problem(tmp_path: Path) -> None:
    held = tag_history.locked(tmp_path)
    with held, pytest.raises(EnvironmentProblem, match="another tag check"), tag_history.locked(tmp_path, wait_s=0.2):
        pass


def test_a_pin_can_go_since_the_image_publishes_the_other_arch() -> None:
    origins = [
        ComponentOrigin("db", "mysql:8.4", "db", "linux/amd64", ("compose.yaml:4: services.db.platform",)),
        ComponentOrigin("px", "proxysql:3.0", "px", "linux/amd64"),
        ComponentOrigin("k", "mysql:8.4", "k", "linux/amd64", ("k8s.yaml Deployment/k: spec.nodeSelector",)),
    ]
    since = {("mysql:8.4", "arm64"): ("2026-12-05T10:00:00Z", False), ("proxysql:3.0", "amd64"): ("x", True)}
    pins = pins_published(origins, since, BOTH)
    assert [drop_pin_text(p) for p in pins] == [
        "drop `platform: linux/amd64` from service db (compose.yaml:4: services.db.platform): its image publishes "
        "arm64 since 2026-12-05",
        "drop the linux/amd64 pin of k (k8s.yaml Deployment/k: spec.nodeSelector): its image publishes arm64 since "
        "2026-12-05",
    ]
    baseline = {("mysql:8.4", "arm64"): ("2026-12-01T10:00:00Z", True)}
    assert pins_published(origins[:1], baseline, BOTH)[0].why == "its image publishes arm64 since at least 2026-12-01"
    records = judge({}, [seen("mysql:8.4", ("amd64", "a"), ("arm64", "b"))], BOTH, T0, DAY).records
    assert published_since(records)[("mysql:8.4", "arm64")] == ("2026-12-01T10:00:00Z", True)


def test_compose_pins_are_kept_with_their_file_and_line() -> None:
    text = "services:\n  web:\n    image: nginx\n  db:\n    image: mysql:8.4\n\n    platform: linux/amd64\n"
    _, services = parse_compose(text, "stack/compose.yaml")
    assert [(s.name, s.pinned_at) for s in services] == [
        ("web", ()),
        ("db", ("compose.yaml:7: services.db.platform",)),
    ]
    assert key_lines("services: [1]\n", "f.yaml", "services", "platform") == {}


def test_a_lock_that_is_a_symlink_is_refused_in_words(tmp_path: Path) -> None:
    (tmp_path / tag_history.LOCK).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(EnvironmentProblem, match="cannot open the lock"), tag_history.locked(tmp_path):
        pass
    assert not (tmp_path / "elsewhere").exists()


def test_the_plan_verb_says_the_pins_the_tag_watch_shows_can_go(tmp_path: Path) -> None:
    from ecoready.report import json as json_report
    from tests.support.cli import ecoready
    from tests.unit.test_migration_plan import REF, stack

    saved = tmp_path / "report.json"
    saved.write_text(json_report.render(stack()))  # legacy pinned to amd64, its arm64 missing at the run
    history = tmp_path / "history"
    history.mkdir()
    gained = TagRecord(
        f"{REF}legacy:1", "arm64", "sha256:b", "2026-12-05T10:00:00Z", "2026-12-05T10:00:00Z", "2026-12-06T10:00:00Z"
    )
    tag_history.write(history, {(gained.reference, gained.arch): gained})
    result = ecoready("plan", str(saved), "--history", str(history), "--format", "md")
    assert result.returncode == 0, result.stderr
    assert "| legacy | legacy | linux/amd64 | keep | arm64: blocked |" in result.stdout  # what the run saw
    assert result.stdout.rstrip().endswith(
        "### Arch pins the tag watch shows can go (ecoready check --tags)\n\n"
        "- drop `platform: linux/amd64` from service legacy: its image publishes arm64 since 2026-12-05"
    )
    text = ecoready("plan", str(saved), "--history", str(history), "--format", "text", env={"COLUMNS": "100"})
    assert (
        "  - drop `platform: linux/amd64` from service legacy: its image publishes arm64 since 2026-12-05"
        in text.stdout
    )
    nothing = ecoready("plan", str(saved), "--history", str(tmp_path / "none"), "--format", "md")
    assert "tag watch" not in nothing.stdout and nothing.returncode == 0


def test_a_tag_not_found_is_said_and_a_tag_deleted_loses_its_arches() -> None:
    start = judge({}, [seen("db:8.4", ("amd64", "sha256:a"))], BOTH, T0, DAY)
    gone = judge(start.records, [TagSeen("db:8.4", found=False)], BOTH, T0 + DAY, DAY)
    assert [(f.change, f.arch) for f in gone.findings] == [(Change.LOST, "amd64")]
    assert gone.absent == ("db:8.4",) and exit_code(gone) == 1
    assert "db:8.4: no such tag in its registry (nothing published to watch)" in payload(gone, "m")["text"]


def test_a_check_that_asked_before_another_judged_leaves_that_reference_to_it() -> None:
    later = judge({}, [seen("db:8.4", ("amd64", "sha256:a"), ("arm64", "sha256:b"))], BOTH, T0 + DAY, DAY)
    earlier = judge(later.records, [seen("db:8.4", ("amd64", "sha256:a"))], BOTH, T0, DAY)  # waited for the lock
    assert earlier.findings == () and earlier.records == later.records
