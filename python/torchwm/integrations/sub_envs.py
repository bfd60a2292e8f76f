"""How :class:`torchwm.sb3.SB3VecEnv` reaches the sub-environments behind a gymnasium vector env.

SB3 addresses sub-envs one by one (``get_attr(name, indices)``, ``env_method(..., indices=)``,
``env_is_wrapped``); gymnasium's vector API reaches all of them at once, and torchwm's native
``AtariVectorEnv`` has no per-env Python objects at all. One class per case:

- :class:`ListedEnvs`: the env objects are in this process (``SyncVectorEnv.envs``): exactly what
  SB3's ``DummyVecEnv`` does.
- :class:`WorkerEnvs`: torchwm's ``TorchVectorizedEnv``, whose workers run SB3's per-env calls as
  SB3's ``SubprocVecEnv`` workers do (``sb3_call``): its semantics, call for call.
- :class:`RemoteEnvs`: only the vector calls ``get_attr``/``set_attr``/``call`` (``AsyncVectorEnv``,
  ``TorchVectorizedEnv``): reads of a subset read all and pick; writes to a subset write back the
  values read for the others; a method can only be called on every env (a subset would run it on the
  others too); wrappers are recognised by class name (the env objects never leave their process). For
  gymnasium's ``AsyncVectorEnv`` and other vector envs of that API.
- :class:`NoSubEnvs`: the vector env is the only object (``AtariVectorEnv``): its attributes are every
  env's; it has no gymnasium wrappers and no per-env methods.
"""

from __future__ import annotations

import re
from typing import Any

from torchwm.errors import InvalidArgumentError
from torchwm.process.sb3_calls import is_wrapped

__all__ = ["ListedEnvs", "NoSubEnvs", "RemoteEnvs", "WorkerEnvs", "sub_env_access"]


class ListedEnvs:
    """Sub-envs that are Python objects here: ``DummyVecEnv``'s semantics, call for call."""

    indexed_as: type = list  # DummyVecEnv indexes its list of envs: a bad index is a list's IndexError

    def __init__(self, envs: list[Any]) -> None:
        self.envs = envs

    def has_attr(self, name: str) -> bool:
        return all(env.has_wrapper_attr(name) for env in self.envs)

    def get_attr(self, name: str, indices: list[int]) -> list[Any]:
        return [self.envs[i].get_wrapper_attr(name) for i in indices]

    def set_attr(self, name: str, value: Any, indices: list[int]) -> None:
        for i in indices:
            setattr(self.envs[i], name, value)

    def env_method(self, name: str, args: tuple, kwargs: dict[str, Any], indices: list[int]) -> list[Any]:
        return [self.envs[i].get_wrapper_attr(name)(*args, **kwargs) for i in indices]

    def is_wrapped(self, wrapper_class: type, indices: list[int]) -> list[bool]:
        return [is_wrapped(self.envs[i], wrapper_class) for i in indices]

    def images(self) -> list[Any]:
        return [env.render() for env in self.envs]


class WorkerEnvs:
    """Sub-envs in ``TorchVectorizedEnv``'s workers: ``SubprocVecEnv``'s semantics, call for call."""

    indexed_as: type = tuple  # SubprocVecEnv indexes its tuple of pipes: a bad index is a tuple's IndexError

    def __init__(self, venv: Any) -> None:
        self.venv = venv

    def has_attr(self, name: str) -> bool:
        return all(self.venv.sb3_call("has_attr", name, range(self.venv.num_envs)))

    def get_attr(self, name: str, indices: list[int]) -> list[Any]:
        return self.venv.sb3_call("get_attr", name, indices)

    def set_attr(self, name: str, value: Any, indices: list[int]) -> None:
        self.venv.sb3_call("set_attr", name, indices, value)

    def env_method(self, name: str, args: tuple, kwargs: dict[str, Any], indices: list[int]) -> list[Any]:
        return self.venv.sb3_call("env_method", name, indices, *args, **kwargs)

    def is_wrapped(self, wrapper_class: type, indices: list[int]) -> list[bool]:
        return self.venv.sb3_call("is_wrapped", wrapper_class, indices)

    def images(self) -> list[Any]:
        return list(self.venv.call("render"))


