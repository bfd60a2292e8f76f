"""A backend that cannot run here, and why: the reports show the reason in its place. PufferLib, a peer
in the process and multi-agent suites alike, is optional and often not importable."""

from __future__ import annotations

import importlib

__all__ = ["Unavailable", "pufferlib_missing"]


class Unavailable(RuntimeError):
    """This backend (or this mode of it) cannot run here; the message says why."""


def pufferlib_missing() -> str | None:
    """None where ``pufferlib.vector`` imports, else why not (its import pulls in torch: seconds)."""
    try:
        importlib.import_module("pufferlib.vector")
        importlib.import_module("pufferlib.emulation")
    except Exception as error:  # an ImportError, or a broken install of its dependencies
        return f"pufferlib not importable here ({type(error).__name__}: {error}); see scripts/bench_env.sh"
    return None
