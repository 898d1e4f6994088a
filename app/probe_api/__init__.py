"""All a probe may use, and nothing more: probes import this package and no other part of
ecoready (tests/unit/test_layers.py holds them to it).

A probe asks its `ProbeContext` for containers, exec, SQL, readiness waits, named checks,
secrets and its backend; it raises `StageFailed`/`CheckFailed` for the component's faults
and lets infrastructure errors through, so the runner blames the right side.
"""

from ecoready.domain.errors import (
    BackendFailed,
    CheckFailed,
    DeadlineExceeded,
    EmulatorTooOld,
    InfraError,
    MatrixMismatch,
    RegistryError,
    Skip,
    SqlError,
    StageFailed,
)
from ecoready.domain.model import UNAME_MACHINE
from ecoready.domain.packaging import InstallKind, Packaging, PackagingVerdict
from ecoready.domain.parity import Facts
from ecoready.domain.specs import ContainerState, ExecResult
from ecoready.engine.aio import together
from ecoready.packages.http import base_url as registry_url
from ecoready.packages.needs import absent_script
from ecoready.probe_api.bench import BenchTarget, bench_detail, run_bench
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.facts import SERVER_STATEMENT, gathering, program_version, report_facts, server_facts
from ecoready.probe_api.handles import Container, Endpoint
from ecoready.probe_api.install_cache import (
    STEP_LINE,
    TRUST_JAVA,
    TRUST_PEM,
    Installed,
    install,
    installed_file,
    native_arch,
    report_packaging,
    step_of,
)
from ecoready.probe_api.licences import licence_refusal
from ecoready.probe_api.ports import port_listens
from ecoready.probe_api.probe import Probe
from ecoready.probe_api.refusals import matrix_mismatch
from ecoready.probe_api.secrets import Secret
from ecoready.probe_api.sql import Row, SqlTarget, option_file, parse_xml

__all__ = [
    "SERVER_STATEMENT",
    "STEP_LINE",
    "TRUST_JAVA",
    "TRUST_PEM",
    "UNAME_MACHINE",
    "BackendFailed",
    "BenchTarget",
    "CheckFailed",
    "Container",
    "ContainerState",
    "DeadlineExceeded",
    "EmulatorTooOld",
    "Endpoint",
    "ExecResult",
    "Facts",
    "InfraError",
    "InstallKind",
    "Installed",
    "MatrixMismatch",
    "Packaging",
    "PackagingVerdict",
    "Probe",
    "ProbeContext",
    "RegistryError",
    "Row",
    "Secret",
    "Skip",
    "SqlError",
    "SqlTarget",
    "StageFailed",
    "absent_script",
    "bench_detail",
    "gathering",
    "install",
    "installed_file",
    "licence_refusal",
    "matrix_mismatch",
    "native_arch",
    "option_file",
    "parse_xml",
    "port_listens",
    "program_version",
    "registry_url",
    "report_facts",
    "report_packaging",
    "run_bench",
    "server_facts",
    "step_of",
    "together",
]
