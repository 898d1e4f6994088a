"""Probes: one module per probe kind (named in `ecoready.matrix.kinds`), each driving a
ProbeContext from `ecoready.probe_api` and nothing else; their shared helpers in `shared/`."""

if __name__ != "ecoready.probes":  # pragma: no cover - only when imported by the folder's name
    raise ImportError(f"import ecoready.probes, not {__name__}: `pip install -e .` installs probes/ as ecoready.probes")
