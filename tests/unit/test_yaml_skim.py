"""The values `load_all` leaves out (`skip`), blanked in the text before the parser sees
them (`stack/yaml_skim.py`): kubectl's `status` is blanked, and whatever a text holds,
it reads the same blanked or not (the same values, or the same refusal at the same place):
quotes and brackets open past a value, block scalars, anchors, flow style, an entry at the
key's own indentation, comments and tabs where the value ends."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecoready.domain.errors import ConfigError
from ecoready.stack import yaml_bounded
from ecoready.stack.kube import SKIPPED
from ecoready.stack.yaml_bounded import load_all
from ecoready.stack.yaml_skim import blank_values

POD = """\
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {{"apiVersion":"v1","kind":"Pod"}}
    name: db-{n}
    managedFields:
    - manager: kubectl
      fieldsV1: {{f:spec: {{}}}}
  spec:
    containers:
    - {{name: mysql, image: "mysql:8.4.{n}"}}
    volumes:
    - name: data
      emptyDir: {{}}
  status:
    phase: Running
    conditions:
    - type: Ready
      status: "True"
"""


def _read(data: bytes, blank: bool) -> object:
    """The documents read, or the refusal's words, with the blanking on or off."""
    try:
        if blank:
            return list(load_all(data, "x.yaml", SKIPPED))
        return list(yaml_bounded._documents(data, SKIPPED, set()))
    except ConfigError as error:
        return str(error)
    except Exception as error:  # the parser's refusal, as load_all says it
        return str(yaml_bounded._problem("x.yaml", error))


def _same(data: bytes) -> bool:
    """Whether it was blanked; asserts it reads the same (or is refused with the same words)."""
    assert _read(data, True) == _read(data, False), data
    found = blank_values(data, {"status", "managedFields"}, yaml_bounded._valid)
    return found is not None


def test_kubectls_status_and_what_init_never_reads_are_blanked_and_left_out() -> None:
    text = ("apiVersion: v1\nitems:\n" + "".join(POD.format(n=n) for n in range(3)) + "kind: List\n").encode()
    blanked = blank_values(text, {"status", "managedFields"}, yaml_bounded._valid)
    assert blanked is not None and len(blanked.keys) == 6  # each pod's status and managedFields
    every = blank_values(text, {path[-1] for path in SKIPPED}, yaml_bounded._valid)
    assert every is not None and len(every.keys) == 12  # and its annotations and volumes
    (doc,) = load_all(text, "pods.yaml", SKIPPED)
    assert isinstance(doc, dict)
    assert [sorted(item) for item in doc["items"]] == [["apiVersion", "kind", "metadata", "spec"]] * 3
    assert [item["metadata"] for item in doc["items"]] == [{"name": f"db-{n}"} for n in range(3)]
    assert [sorted(item["spec"]) for item in doc["items"]] == [["containers"]] * 3  # volumes left out
    assert _same(text)


def test_json_leaves_out_the_same_paths() -> None:
    text = ("apiVersion: v1\nitems:\n" + "".join(POD.format(n=n) for n in range(2)) + "kind: List\n").encode()
    (doc,) = load_all(text, "pods.yaml", SKIPPED)
    (from_json,) = load_all(json.dumps(next(load_all(text, "pods.yaml"))).encode(), "pods.json", SKIPPED)
    assert from_json == doc


@pytest.mark.parametrize(
    "text",
    [
        # a quoted string open over the line that looks like the value's end
        'a:\n  status:\n    m: "open\n  kind: x"\n  kind: Pod\n',
        # the key inside a quoted string, and inside a block scalar
        'a: "\n  status:\n    x: 1\n"\nkind: Pod\n',
        "note: |\n  status:\n    x: 1\nkind: Pod\n",
        # flow style: indentation means nothing there
        "{\nstatus:\n  a, b: c\n}\n",
        # an anchor in the value, aliased later: refused as a part not read
        "status:\n  a: &x 1\nkind: *x\n",
        # an entry at the key's own indentation goes on the value
        "status:\n   x\n- a\n",
        # a comment or a tab where the value seems to end
        "status:\n  a: 1\n# c\n  x\nkind: Pod\n",
        "status:\n  a: 1\n\tb: 2\n",
        # a bracket open past the value
        "status:\n  a: [1,\n2]\nkind: Pod\n",
        # the key as a nested key, not an object's top level
        "spec:\n  status:\n    a: 1\nkind: Pod\n",
        # broken YAML inside the value: said as it is, at its place
        "status:\n  a: b: c\nkind: Pod\n",
        # the value at the end of the text, and a document marker after it
        "kind: Pod\nstatus:\n  a: 1\n---\nkind: Pod\nstatus:\n  b: 2",
    ],
    ids=[
        "open-quote",
        "in-quote",
        "in-block-scalar",
        "flow",
        "anchor",
        "entry",
        "comment",
        "tab",
        "bracket",
        "nested",
        "broken",
        "markers",
    ],
)
def test_a_text_reads_the_same_blanked_or_not(text: str) -> None:
    _same(text.encode())


_LINES = [
    "status:",
    "  status:",
    "    status:",
    "- status:",
    "kind: Pod",
    "  kind: Pod",
    "- a: 1",
    "  - b",
    "    c: 'q",
    "  q'",
    '    d: "r',
    '  r"',
    "    e: |",
    "      lit",
    "    f: [1,",
    "  2]",
    "    g: &g 1",
    "h: *g",
    "  # note",
    "\tt: 1",
    "---",
    "...",
    "",
    "   ",
    "    i: {j: k}",
    "  <<: {m: n}",
    "    x",
    "items:",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_LINES), max_size=14))
def test_any_text_reads_the_same_blanked_or_not(lines: list[str]) -> None:
    _same("\n".join(lines).encode())


def test_the_texts_tried_include_blanked_ones_read_and_refused() -> None:
    """The property above is not empty: of texts like those it draws, some are blanked and
    read, some blanked and refused."""
    outcomes = set()
    for text in ("status:\n  a: 1\nkind: Pod\n", "status:\n  a: 1\nkind: Pod\nb: [\n"):
        assert _same(text.encode())
        outcomes.add(isinstance(_read(text.encode(), True), str))
    assert outcomes == {True, False}
