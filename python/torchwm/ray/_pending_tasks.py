"""``RayVectorEnv``'s side of gymnasium's async protocol over Ray tasks: the call pending (its
``AsyncState``, its command and the task of each worker), the replies gathered as they come in, a dead
actor or node raised as ``WorkerCrashedError`` and a sub-env's exception as its own class.

A mixin of ``RayVectorEnv`` alone (its actors, counts and ``close``).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any, NoReturn

from gymnasium.vector.async_vector_env import AsyncState

from torchwm._vector_args import already_pending_message, async_state, parse_timeout, timeout_message
from torchwm.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    SubEnvError,
    WorkerCrashedError,
)
from torchwm.process.remote_errors import RemoteTraceback
from torchwm.ray._errors import TaskFailure, first_line, summary

__all__ = ["WAIT_SLICE_S", "PendingTasksMixin"]

# While waiting, the longest single blocking wait: keeps Ctrl-C responsive.
WAIT_SLICE_S = 0.25


class PendingTasksMixin:
    """``_submit``, ``_check_open``/``_check_can_send``/``_check_waiting``, ``_run``/``_gather``."""

    closed: bool
    envs_per_worker: int
    worker_nodes: tuple[Any, ...]
    close: Any
    _ray: Any
    _state: AsyncState
    _command: str | None
    _pending: list[Any]
    _replies: dict[int, Any]

    def _submit(self, command: str, refs: list[Any]) -> None:
        self._pending, self._command, self._replies = refs, command, {}
        self._state = async_state(command)

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedEnvironmentError(f"Trying to operate on `{type(self).__name__}`, after a call to `close()`.")

    def _check_can_send(self, name: str) -> None:
        self._check_open()
        if self._command is not None:
            raise AlreadyPendingCallError(already_pending_message(name, self._state), self._state.value)

    def _check_waiting(self, command: str, name: str) -> None:
        self._check_open()
        if self._state is not async_state(command):
            raise NoAsyncCallError(f"Calling `{name}` without any prior call to `{command}_async`.", command)

    def _run(self, command: str, refs: list[Any], timeout: float | None) -> list[Any]:
        self._submit(command, refs)
        return self._gather(timeout)

    def _gather(self, timeout: float | None) -> list[Any]:
        """Every worker's reply to the pending call. A dead worker raises ``WorkerCrashedError`` as soon
        as its answer is in (all actors are killed); ``mp.TimeoutError`` after ``timeout`` s leaves the
        call pending (already received replies are kept). The replies in are always looked at first, so
        ``timeout=0`` takes them as gymnasium's ``AsyncVectorEnv`` does (it polls with ``max(left, 0)``)."""
        timeout = parse_timeout(timeout)
        ray = self._ray
        refs = self._pending
        index = {ref: w for w, ref in enumerate(refs)}
        waiting = [ref for ref in refs if index[ref] not in self._replies]
        deadline = None if timeout is None else time.monotonic() + timeout
        while waiting:
            left = WAIT_SLICE_S if deadline is None else min(WAIT_SLICE_S, max(0.0, deadline - time.monotonic()))
            ready, waiting = ray.wait(waiting, num_returns=len(waiting), timeout=left)
            for ref in ready:
                self._receive(index[ref], ref)
            if waiting and deadline is not None and time.monotonic() >= deadline:
                raise mp.TimeoutError(timeout_message(self._command or "", timeout, len(waiting)))
        command, self._command, self._pending, self._state = self._command or "", None, [], AsyncState.DEFAULT
        replies, self._replies = self._replies, {}
        errors = [(w, reply) for w, reply in sorted(replies.items()) if isinstance(reply, TaskFailure)]
        if errors:
            w, failure = errors[0]
            self._raise_remote(command, w, failure.error)
        return [replies[w] for w in range(len(refs))]

    def _receive(self, w: int, ref: Any) -> None:
        """Stores worker ``w``'s answer; its death (actor or node lost) raises ``WorkerCrashedError``."""
        ray = self._ray
        try:
            self._replies[w] = ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            self._replies[w] = TaskFailure(error)  # the envs raised: reported once every worker has answered
        except ray.exceptions.RayError as error:
            self._crashed(w, error)

    def _crashed(self, w: int, error: BaseException) -> NoReturn:
        first = w * self.envs_per_worker
        node = self.worker_nodes[w] if hasattr(self, "worker_nodes") else "unknown"
        self.close()
        raise WorkerCrashedError(
            f"worker {w} (sub-environments {first}..{first + self.envs_per_worker - 1}, Ray node {node}) died: "
            f"{type(error).__name__}: {summary(error)}; the other workers were shut down"
        ) from error

    def _raise_remote(self, command: str, w: int, error: Any) -> NoReturn:
        """A sub-env's exception, raised again as its own class (the remote traceback as its cause). In
        reset/step it leaves the envs in an unknown state: every worker is shut down, as in the local backend."""
        if command in ("reset", "step", "startup"):
            self.close()
        first = w * self.envs_per_worker
        cause = error.cause if isinstance(error.cause, BaseException) else None
        if cause is None:
            raise SubEnvError(first, type(error).__name__, first_line(error), str(error)) from None
        cause.__cause__ = RemoteTraceback(
            f"\nworker {w} (sub-environments {first}..{first + self.envs_per_worker - 1}), remote traceback:\n{error}"
        )
        raise cause
