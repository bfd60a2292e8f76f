"""torchwm's one exception tree, shared by the Rust core and both vectorizers.

Every class derives from :class:`TorchwmError` and, where torchwm replaces a class of ale_py or
gymnasium, also from the exception class that one raises, so a user's ``except`` clause written for
either still catches. Every class round-trips through :mod:`pickle` (errors cross process boundaries:
gymnasium's ``AsyncVectorEnv`` and multiprocessing pools pickle them).

The Rust core raises these classes too (``pyo3::import_exception!``), so this module must not import
``torchwm._core``.
"""

from __future__ import annotations

from typing import Any

from gymnasium import error as gym_error

__all__ = [
    "AleError",
    "AlreadyPendingCallError",
    "ClosedEnvironmentError",
    "EnvStateError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "NoAsyncCallError",
    "ResetNeeded",
    "SubEnvError",
    "TorchwmError",
    "WorkerCrashedError",
    "WorkerError",
]


class TorchwmError(Exception):
    """Base class of every exception torchwm raises itself."""


class InvalidArgumentError(TorchwmError, ValueError, gym_error.Error):
    """An argument outside what the call accepts (a setting, an action, a seed...).

    A ``ValueError`` (as torchwm always raised) and a ``gymnasium.error.Error`` (as ale_py raises for
    bad construction arguments).
    """


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of a type the call does not accept, where gymnasium raises ``TypeError`` for it (a
    ``timeout`` that is not a number: gymnasium's ``AsyncVectorEnv`` fails on its arithmetic).

    An :class:`InvalidArgumentError` (as torchwm raised before) and a ``TypeError`` (as gymnasium raises).
    """


class EnvStateError(TorchwmError, RuntimeError):
    """A call the environment's state does not allow (recv before send, use after fork...)."""


class ClosedEnvironmentError(EnvStateError, gym_error.ClosedEnvironmentError):
    """The environment is closed (gymnasium's ``ClosedEnvironmentError``)."""


class ResetNeeded(EnvStateError, gym_error.ResetNeeded):
    """A step that needs a reset first (gymnasium's ``ResetNeeded``, what a single env raises): after a
    sub-env refused an action outside its action space; the env stays usable."""


class _NamedCallError(EnvStateError):
    """Shared pickling of gymnasium's two ``(message, name)`` protocol errors."""

    name: str

    # `name` is optional: gymnasium's AsyncVectorEnv re-raises a sub-env's error as `type(value)`.
    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message, name)
        self.name = name

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.args[0], self.name), self.__dict__)


class AlreadyPendingCallError(_NamedCallError, gym_error.AlreadyPendingCallError):
    """An async call (``step_async``, ``send``, ...) is already pending (gymnasium's class)."""


class NoAsyncCallError(_NamedCallError, gym_error.NoAsyncCallError):
    """A wait (``step_wait``, ``recv``, ...) without a pending async call (gymnasium's class)."""


class AleError(TorchwmError, RuntimeError):
    """The emulator (ALE, C++) reported an error."""


class WorkerError(TorchwmError, RuntimeError):
    """A worker thread of ``AtariVectorEnv`` failed; the env must be reset or recreated."""


class WorkerCrashedError(TorchwmError, RuntimeError, EOFError):
    """A worker process died (killed, segfault, ``os._exit``, ``sys.exit`` in an env) or stopped answering.

    Also an ``EOFError``: what gymnasium's ``AsyncVectorEnv`` raises when a worker's pipe closes. When
    the worker reported why it ended (a ``SystemExit``), ``exit_code``, ``env_index`` and
    ``remote_traceback`` say so; otherwise they are None.
    """

    def __init__(
        self,
        message: str,
        exit_code: int | None = None,
        env_index: int | None = None,
        remote_traceback: str | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.env_index = env_index
        self.remote_traceback = remote_traceback

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            type(self),
            (self.args[0], self.exit_code, self.env_index, self.remote_traceback),
            self.__dict__,
        )


class SubEnvError(TorchwmError, RuntimeError):
    """A sub-environment raised in its worker process and its exception could not be re-raised as is.

    Carries the env index, the remote exception's class name and the remote traceback.
    """

    def __init__(self, env_index: int, exc_type: str, message: str, remote_traceback: str) -> None:
        self.env_index = env_index
        self.exc_type = exc_type
        self.message = message
        self.remote_traceback = remote_traceback
        super().__init__(
            f"sub-environment {env_index} raised {exc_type}: {message}\n\nRemote traceback:\n{remote_traceback}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.env_index, self.exc_type, self.message, self.remote_traceback), self.__dict__)
