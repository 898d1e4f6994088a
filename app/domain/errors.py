"""Every exception ecoready raises on purpose, in one tree. The CLI maps a branch to an exit
code; the runner maps it to a stage outcome, and so to who is blamed for a cell.

EcoreadyError                                                             [cause: tool]
 +-- ConfigError          bad matrix.toml (file:line:col each)          -> exit 2
 +-- UsageError           arguments that do not fit together              -> exit 2
 +-- ReportError          a report file cannot be read or written         -> exit 2
 +-- DataError            plain data that does not fit the model (where, what)
 +-- EnvironmentProblem   docker unreachable, no emulator, no lab, ...    -> exit 3
 +-- InfraError           the tool or its infrastructure failed a cell    -> cell `error`, exit 3
 |    +-- DockerUnavailable   the engine stopped answering                 [engine-unreachable]
 |    +-- EngineError         the engine refused a call                    [engine-refused]
 |    +-- PullStalled         a pull made no progress                      [pull-stalled]
 |    +-- RegistryError       a registry could not be asked                [registry]
 |    |    +-- LoginRequired    it wants a login none is configured for   -> `locked` [needs-login]
 |    |    +-- MirrorGap        a registry mirror lacks an image             [mirror-gap]
 |    |         +-- MirrorBehind   its copy lacks an arch the upstream has  [mirror-behind]
 |    |         +-- MirrorDown     it could not be asked                    [mirror-down]
 |    +-- CredentialError     registry credentials cannot be read          [credentials]
 |    +-- BackendFailed       the cell's backend server did not come up    [backend]
 |    +-- EmulatorProblem     the emulator cannot run the image at all     [emulator]
 |    +-- MatrixMismatch      the matrix asks an image for what it lacks   [matrix]
 +-- DeadlineExceeded     a bounded call ran out of time     -> stage `timeout` [over-budget]
 +-- ImageUnavailable     not published for the arch, not there, or mislabelled
 |                        (an image, or a driver row's package)  -> cell `missing` / `broken`
 |                                    [not-published, no-such-image, mislabelled-image]
 +-- SurveyFailed         the platform survey container failed            -> platform `not asked`
 +-- NotAProgram          a file the audit read is no ELF program it can parse -> an audit finding
 +-- SysbenchOutputError  sysbench printed no final statistics            -> bench check failed
 +-- ComponentFailure     the component's own fault        [the stage decides: COMPONENT_FAILURE]
 |    +-- StageFailed         a stage failed (start -> `broken`, smoke -> `partial`)
 |    |    +-- EmulatorTooOld     qemu lacks the CPU level glibc wants (retried)
 |    |    +-- MislabelledBinary  the image's main program is of another arch [mislabelled-binary]
 |    +-- CheckFailed         one named check failed
 |    +-- SqlError            the server or client refused a statement
 +-- LicenceRequired      the image asks for a licence key or a EULA's acceptance
 |                                                     -> cell `locked` [needs-licence]
 +-- Skip                 the stage does not apply, or could not be done  -> stage `skip`
 |                                                                        [not-applicable]
 |    +-- TwinFailed      an emulated start cut short: its native twin failed it the same way
 |                                                          -> cell `skipped` [twin-failed]

Never blame the component for an InfraError, nor the tool for a ComponentFailure.

Each class names the `Cause` (domain/blame.py) it leads to when it ends a stage; an
instance may name its own, and what is blamed (`subject`), a `fix` and, for a backend, the
cause `behind` it. `detail` is the bare human line; `str()` is it as the views say it
(`blame.said`: `missing: …`, `docker.io: unreachable …`). A component's failure that names
no cause is blamed by the stage it ended (`blame.COMPONENT_FAILURE`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.domain.blame import COMPONENT_FAILURE, Blame, Cause, Stage, said


class EcoreadyError(Exception):
    exit_code = 1
    cause: Cause | None = Cause.TOOL  # None: the stage it ended decides (a component's failure)

    def __init__(
        self,
        detail: str = "",
        *,
        cause: Cause | None = None,
        subject: str = "",
        fix: str = "",
        behind: Cause | None = None,
    ) -> None:
        if cause is not None:
            self.cause = cause
        self.detail = detail
        self.subject = subject
        self.fix = fix
        self.behind = behind
        super().__init__(said(Blame(self.cause, subject) if self.cause else None, detail))

    def blame(self, stage: Stage) -> Blame:
        """Who is blamed when this ends `stage`."""
        return Blame(self.cause or COMPONENT_FAILURE[stage], self.subject, self.fix, self.behind)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class ConfigError(EcoreadyError):
    exit_code = 2

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UsageError(EcoreadyError):
    """Command-line arguments argparse cannot check alone (e.g. two reports on stdout)."""

    exit_code = 2


class ReportError(EcoreadyError):
    exit_code = 2


class DataError(EcoreadyError):
    """Plain data (a saved report, ...) that does not fit the model: where and what."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where or "top level"
        self.message = message
        super().__init__(f"{self.where}: {message}")


