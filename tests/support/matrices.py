"""Small matrices the tests write, each the lab's images in one shape; and the lab
matrix's grid as every run of it must end (test_lab_matrix.py, bench/cold_demo.py)."""

from __future__ import annotations

# The lab matrix's deliberate availability gaps (app/lab/gaps.py) and its licensed row;
# every other cell must be ready.
EXPECTED = {
    "gap-amd64-only/arm64": "missing",
    "gap-arm64-only/amd64": "missing",
    "gap-mislabelled/arm64": "broken",
    "gap-binary-mislabelled/arm64": "broken",  # caught by the build audit
    # an image that stops asking for a licence key: what to provide, never broken (issue 58)
    "licensed/amd64": "locked",
    "licensed/arm64": "locked",
}


LAB_SERVER = """
[[components]]
id = "mariadb-10.11"
name = "MariaDB 10.11 (Debian 12)"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""
