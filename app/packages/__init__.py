"""Package registries (PyPI, npm, Maven Central, the Go module proxy) and the packaging
verdict of a driver row, before any container: `client.PackageClient`."""
