"""Makes gymnasium know torchwm's ids (``TorchWM/<Game>-v5``) in every process, without ``import torchwm``.

gymnasium 1.x has no plugin entry points: an id resolves only once the package that registers it was
imported. RLlib's env runners, Ray workers and ``gymnasium.make("TorchWM/Pong-v5")`` in a fresh
interpreter never import torchwm, so the plain id fails there ("Namespace TorchWM not found").

torchwm's wheel installs ``torchwm-gymnasium.pth``, which runs :func:`install` at interpreter start-up.
It imports nothing heavy: it only waits for gymnasium. When a process imports gymnasium, right after
gymnasium's module has run, torchwm's ids are registered (importing torchwm, ~0.15 s, paid only by
processes that import gymnasium). Set ``TORCHWM_NO_GYMNASIUM_HOOK=1`` to turn it off.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from typing import Any

DISABLE_VARIABLE = "TORCHWM_NO_GYMNASIUM_HOOK"


def register_torchwm_ids() -> None:
    """Registers ``TorchWM/<Game>-v5``; never raises (a broken torchwm must not break gymnasium)."""
    try:
        from torchwm.atari.registration import register_atari_envs

        register_atari_envs()
    except Exception as error:
        warnings.warn(
            f"torchwm could not register its gymnasium ids (TorchWM/<Game>-v5): {type(error).__name__}: {error}",
            RuntimeWarning,
            stacklevel=2,
        )


class GymnasiumImportWatcher(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` and ``ale_py`` as the normal path finder does, and registers torchwm's ids
    once gymnasium has loaded and no ale_py import is under way (torchwm's registration imports ale_py:
    when ``import ale_py`` is what imported gymnasium, it waits for ale_py to finish). Leaves
    ``sys.meta_path`` after registering."""

    WATCHED = ("gymnasium", "ale_py")

    def __init__(self) -> None:
        self.executing: set[str] = set()
        self.done = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name not in self.WATCHED or self.done:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            self.executing.add(name)
            try:
                execute(module)
            finally:
                self.executing.discard(name)
            self.module_loaded()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec

    def module_loaded(self) -> None:
        if self.done or "gymnasium" not in sys.modules or self.executing:
            return
        self.done = True
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        register_torchwm_ids()


def install() -> None:
    """Called from the ``.pth`` file at start-up: watches for gymnasium (or registers now if it is loaded)."""
    if os.environ.get(DISABLE_VARIABLE, "") not in ("", "0"):
        return
    if "gymnasium" in sys.modules:
        register_torchwm_ids()
    elif not any(isinstance(finder, GymnasiumImportWatcher) for finder in sys.meta_path):
        sys.meta_path.insert(0, GymnasiumImportWatcher())