class EnvironmentProblem(EcoreadyError):
    """The machine cannot do what was asked; the message says how to fix it."""

    exit_code = 3


# -- infrastructure: never the component's fault ---------------------------------------
class InfraError(EcoreadyError):
    """The tool or its infrastructure failed during a cell: the cell ends as `error` and the
    component is not blamed (daemon gone, registry unreachable, pull stalled)."""

    exit_code = 3


class DockerUnavailable(InfraError):
    cause = Cause.ENGINE_UNREACHABLE


class EngineError(InfraError):
    """The engine refused a call (e.g. a name clash, an image it cannot find)."""

    cause = Cause.ENGINE_REFUSED


class PullStalled(InfraError):
    cause = Cause.PULL_STALLED


class RegistryError(InfraError):
    """The registry could not be asked (network, auth, rate limit): the cell is `error`."""

    cause = Cause.REGISTRY

    def __init__(self, registry: str, reason: str, *, mirror: str = "", fallback: Cause | None = None) -> None:
        super().__init__(reason, subject=registry)
        self.registry = registry
        self.reason = reason
        self.mirror = mirror  # the mirror asked first (host[/prefix]); "" none
        self.fallback = fallback  # the mirror's trouble that had `registry` (its upstream) asked


class LoginRequired(RegistryError):
    """The registry refused an anonymous pull (401, or a token refused) and no login is
    configured for it: neither the tool's trouble nor the component's, the cell is `locked`
    with what to provide (a login for `registry`). Docker Hub answers a repository that
    does not exist the same way, so the remedy names both."""

    cause = Cause.NEEDS_LOGIN


class LicenceRequired(EcoreadyError):
    """The image stopped at start asking for what only the user can give: a licence key or
    a EULA's acceptance (the phrase its log said, and where that phrase is documented, in
    `probe_api/licences.py`): the cell is `locked`, `fix` says what to provide."""

    cause = Cause.NEEDS_LICENCE


class MirrorGap(RegistryError):
    """A registry mirror's trouble, never the component's `missing` nor its upstream's
    (`registry` and `mirror` are the mirror, `host[/prefix]`): here, it does not hold an
    image its upstream registry is asked for. `[registry] fallback = true` asks the
    upstream registry instead."""

    cause = Cause.MIRROR_GAP

    def __init__(self, mirror: str, reason: str) -> None:
        super().__init__(mirror, reason, mirror=mirror)


class MirrorBehind(MirrorGap):
    """The mirror's copy of an image lacks an arch its upstream publishes (its index is
    behind the upstream's), or that the upstream could not be asked about: not the
    component's `missing`, the detail says which."""

    cause = Cause.MIRROR_BEHIND


class MirrorDown(MirrorGap):
    """The mirror could not be asked (unreachable, hanging, refusing our login, answering
    what cannot be used); its own words kept in the reason."""

    cause = Cause.MIRROR_DOWN


