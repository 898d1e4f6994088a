"""The command line's shape: a module per verb in ecoready.ui.verbs, each verb's `--help`,
and the options several verbs share declared once (the output options from
report.FORMATS, the --profile choices from Profile)."""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.domain.model import Profile
from ecoready.report import OPTIONS
from ecoready.ui import cli
from ecoready.ui.verbs import VERBS

UI = Path(cli.__file__).parent


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's verbs by name (none when it has no subparsers)."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every verb and sub-verb (`lab build`) with its parser, the top level first."""
    yield path, parser
    for name, sub in subparsers(parser).items():
        yield from commands(sub, (*path, name))


PARSER = cli.build_parser()
COMMANDS = dict(commands(PARSER))


def test_every_verb_is_a_module_of_ui_verbs_that_runs_it() -> None:
    verbs = subparsers(PARSER)
    assert list(verbs) == [module.__name__.rpartition(".")[2] for module in VERBS]
    for path, parser in COMMANDS.items():
        if path and not subparsers(parser):  # what runs: a verb, or one of `lab`'s actions
            assert parser.get_default("func").__module__ == f"ecoready.ui.verbs.{path[0]}", path


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: " ".join(p) or "ecoready")
def test_help_works(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([*path, "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {' '.join(('ecoready', *path))}")


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {option: action for action in parser._actions for option in action.option_strings}


def test_the_output_options_are_the_report_formats() -> None:
    with_outputs = []
    for path, parser in COMMANDS.items():
        for group in parser._action_groups:
            if group.title and group.title.startswith("report files"):
                assert [a.dest for a in group._group_actions] == list(OPTIONS), path
                with_outputs.append(path)
    assert with_outputs == [("run",), ("check",), ("watch",), ("report",)]


def test_the_profile_choices_are_the_profiles() -> None:
    profiles = [options_of(p)["--profile"] for p in COMMANDS.values() if "--profile" in options_of(p)]
    assert len(profiles) == 3  # run, check, watch
    assert all(list(action.choices or ()) == [p.value for p in Profile] for action in profiles)


@pytest.mark.parametrize("option", ["--matrix", "--only", "--arch", "--profile", "--concurrency", "--json"])
def test_a_shared_option_is_declared_once(option: str) -> None:
    sources = {path: path.read_text() for path in UI.rglob("*.py")}
    declared = [str(path.relative_to(UI)) for path, text in sources.items() for _ in re.finditer(f'"{option}"', text)]
    assert declared == ["verbs/options.py"]


def test_build_parser_is_short() -> None:
    assert len(inspect.getsource(cli.build_parser).splitlines()) < 40