class RemoteEnvs:
    """Sub-envs reached through the vector calls ``get_attr``/``set_attr``/``call`` only."""

    indexed_as: type = tuple  # SubprocVecEnv indexes its tuple of pipes: a bad index is a tuple's IndexError

    def __init__(self, venv: Any) -> None:
        self.venv = venv

    def has_attr(self, name: str) -> bool:
        # Asked without raising in the workers: gymnasium's AsyncVectorEnv shuts down on a worker's error.
        return all(self.venv.call("has_wrapper_attr", name))

    def get_attr(self, name: str, indices: list[int]) -> list[Any]:
        values = self.venv.get_attr(name)
        return [values[i] for i in indices]

    def set_attr(self, name: str, value: Any, indices: list[int]) -> None:
        count = self.venv.num_envs
        chosen = set(indices)
        current = list(self.venv.get_attr(name)) if len(chosen) < count else [None] * count
        self.venv.set_attr(name, [value if i in chosen else current[i] for i in range(count)])

    def env_method(self, name: str, args: tuple, kwargs: dict[str, Any], indices: list[int]) -> list[Any]:
        if sorted(set(indices)) != list(range(self.venv.num_envs)):
            raise InvalidArgumentError(
                f"{type(self.venv).__name__} calls a method on every sub-environment at once; env_method needs "
                f"indices=None (or all of 0..{self.venv.num_envs - 1}), got {indices}"
            )
        results = self.venv.call(name, *args, **kwargs)
        return [results[i] for i in indices]

    def is_wrapped(self, wrapper_class: type, indices: list[int]) -> list[bool]:
        # A gymnasium Wrapper prints as "<WrapperName<InnerName...>>": its chain of class names.
        chains = self.venv.call("__str__")
        return [wrapper_class.__name__ in re.findall(r"<(\w+)", chains[i])[:-1] for i in indices]

    def images(self) -> list[Any]:
        return list(self.venv.call("render"))


class NoSubEnvs:
    """A vector env without per-env objects: its own attributes stand for every env's."""

    indexed_as: type = tuple  # SubprocVecEnv indexes its tuple of pipes: a bad index is a tuple's IndexError

    def __init__(self, venv: Any) -> None:
        self.venv = venv

    def has_attr(self, name: str) -> bool:
        return hasattr(self.venv, name)

    def get_attr(self, name: str, indices: list[int]) -> list[Any]:
        value = getattr(self.venv, name)
        return [value for _ in indices]

    def set_attr(self, name: str, value: Any, indices: list[int]) -> None:
        raise AttributeError(f"{type(self.venv).__name__} has no per-environment objects: cannot set {name!r}")

    def env_method(self, name: str, args: tuple, kwargs: dict[str, Any], indices: list[int]) -> list[Any]:
        raise AttributeError(f"{type(self.venv).__name__} has no per-environment objects: cannot call {name!r}")

    def is_wrapped(self, wrapper_class: type, indices: list[int]) -> list[bool]:
        return [False for _ in indices]

    def images(self) -> list[Any]:
        return [None] * self.venv.num_envs


def sub_env_access(venv: Any) -> ListedEnvs | WorkerEnvs | RemoteEnvs | NoSubEnvs:
    """The access class for ``venv`` (see the module docstring)."""
    envs = getattr(venv, "envs", None)
    if isinstance(envs, list) and len(envs) == venv.num_envs:
        return ListedEnvs(envs)
    if callable(getattr(venv, "sb3_call", None)):
        return WorkerEnvs(venv)
    if all(callable(getattr(venv, name, None)) for name in ("get_attr", "set_attr", "call")):
        return RemoteEnvs(venv)
    return NoSubEnvs(venv)