class CredentialError(InfraError):
    """The configured credentials cannot be read (helper missing or failing, bad config)."""

    cause = Cause.CREDENTIALS


class BackendFailed(InfraError):
    """The backend server of a cell did not come up: not the fault of the component under
    test, so the cell ends as `error` naming the backend (`subject`; `behind`: why)."""

    cause = Cause.BACKEND


class EmulatorProblem(InfraError):
    """The emulator cannot run the image even with QEMU_CPU=max: infrastructure, so the
    cell ends as `error` and the component is not blamed."""

    cause = Cause.EMULATOR


class MatrixMismatch(InfraError):
    """The matrix asks an image for something it does not have (a program, a path, a
    driver version): a configuration error of the matrix, named in the detail; the cell is
    `error`, never the component's fault."""

    cause = Cause.MATRIX


class DeadlineExceeded(EcoreadyError):
    """A bounded call ran out of time; the stage ends as `timeout`."""

    cause = Cause.OVER_BUDGET


class ImageUnavailable(EcoreadyError):
    """Not published for the arch (an image, or a driver row's package with nothing
    installable for it), not there at all, or not what it claims (mislabelled): the cause
    says which."""

    cause = Cause.NOT_PUBLISHED


class SurveyFailed(EcoreadyError):
    """The platform survey container could not run or finish."""


class NotAProgram(EcoreadyError):
    """A file the build audit read is not an ELF program it can parse (a script, a truncated
    or malformed file): said as a finding of the audit, never a failure of the cell."""


class SysbenchOutputError(EcoreadyError):
    """sysbench printed no final statistics (it failed, or this is not sysbench output)."""


# -- the component's own fault ---------------------------------------------------------
class ComponentFailure(EcoreadyError):
    """What the component under test did wrong; never raised for the tool's own trouble."""

    cause: Cause | None = None  # the stage it ends decides: start -> does not start, smoke -> a check failed


class StageFailed(ComponentFailure):
    """The component failed the stage (its fault): start -> broken, smoke -> partial."""


class EmulatorTooOld(StageFailed):
    """The emulated CPU cannot run the image: `Fatal glibc error: CPU does not support
    x86-64-v2` (an old qemu-user defaults to a CPU model without the features Oracle Linux 9
    / UBI 9 binaries need), or an illegal instruction under the narrower CPU model ecoready
    emulates for an arch (engine/platform.EMULATED_CPU). The runner retries the start once
    with QEMU_CPU=max. `problem` completes "the <arch> ..."; `fix` says what the user can do."""

    def __init__(self, level: str, detail: str = "", *, problem: str = "", fix: str = "") -> None:
        self.level = level
        self.problem = problem or f"emulator is too old: CPU does not support {level}"
        super().__init__(detail or f"the {self.problem}", fix=fix)


class MislabelledBinary(StageFailed):
    """The build audit found a main program built for another arch than the image's index
    and config say (an amd64 `mysqld` in an arm64 image): the cell is `broken`."""

    cause = Cause.MISLABELLED_BINARY


class CheckFailed(ComponentFailure):
    """One named check failed; the detail says why."""


class SqlError(ComponentFailure):
    """The server (or the client) refused a statement: a component-side failure."""

    def __init__(self, message: str, *, code: int | None = None, sqlstate: str = "", statement: str = "") -> None:
        self.code = code
        self.sqlstate = sqlstate
        self.statement = statement
        self.message = message
        super().__init__(f"{message} (statement: {statement[:200]})" if statement else message)


class Skip(EcoreadyError):
    """The stage does not apply (e.g. no benchmark for this kind), or an optional one could
    not be done and the cell goes on without it (the build audit when the engine would not
    hand over the programs in time)."""

    cause = Cause.NOT_APPLICABLE


class TwinFailed(Skip):
    """An emulated cell's start cut short because the native cell of the same image failed
    at start in a way that is no arch's (it timed out, or did not start): the emulated one
    would fail the same way, only slower (app/run/twins.py). `subject` is the native cell."""

    cause = Cause.TWIN_FAILED
