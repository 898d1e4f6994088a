"""ecoready: readiness of the MySQL ecosystem on arm64 and amd64, checked for real."""

__version__ = "0.1.0"
