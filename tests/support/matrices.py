"""Small matrices the tests write, each the lab's images in one shape."""

from __future__ import annotations

LAB_SERVER = """
[[components]]
id = "mariadb-10.11"
name = "MariaDB 10.11 (Debian 12)"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""
