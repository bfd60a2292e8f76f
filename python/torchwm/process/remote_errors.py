"""A sub-environment's exception, carried from its worker process to the caller.

The caller gets the exception's *original* class (an ``except ValueError`` written for gymnasium's
``AsyncVectorEnv`` still catches), with the env index and the remote traceback attached: as
attributes ``env_index``/``remote_traceback``, in a note, and as ``__cause__`` (the traceback). Only an exception
that cannot be pickled comes back as :class:`torchwm.errors.SubEnvError`, and a ``BaseException`` that
is not an ``Exception`` (``SystemExit``: the env called ``sys.exit``) as
:class:`torchwm.errors.WorkerCrashedError` with the exit code: it must never end the caller's process.
Before a ``reset``/``step``/``call``/``set_attr`` error is raised, :func:`log_like_gymnasium` reports it
through gymnasium's logger, as ``AsyncVectorEnv`` does: every failing env's, then the last one is raised.
"""

from __future__ import annotations

import contextlib
import pickle
import sys
import traceback
from typing import NamedTuple

from gymnasium import logger

from torchwm.errors import SubEnvError, WorkerCrashedError


class RemoteError(NamedTuple):
    """What a worker sends about an exception (plain fields: always picklable)."""

    env_index: int
    exc_type: str
    message: str
    traceback: str
    pickled: bytes | None  # the exception itself, when it survives a pickle round trip


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (the ``__cause__`` of the re-raised one)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def capture(env_index: int, error: BaseException) -> RemoteError:
    """In the worker, inside the ``except`` block that caught ``error``."""
    pickled: bytes | None
    try:
        data = pickle.dumps(error)
        pickle.loads(data)
        pickled = data
    except Exception:
        pickled = None
    return RemoteError(env_index, type(error).__name__, str(error), traceback.format_exc(), pickled)


def rebuild(remote: RemoteError) -> BaseException:
    """In the parent: the exception to raise for ``remote``."""
    error: BaseException | None = None
    pickled = remote.pickled
    if pickled is not None:
        try:
            error = pickle.loads(pickled)
        except Exception:
            error = None
    if not isinstance(error, BaseException):
        return SubEnvError(remote.env_index, remote.exc_type, remote.message, remote.traceback)
    if not isinstance(error, Exception):
        return _ended_worker(remote, error)
    for name, value in (("env_index", remote.env_index), ("remote_traceback", remote.traceback)):
        with contextlib.suppress(AttributeError, TypeError):  # exceptions with __slots__ or read-only attributes
            setattr(error, name, value)
    if sys.version_info >= (3, 11):  # notes are Python 3.11+
        error.add_note(f"raised in sub-environment {remote.env_index} (in its worker process; remote traceback above)")
    error.__cause__ = RemoteTraceback(f"\nsub-environment {remote.env_index}, remote traceback:\n{remote.traceback}")
    return error


def _ended_worker(remote: RemoteError, error: BaseException) -> WorkerCrashedError:
    """A ``SystemExit`` (or another non-``Exception``) that ended a worker, as an ``Exception``."""
    code = getattr(error, "code", None)
    exit_code = 0 if code is None else code if isinstance(code, int) else 1  # as the interpreter exits
    return WorkerCrashedError(
        f"sub-environment {remote.env_index} raised {remote.exc_type}({remote.message!r}) and its worker "
        f"process ended (exit code {exit_code}); the other workers were shut down\n\n"
        f"Remote traceback:\n{remote.traceback}",
        exit_code,
        remote.env_index,
        remote.traceback,
    )


def log_like_gymnasium(remotes: list[RemoteError]) -> None:
    """gymnasium's ``AsyncVectorEnv`` reports sub-env errors through its logger (as warnings, which logs
    and warning filters see) before raising the last: the same messages, one pair per error (``remotes``
    in env order: gymnasium's arrive in the order its workers answer, env order when they answer in turn)."""
    for remote in remotes:
        logger.error(f"Received the following error from Worker-{remote.env_index} - Shutting it down")
        logger.error(f"{remote.traceback}")
    logger.error("Raising the last exception back to the main process.")
