"""Every relative link of README.md and docs/*.md leads to a file that exists, and an
anchor to a heading of that file (GitHub's slugs); every repository path the docs, the
tests and the code's own comments and docstrings name (`app/run/runner.py`,
`tests/support/...`, `containers/...`) exists; the README stays short."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"`|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    found: set[str] = set()
    for line in text.splitlines():
        if line.startswith("#"):
            base = slug(line.lstrip("#"))
            n, name = 0, base
            while name in found:  # GitHub numbers repeated headings
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(path: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", path.read_text()))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(doc: Path) -> None:
    broken = []
    for target in links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file, _, anchor = target.partition("#")
        where = (doc.parent / file).resolve() if file else doc
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no heading #{anchor} in {where.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title\n[ok](#a-title) [gone](missing.md) [bad](#nowhere)\n```\n[code](x.md)\n```\n")
    assert links(page) == ["#a-title", "missing.md", "#nowhere"]
    assert "a-title" in anchors(page) and "nowhere" not in anchors(page)
    assert slug("Who is blamed") == "who-is-blamed" and slug("`diff` and `check`") == "diff-and-check"


# A path from the repository's root: one of its folders, then names. `shared/` is where the
# developers' notes live, outside the repository: a pointer there leads nowhere for a reader.
FOLDERS = ("app", "probes", "tests", "containers", "docs", "scripts", "bench", "shared")
REPO_PATH = re.compile(r"(?<![\w./@:~-])((?:" + "|".join(FOLDERS) + r")/[\w./+*<>{}-]*[\w/*>}])")
PLACEHOLDER = re.compile(r"[*<{]")  # a pattern or a placeholder (`tests/unit/test_*.py`), not one file


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of what a file says to its reader: a Markdown file whole; of Python,
    its comments and docstrings (string literals in code are data, e.g. a test's own files)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        yield from enumerate(text.splitlines(), 1)
        return
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            for offset, line in enumerate(first.value.value.splitlines()):
                yield first.lineno + offset, line


def named_paths(path: Path) -> Iterator[tuple[int, str]]:
    """(line, path) of every repository path a file names."""
    for number, line in prose(path):
        for found in REPO_PATH.findall(line):
            if not PLACEHOLDER.search(found):
                yield number, found.rstrip(".")


def missing_paths(root: Path, files: list[Path]) -> list[str]:
    return [
        f"{file.relative_to(root)}:{number}: {named} does not exist"
        for file in files
        for number, named in named_paths(file)
        if not (root / named).exists()
    ]


def readers_files(root: Path) -> list[Path]:
    """README, docs, the tests (and their data's READMEs), and the code's own words."""
    return [
        root / "README.md",
        *sorted((root / "docs").glob("*.md")),
        *sorted((root / "tests").rglob("*.md")),
        *sorted((root / "tests").rglob("*.py")),
        *sorted((root / "app").rglob("*.py")),
        *sorted((root / "probes").rglob("*.py")),
        *sorted((root / "scripts").rglob("*.py")),
        *sorted((root / "bench").rglob("*.py")),
    ]


def test_every_repository_path_named_exists() -> None:
    missing = missing_paths(ROOT, readers_files(ROOT))
    assert not missing, "paths that lead nowhere (a file moved?):\n" + "\n".join(missing)


def test_the_path_checker_sees_a_moved_file(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "here.py").write_text('"""See `app/here.py` and tests/gone.py."""\n')
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "`app/here.py`, app/moved.py. and `tests/unit/test_*.py`, https://x.org/docs/a.md, shared/notes.md\n"
    )
    code = tmp_path / "t.py"
    code.write_text('# a comment naming scripts/none.py\nFILES = {"app/made_in_tmp.py": b""}\n')
    assert missing_paths(tmp_path, [page, tmp_path / "app" / "here.py", code]) == [
        "docs/page.md:1: app/moved.py does not exist",
        "docs/page.md:1: shared/notes.md does not exist",
        "app/here.py:1: tests/gone.py does not exist",
        "t.py:1: scripts/none.py does not exist",
    ]


def test_the_readme_is_short_and_keeps_its_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    assert "make demo    # sets everything up" in text and "make test    # sets everything up" in text
    first_command = text.index("```sh")
    assert "ecoready init --from" in text[first_command : first_command + 400]  # your own stack first
