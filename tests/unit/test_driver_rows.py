"""Driver rows from the matrix to every view: the `driver` option checked with positions,
the packaging stage planned first, the packaging verdict folded into the cell and shown
next to the runtime result in every exporter, and the probe's reading of a failed install."""

from __future__ import annotations

import json
import subprocess
import textwrap
from dataclasses import replace

import pytest

from ecoready.domain.drivers import parse_driver
from ecoready.domain.errors import ConfigError, DeadlineExceeded, RegistryError
from ecoready.domain.events import CellFinished, CellStarted, CheckReported, Event, PackagingReported, StageFinished
from ecoready.domain.model import Check, HostFacts, Outcome, Report, Stage, Status
from ecoready.domain.packaging import InstallKind, Packaging, PackagingVerdict
from ecoready.domain.state import fold, reduce
from ecoready.matrix.load import parse
from ecoready.plan.cells import INSTALL_BUDGET, PACKAGING_BUDGET, make_plan
from ecoready.probe_api.install_cache import InstallJob, cache_key, install_once, labels_printed, step_of
from ecoready.probes import smoke
from ecoready.probes.shared.drivers import MISMATCH, failure, recipe
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.load import report_from_dict
from ecoready.report.status_words import packaging_text
from ecoready.report.text_grid import render_summary
from ecoready.ui.cli import main
from tests.support.fake_host import failed, ok, rig
from tests.support.reports_sample import lab_report

HEAD = textwrap.dedent("""\
    [[components]]
    id = "db"
    category = "server"
    probe = "server"
    image = "127.0.0.1:5000/lab/mariadb:10.11"

    [[components]]
    id = "py"
    category = "connector"
    probe = "connector"
    image = "127.0.0.1:5000/lab/python:3.13"
    backend = "db"
""")


