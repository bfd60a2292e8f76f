"""The machine a benchmark runs on: the cores it may use (what every suite scales to and reports), and
the description each report's JSON starts with."""

from __future__ import annotations

import platform
from typing import Any

from torchwm import _platform

__all__ = ["cores", "machine"]


def cores() -> int:
    """The cores this process may run on (its affinity where the OS has one)."""
    return _platform.usable_cores()


def machine() -> dict[str, Any]:
    """Python's version, the platform and the cores: the ``machine`` of every report."""
    return {"python": platform.python_version(), "platform": platform.platform(), "cores": cores()}
