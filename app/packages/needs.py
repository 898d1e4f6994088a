"""What a source build needs, named as Debian packages (the lab's images are Debian's), and
how to tell inside an image whether it is there: after a failed install the probe says
which of them the image lacks, not only the installer's last line."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# need -> a POSIX shell test that succeeds when the image has it
NEEDS: Mapping[str, str] = {
    "gcc": "command -v cc || command -v gcc",  # a C compiler
    "g++": "command -v c++ || command -v g++",  # a C++ compiler
    "make": "command -v make",
    "python3": "command -v python3",  # node-gyp runs it
    "python3-dev": 'test -e "$(python3 -c \'import sysconfig; print(sysconfig.get_path("include"))\')/Python.h"',
    "pkg-config": "command -v pkg-config",
    # the MySQL/MariaDB client library's headers
    "libmariadb-dev": "test -e /usr/include/mariadb/mysql.h || test -e /usr/include/mysql/mysql.h",
}

NODE_GYP = ("python3", "make", "g++")  # what node-gyp needs to compile an addon
PYTHON_EXTENSION = ("gcc", "python3-dev")  # a C extension of Python
MYSQL_CLIENT = ("pkg-config", "libmariadb-dev")  # a build that links the MySQL client library


def absent_script(needs: Iterable[str], python: str = "python3") -> str:
    """A shell script printing, one per line, the needs the image lacks (`python`: the
    interpreter whose headers count, e.g. a virtual environment's)."""
    lines = []
    for need in needs:
        test = NEEDS[need]
        lines.append(f"{{ {test.replace('python3 -c', f'{python} -c')} ; }} >/dev/null 2>&1 || echo {need}")
    return "\n".join(lines) or "true"
