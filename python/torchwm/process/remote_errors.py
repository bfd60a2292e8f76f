"""A sub-environment's exception, carried from its worker process to the caller.

The caller gets the exception's *original* class (an ``except ValueError`` written for gymnasium's
``AsyncVectorEnv`` still catches), with the env index and the remote traceback attached: as
attributes ``env_index``/``remote_traceback``, in a note, and as ``__cause__`` (the traceback). Only an exception
that cannot be pickled comes back as :class:`torchwm.errors.SubEnvError`.
"""

from __future__ import annotations

import contextlib
import pickle
import sys
import traceback
from typing import NamedTuple

from torchwm.errors import SubEnvError


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
    for name, value in (("env_index", remote.env_index), ("remote_traceback", remote.traceback)):
        with contextlib.suppress(AttributeError, TypeError):  # exceptions with __slots__ or read-only attributes
            setattr(error, name, value)
    if sys.version_info >= (3, 11):  # notes are Python 3.11+
        error.add_note(f"raised in sub-environment {remote.env_index} (in its worker process; remote traceback above)")
    error.__cause__ = RemoteTraceback(f"\nsub-environment {remote.env_index}, remote traceback:\n{remote.traceback}")
    return error
