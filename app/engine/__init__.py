"""The docker engine: the SDK's clients, containers, images, platforms.

The docker SDK imports its ssh:// transport, and with it paramiko and cryptography, when
it is imported itself: ~0.15 s of CPU at every ecoready start, and most runs never use an
ssh:// host. So before any module of this package imports docker, paramiko is put in
`sys.modules` as a stand-in that imports the real module at its first attribute use.
(The stdlib's LazyLoader cannot do it on Python 3.11: `import paramiko` reads the
module's `__spec__`, which loads it.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any


class _LoadedOnFirstUse(types.ModuleType):
    def __getattr__(self, name: str) -> Any:  # only called for what the stand-in lacks
        del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)  # now in sys.modules in its place
        self.__dict__.update(real.__dict__)  # for those who hold the stand-in
        return getattr(real, name)


def _paramiko_on_first_use() -> None:
    if "paramiko" in sys.modules:
        return
    spec = importlib.util.find_spec("paramiko")
    if spec is None:
        return  # not installed: docker's ssh transport says so when an ssh:// host is used
    stand_in = _LoadedOnFirstUse("paramiko")
    stand_in.__spec__ = spec
    sys.modules["paramiko"] = stand_in


_paramiko_on_first_use()