def problems(options: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(HEAD + options + "\n", "m.toml")
    return [f"{p.line}:{p.col}: {p.message}" for p in info.value.problems]


def test_a_driver_row_names_its_language_and_a_pin_its_smoke_program_speaks() -> None:
    matrix = parse(HEAD + 'options = { language = "python", driver = "pypi:mysqlclient==2.2.*" }\n', "m.toml")
    assert matrix.component("py").options["driver"] == "pypi:mysqlclient==2.2.*"
    assert problems('options = { language = "python", driver = "pypi:mysqlclient==**" }') == [
        "13:43: 'driver' 'pypi:mysqlclient==**': pypi: '==**' is not a PEP 440 version specifier "
        "(e.g. ==2.2.*, >=1.1,<2)"
    ]
    assert problems('options = { language = "java", driver = "npm:mysql2@3" }') == [
        "13:41: 'driver' 'npm:mysql2@3' is a nodejs driver: the row needs language = 'nodejs'"
    ]
    assert problems('options = { language = "python", driver = "pypi:aiomysql" }') == [
        "13:43: 'driver' 'pypi:aiomysql': the python smoke program speaks pymysql, mysqlclient, "
        "mysql-connector-python, mariadb"
    ]
    assert problems('options = { language = "python" }') == [
        "13:24: language 'python' needs a 'driver' (e.g. \"pypi:PyMySQL\")"
    ]


MATRIX = parse(
    HEAD
    + 'options = { language = "python", driver = "pypi:PyMySQL" }\n\n'
    + '[[components]]\nid = "c"\ncategory = "connector"\nprobe = "connector"\n'
    + 'image = "127.0.0.1:5000/lab/connectors:bookworm"\nbackend = "db"\noptions = { language = "c" }\n',
    "m.toml",
)
HOST = HostFacts("local", "amd64", emulated_arches=("arm64",), emulators={"arm64": "qemu 10"})


def test_the_packaging_stage_comes_first_for_driver_rows_only_and_the_install_has_a_budget() -> None:
    plan = make_plan(MATRIX, [HOST], only=["py", "c"])
    cells = {c.id: c for c in plan.cells}
    assert cells["py/amd64"].stages == (Stage.PACKAGING, Stage.IMAGE, Stage.START, Stage.SMOKE)
    assert cells["c/amd64"].stages == (Stage.IMAGE, Stage.START, Stage.SMOKE)
    native, emulated = cells["py/amd64"].budgets, cells["py/arm64"].budgets
    assert native[Stage.PACKAGING] == emulated[Stage.PACKAGING] == PACKAGING_BUDGET  # network-bound: not scaled
    assert native[Stage.START] == cells["c/amd64"].budgets[Stage.START] + INSTALL_BUDGET
    assert emulated[Stage.START] > native[Stage.START]


SOURCE = Packaging(
    "pypi:mysqlclient==2.2.*",
    "pypi",
    "mysqlclient",
    "2.2.8",
    "arm64",
    PackagingVerdict.SOURCE,
    needs=("gcc", "python3-dev", "pkg-config", "libmariadb-dev"),
    detail="no aarch64 wheel (wheels only for win_amd64); mysqlclient-2.2.8.tar.gz has native sources",
)


def test_the_verdict_reads_the_same_in_every_view() -> None:
    assert packaging_text(SOURCE) == "source build (needs gcc, python3-dev, pkg-config, libmariadb-dev)"
    built = replace(SOURCE, verdict=PackagingVerdict.READY, install="built from source")
    built = replace(built, install_kind=InstallKind.SOURCE)
    assert packaging_text(built) == "ready (built from source: needs gcc, python3-dev, pkg-config, libmariadb-dev)"
    failed = replace(SOURCE, verdict=PackagingVerdict.MISSING, install="the image has no gcc")
    failed = replace(failed, install_kind=InstallKind.FAILED)
    assert packaging_text(failed) == "missing (no aarch64 build, source build failed: the image has no gcc)"
    wheel = replace(SOURCE, verdict=PackagingVerdict.READY, artifact="wheel", needs=())
    assert packaging_text(wheel) == "ready (wheel)"
    nothing = replace(SOURCE, verdict=PackagingVerdict.MISSING, needs=(), detail="no aarch64 wheel and no sdist")
    assert packaging_text(nothing) == "missing (no aarch64 wheel and no sdist)"


def driver_report(packaging: Packaging, stages: list[tuple[Stage, Outcome, str]]) -> Report:
    """The recorded lab report with one driver cell more, folded from its events."""
    base = lab_report("lab-run")
    cell = replace(next(iter(base.cells.values())), id="drv/arm64", component="drv", name="a driver", arch="arm64")
    report = replace(base, cells={**base.cells, cell.id: cell})
    events: list[Event] = [CellStarted(cell.id, "2026-11-21T23:25:00Z"), PackagingReported(cell.id, packaging)]
    for stage, outcome, detail in stages:
        if stage is Stage.SMOKE and outcome is Outcome.PASS:  # a smoke stage that passed ran its check
            events.append(CheckReported(cell.id, stage, Check("connect", Outcome.PASS)))
        events.append(StageFinished(cell.id, stage, outcome, 1.0, detail))
    return fold([*events, CellFinished(cell.id, "2026-11-21T23:26:00Z", 41.0)], report)


def test_a_failed_source_build_is_broken_with_its_verdict_next_to_it_in_every_view() -> None:
    failed = replace(SOURCE, verdict=PackagingVerdict.MISSING, install="the image has no gcc, pkg-config")
    failed = replace(failed, install_kind=InstallKind.FAILED)
    report = driver_report(
        failed,
        [
            (Stage.PACKAGING, Outcome.PASS, "mysqlclient 2.2.8: source build"),
            (Stage.IMAGE, Outcome.PASS, "index"),
            (Stage.START, Outcome.FAIL, "mysqlclient 2.2.8 did not install: the image has no gcc, pkg-config"),
        ],
    )
    cell = report.cells["drv/arm64"]
    assert (cell.status, cell.packaging) == (Status.BROKEN, failed)
    assert "did not install: the image has no gcc, pkg-config" in cell.detail
    verdict = "missing (no aarch64 build, source build failed: the image has no gcc, pkg-config)"
    summary = render_summary(report)
    assert f"drv/arm64: its package mysqlclient 2.2.8 (pypi:mysqlclient==2.2.*): {verdict}" in summary
    assert "broken" not in summary.split("its package")[1].splitlines()[0]  # one status a line
    assert "## Drivers" in markdown.render(report) and verdict in markdown.render(report)
    assert "<h2>Drivers</h2>" in html.render(report) and verdict in html.render(report)
    assert f'name="packaging" value="mysqlclient 2.2.8 (pypi:mysqlclient==2.2.*): {verdict}"' in junit.render(report)
    written = json.loads(json_report.render(report))
    (drv,) = [c for c in written["cells"] if c["id"] == "drv/arm64"]
    assert drv["packaging"]["verdict"] == "missing" and drv["packaging"]["needs"][0] == "gcc"
    assert report_from_dict(written).cells["drv/arm64"].packaging == failed  # and back


def test_a_ready_driver_shows_its_artifact_in_the_grid_and_a_new_run_forgets_the_old_verdict() -> None:
    wheel = replace(SOURCE, verdict=PackagingVerdict.READY, artifact="wheel", needs=(), install="wheel", cached=True)
    wheel = replace(wheel, install_kind=InstallKind.INSTALLED)
    stages = [(s, Outcome.PASS, "") for s in (Stage.PACKAGING, Stage.IMAGE, Stage.START, Stage.SMOKE)]
    report = driver_report(wheel, stages)
    assert "✔ ready 41.0s · wheel" in render_summary(report)
    assert "ready (wheel) (installed by an earlier run)" in markdown.render(report)
    again = reduce(report, CellStarted("drv/arm64", "2026-11-21T23:30:00Z"))
    assert again.cells["drv/arm64"].packaging is None


def test_nothing_for_the_arch_at_the_packaging_stage_is_missing() -> None:
    nothing = replace(SOURCE, verdict=PackagingVerdict.MISSING, needs=(), detail="no aarch64 wheel and no sdist")
    report = driver_report(nothing, [(Stage.PACKAGING, Outcome.FAIL, "missing: mysqlclient 2.2.8: missing (...)")])
    assert report.cells["drv/arm64"].status is Status.MISSING


PIP_FAILED = """\
ecoready-label: nothing
      Exception: Can not find valid pkg-config name.
      [end of output]
  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error
× Getting requirements to build wheel did not run successfully.
│ exit code: 1
╰─> See above for output.
ecoready-absent: gcc
ecoready-absent: pkg-config
"""


def test_a_failed_install_says_what_the_image_lacks_and_the_installers_own_words() -> None:
    found = failure(PIP_FAILED, "")
    assert found.absent == ("gcc", "pkg-config") and found.mismatch == ""
    assert found.last == "Getting requirements to build wheel did not run successfully."
    wrong = failure("ecoready-mismatch: the image has no npm: an npm driver needs a Node.js runtime image\n", "")
    assert wrong.mismatch.startswith("the image has no npm")


def test_install_scripts_check_the_image_first_and_pin_the_exact_version() -> None:
    built = recipe(replace(SOURCE, arch="amd64"))
    assert built.script.index("command -v python3") < built.script.index("pip install")
    assert " mysqlclient==2.2.8 &&" in built.script and f"[ $rc -eq {MISMATCH} ]" in built.script
    assert "echo ecoready-absent: libmariadb-dev" in built.script
    npm = recipe(replace(SOURCE, registry="npm", package="mysql2", version="3.24.6", needs=()))
    assert " mysql2@3.24.6 &&" in npm.script and npm.run_env == {"NODE_PATH": "/opt/ecoready/node/node_modules"}
    java = recipe(replace(SOURCE, registry="maven", package="org.mariadb.jdbc:mariadb-java-client", version="3.5.1"))
    assert java.program[-2:] == ("--scheme", "mariadb") and java.name == "smoke-java"
    jar = "org/mariadb/jdbc/mariadb-java-client/3.5.1/mariadb-java-client-3.5.1.jar"
    assert jar in java.script and java.script.index("command -v javac") < java.script.index("curl -fsSL")
    go = recipe(replace(SOURCE, registry="go", package="github.com/go-sql-driver/mysql", version="v1.9.3"))
    assert "go get github.com/go-sql-driver/mysql@v1.9.3 &&" in go.script and go.env["GOTOOLCHAIN"] == "local"


def test_mariadb_connector_python_is_built_with_the_image_s_own_mariadb_config(tmp_path) -> None:
    """Its setup falls back to the PATH's mariadb_config only when running site.cfg's
    /usr/local/bin/mariadb_config raises FileNotFoundError, which Python 3.13's posix_spawn
    under qemu-user never raises (exit 127 instead): the recipe names the image's tool in
    MARIADB_CONFIG, as the package's own error message advises, before pip runs."""
    mariadb = recipe(replace(SOURCE, package="mariadb", version="1.1.14", arch="arm64"))
    assert " mariadb==1.1.14 &&" in mariadb.script and mariadb.program[-2:] == ("--driver", "mariadb")
    (step,) = [ln.removesuffix(" &&") for ln in mariadb.script.splitlines() if "MARIADB_CONFIG" in ln]
    at = mariadb.script.index(step)
    assert mariadb.script.index("-m venv") < at < mariadb.script.index("pip install")
    assert "MARIADB_CONFIG" not in recipe(replace(SOURCE, arch="arm64")).script  # mysqlclient: pkg-config
    tool = tmp_path / "bin" / "mariadb_config"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho 3.4.10\n")
    tool.chmod(0o755)

    def exported(path: str, **env: str) -> str:
        shown = f'{step} && echo "[${{MARIADB_CONFIG:-}}]"'
        done = subprocess.run(["/bin/sh", "-c", shown], env={"PATH": path, **env}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert exported(f"{tool.parent}:/usr/bin:/bin") == f"[{tool}]"
    # the image's own setting stands; without the tool nothing is set (the sdist says what is missing)
    assert exported(f"{tool.parent}:/usr/bin:/bin", MARIADB_CONFIG="/opt/cc/bin/mariadb_config") == (
        "[/opt/cc/bin/mariadb_config]"
    )
    assert exported(str(tmp_path / "empty")) == "[]"


def test_the_smoke_programs_come_from_the_package_not_the_image() -> None:
    """A runtime image needs nothing of ecoready's: the scripts go into the connector
    container at run time, Go's and Java's sources into the installer (compiled there),
    all from the installed package (ecoready.probes.smoke)."""
    python = recipe(replace(SOURCE, arch="amd64"))
    (path,) = python.run_files
    assert python.program[1] == path and python.run_files[path] == smoke.source("smoke-python")
    assert b"--driver" in python.run_files[path] and "smoke-python" not in python.script
    npm = recipe(replace(SOURCE, registry="npm", package="mysql2", version="3.24.6", needs=()))
    assert npm.program[:2] == ("node", *npm.run_files) and "smoke-nodejs" not in npm.script
    go = recipe(replace(SOURCE, registry="go", package="github.com/go-sql-driver/mysql", version="v1.9.3"))
    (source,) = go.install_files
    assert go.install_files[source] == smoke.source("smoke.go") and f"mv {source} " in go.script
    assert not go.run_files
    java = recipe(replace(SOURCE, registry="maven", package="com.mysql:mysql-connector-j", version="9.5.0"))
    (source,) = java.install_files
    assert java.install_files[source] == smoke.source("EcoreadySmoke.java") and "javac " in java.script
    assert all(smoke.source(name) for name in smoke.FILES.values())
    with pytest.raises(KeyError):
        smoke.source("../connector.py")


def test_an_installs_files_are_part_of_its_cache_key() -> None:
    script = "go build"
    plain = cache_key("img", "arm64", script)
    assert plain == cache_key("img", "arm64", script, {})
    one = cache_key("img", "arm64", script, {"/opt/ecoready/smoke/smoke.go": b"package main\n"})
    other = cache_key("img", "arm64", script, {"/opt/ecoready/smoke/smoke.go": b"package main // changed\n"})
    assert len({plain, one, other}) == 3


def test_an_install_records_facts_as_labels_of_the_cached_image() -> None:
    assert labels_printed("x\necoready-label: how=built from source\necoready-label: junk\n") == {
        "ecoready.install.how": "built from source"
    }


async def test_an_install_is_committed_once_and_found_with_its_facts_after() -> None:
    r = rig()
    r.host.execs_to(lambda container, argv: ok("ecoready-label: how=wheel\n") if argv[0] == "timeout" else None)
    script = "pip install mysqlclient==2.2.8"
    job = InstallJob("img:py", "k" * 32, "pypi:mysqlclient==2.2.8", script, {}, "installer", {}, 60)
    done = await install_once(r.host, job)
    again = await install_once(r.host, job)
    assert (done.cached, again.cached) == (False, True) and again.image_id == done.image_id != ""
    assert again.labels == done.labels == {"ecoready.install.how": "wheel"}
    (installer,) = r.host.started  # the second found the image: nothing installed again
    assert installer.id in r.host.removed


async def test_an_install_that_runs_out_of_time_says_the_step_it_was_in() -> None:
    r = rig()
    said = "ecoready-step: download\necoready-step: build\n# runtime/cgo\n"
    r.host.execs_to(lambda container, argv: failed(124, "", said) if argv[0] == "timeout" else None)
    job = InstallJob("img:go", "g" * 32, "go:gh-ost@v1.1.7", "go build", {}, "installer", {}, 840)
    with pytest.raises(DeadlineExceeded) as caught:
        await install_once(r.host, job)
    assert caught.value.detail == (
        "the install of go:gh-ost@v1.1.7 did not finish within 840 s: its build step ran out of time "
        "(last: # runtime/cgo)"
    )
    assert step_of("nothing said\n") == "" and r.host.started[0].id in r.host.removed


def test_the_drivers_verb_refuses_a_bad_pin_before_asking_anything(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drivers", "pypi:mysqlclient==**"]) == 2
    assert "is not a PEP 440 version specifier" in capsys.readouterr().err
    assert main(["drivers", "npm:mysql2", "--only", "x"]) == 2
    assert parse_driver("npm:mysql2").tag == "latest"


def test_debian_packages_are_a_driver_source_for_the_languages_without_a_reachable_registry() -> None:
    spec = parse_driver("deb:php8.4-cli, php8.4-mysql")
    assert (spec.registry, spec.package, spec.constraint) == ("deb", "php8.4-cli,php8.4-mysql", "")
    assert spec.debs == ("php8.4-cli", "php8.4-mysql") and "php" in spec.languages and spec.language == ""
    for bad, words in (
        ("deb:", "Debian packages separated by commas"),
        ("deb:php8.4-mysql=8.4.1", "no versions"),
        ("deb:PHP", "is not a Debian package name"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_driver(bad)
    ok_row = parse(HEAD + 'options = { language = "php", driver = "deb:php8.4-cli,php8.4-mysql" }\n', "m.toml")
    assert ok_row.component("py").options["driver"] == "deb:php8.4-cli,php8.4-mysql"
    assert problems('options = { language = "python", driver = "deb:python3-pymysql" }') == [
        "13:43: 'driver' 'deb:python3-pymysql': Debian's packages serve language php, perl, ruby, c, cpp"
    ]


async def test_debian_packages_are_not_asked_before_the_install() -> None:
    from ecoready.packages.client import PackageClient

    async with PackageClient() as client:
        found = await client.assess(parse_driver("deb:ruby,ruby-mysql2"), "arm64")
    assert found.verdict is PackagingVerdict.NOT_ASKED and found.version == ""
    assert packaging_text(found) == "not asked" and found.detail.startswith("Debian's index is not read")
    assert client.statuses() == ()  # no request


def test_a_debian_install_is_apt_then_the_smoke_program() -> None:
    deb = Packaging(
        "deb:php8.4-cli,php8.4-mysql", "deb", "php8.4-cli,php8.4-mysql", "", "amd64", PackagingVerdict.NOT_ASKED
    )
    php = recipe(deb, 60, "php")
    assert php.script.index("command -v apt-get") < php.script.index("apt-get install")
    assert "--no-install-recommends php8.4-cli php8.4-mysql" in php.script and "dpkg-query -W" in php.script
    # only the download is cut off and tried again when it stalls; dpkg's unpack is never
    # cut off (a second try would find its lock held): the install step has no `timeout`
    (download,) = [step for step in php.script.split("\n") if "--download-only" in step] or [php.script]
    assert "timeout -k 5 60 apt-get install -y -qq --download-only" in download
    assert "\napt-get install -y -qq --no-download --no-install-recommends php8.4-cli php8.4-mysql" in php.script
    (path,) = php.run_files
    assert php.program == ("php", path) and php.run_files[path] == smoke.source("smoke-php")
    c = recipe(replace(deb, package="gcc,libc6-dev,libmariadb-dev"), 60, "c")
    (source,) = c.install_files
    assert c.install_files[source] == smoke.source("smoke.c") and "mariadb_config --cflags --libs" in c.script
    assert c.program == ("/opt/ecoready/bin/smoke-c",) and not c.run_files
    with pytest.raises(ValueError):
        recipe(deb, 60, "python")


async def test_a_registry_name_the_installer_cannot_resolve_is_asked_only_without_a_proxy() -> None:
    script = "pip install PyMySQL==1.1.3"
    job = InstallJob("img:py", "p" * 32, "pypi:PyMySQL 1.1.3", script, {}, "installer", {}, 60)
    job = replace(job, reaches=("https://pypi.example.invalid",))
    r = rig()
    r.host.unresolvable.add("pypi.example.invalid")
    with pytest.raises(RegistryError, match="does not resolve in the engine's containers") as caught:
        await install_once(r.host, job)
    assert caught.value.registry == "pypi.example.invalid"
    # through a proxy the install never looks the name up itself: the installer says
    r = rig()
    r.host.unresolvable.add("pypi.example.invalid")
    r.host.execs_to(lambda container, argv: ok("ecoready-label: how=wheel\n") if argv[0] == "timeout" else None)
    done = await install_once(r.host, replace(job, env={"HTTPS_PROXY": "http://proxy.example:3128"}))
    assert done.image_id and not [argv for _, argv in r.host.execs if argv[0] == "getent"]
