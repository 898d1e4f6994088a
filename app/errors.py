"""One error tree for the whole tool; the CLI maps each branch to an exit code.

EcoreadyError
 +-- ConfigError        bad matrix.toml                       -> exit 2
 +-- UsageError         arguments that do not fit together    -> exit 2
 +-- EnvironmentProblem docker unreachable, no emulator, ...  -> exit 3
 +-- ReportError        a report file cannot be read/written  -> exit 2
 +-- InfraError         tool/infrastructure failed in a cell  -> cell `error`
 |    +-- DockerUnavailable, PullStalled, RegistryError (registry.py)
 +-- DeadlineExceeded   a bounded call ran out of time        -> stage `timeout`
"""

from __future__ import annotations

from dataclasses import dataclass


class EcoreadyError(Exception):
    exit_code = 1


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


class EnvironmentProblem(EcoreadyError):
    """The machine cannot do what was asked; the message says how to fix it."""

    exit_code = 3


class ReportError(EcoreadyError):
    exit_code = 2


class InfraError(EcoreadyError):
    """The tool or its infrastructure failed during a cell: the cell ends as `error` and the
    component is not blamed (daemon gone, registry unreachable, pull stalled)."""

    exit_code = 3


class DockerUnavailable(InfraError):
    pass


class EngineError(InfraError):
    """The engine refused a call (e.g. a name clash, an image it cannot find)."""


class PullStalled(InfraError):
    pass


class DeadlineExceeded(EcoreadyError):
    """A bounded call ran out of time; the stage ends as `timeout`."""
