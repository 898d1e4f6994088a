"""ecoready: readiness of the MySQL ecosystem on arm64 and amd64, checked for real.

The source folder `app/` is installed as this package; imported by its folder name it
would be a second copy of every module (two error trees, two registries of kinds), so it
refuses.
"""

if __name__ != "ecoready":  # pragma: no cover - only when imported by the folder's name
    raise ImportError(f"import ecoready, not {__name__}: `pip install -e .` installs app/ as ecoready")

__version__ = "0.1.0"
