"""``TorchVectorizedEnv``'s side of gymnasium's async protocol: a call is sent to the workers (every frame
pickled before anything is written), its replies are awaited, and a sub-env's error in them decides
whether the env stays usable. The pending call itself (gymnasium's ``AsyncState``) is recorded by the
worker pool (process/pool.py), in the statements that send and take: a Ctrl-C never finds the two apart.

A mixin of ``TorchVectorizedEnv`` alone (its pool, counts and reset state); the calls in sub_env_calls.py
and pool_mode.py go through it.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

from gymnasium.vector.async_vector_env import AsyncState

import torchwm.errors as errors
from torchwm._vector_args import already_pending_message, async_state, parse_timeout
from torchwm.errors import InvalidArgumentError
from torchwm.process.actions import actions_outside_space
from torchwm.process.pool import WorkerPool
from torchwm.process.protocol import Message, frame
from torchwm.process.remote_errors import log_like_gymnasium

__all__ = ["STEPS_IN_FLIGHT_TIMEOUT_S", "PendingCallsMixin"]

# Pool mode: how long a call that has no timeout (reset, get_attr, set_attr, call) waits for the steps still
# in flight before it gives up unsent: a worker hung in its step must not hang it.
STEPS_IN_FLIGHT_TIMEOUT_S = 60.0
# Why a step needs a reset first (``ResetNeeded``). A step before the first reset is not refused here:
# as gymnasium's AsyncVectorEnv does, it goes to the sub-envs (gym.make's OrderEnforcing refuses it).
_BAD_ACTION = (
    "a sub-environment raised in step() on an action outside the action space; the envs are as that step "
    "left them: call reset() before stepping again"
)


class PendingCallsMixin:
    """``_live_pool``/``_open_pool``, ``_send``/``_frames``/``_send_frames``, ``_wait``/``_wait_now``, and
    what a sub-env's error in ``reset``/``step`` leaves."""

    agents_per_env: int
    action_space: Any
    single_action_space: Any
    _pool: WorkerPool | None
    _has_reset: bool
    _reset_needed: str | None
    _sent_actions: Any
    pool_mode: bool  # PoolModeMixin's property

    def _open_pool(self) -> WorkerPool:
        """The workers; ``ClosedEnvironmentError`` once the env is closed."""
        if self._pool is None or self._pool.closed:
            raise errors.ClosedEnvironmentError(
                f"Trying to operate on `{type(self).__name__}`, after a call to `close()`."
            )
        return self._pool

    def _live_pool(self, call: str) -> WorkerPool:
        """The workers, for a new async ``call``: the env is open and no reply is pending."""
        pool = self._open_pool()
        if pool.pending is not AsyncState.DEFAULT:
            raise errors.AlreadyPendingCallError(already_pending_message(call, pool.pending), pool.pending.value)
        return pool

    def _send(self, pool: WorkerPool, kind: Message, payloads: list[Any], what: str, pending: str) -> None:
        """Sends ``kind`` with ``payloads[w]`` to worker ``w``: every frame is built (pickled) before
        anything is written, so a payload that cannot be pickled leaves every worker as it was. In pool
        mode a call other than reset/step is sent by its wait (``_wait``, ``_wait_now``)."""
        self._send_frames(pool, self._frames(kind, payloads, what), pending)

    @staticmethod
    def _frames(kind: Message, payloads: list[Any], what: str) -> list[bytes]:
        """The frames of ``kind`` with each payload; ``InvalidArgumentError`` naming ``what`` if one cannot
        be pickled (nothing is sent then)."""
        try:
            return [frame(kind, payload) for payload in payloads]
        except Exception as error:
            raise InvalidArgumentError(f"{what} cannot be sent to the worker processes (pickled): {error}") from error

    def _send_frames(self, pool: WorkerPool, frames: list[bytes], pending: str) -> None:
        """Sends frames built by :meth:`_frames`, one a worker; the pool then awaits ``pending``."""
        if self.pool_mode and pending not in ("reset", "step"):
            # The steps in flight finish first: the call goes out from its wait, which has a timeout.
            pool.defer(frames, async_state(pending))
        else:
            pool.send(frames, pending=async_state(pending))

    def _wait(self, call: str, pending: str, timeout: float | None) -> list[Any]:
        """The replies to the pending ``pending`` call. A timeout or Ctrl-C keeps it pending (wait again),
        unless the Ctrl-C was raised once the replies were taken: they are lost then, as gymnasium's are."""
        pool = self._open_pool()
        if pool.pending is not async_state(pending):
            raise errors.NoAsyncCallError(f"Calling `{call}_wait` without any prior call to `{call}_async`.", pending)
        timeout = parse_timeout(timeout)
        if pool.last_raised:  # set again by a gather that raises a sub-env's exception, not by anything else
            pool.last_raised = []
        try:
            if pool.deferred is not None:
                timeout = pool.send_deferred(pending, timeout)
            return pool.gather(pending, timeout)  # the call is over as the pool takes its replies
        except (mp.TimeoutError, KeyboardInterrupt):
            raise  # the pool says whether the call is still pending
        except BaseException:
            pool.drop_pending()  # a sub-env raised (its replies are taken) or a reply could not be read
            if pending in ("reset", "step") and not pool.closed:
                self._after_sub_env_error(pending, pool)
            elif pending in ("call", "set_attr") and pool.last_raised and not pool.closed:
                log_like_gymnasium(pool.last_raised)  # as gymnasium's call_wait/set_attr; the workers go on
            raise

    def _wait_now(self, call: str, pending: str) -> list[Any]:
        """The replies to the call just made by a method without a timeout (``get_attr``, ``set_attr``...).
        In pool mode it waits for the steps in flight at most ``STEPS_IN_FLIGHT_TIMEOUT_S``: a worker
        hung in its step raises ``multiprocessing.TimeoutError``, as gymnasium's ``call_wait(timeout)``
        would, and the call is dropped unsent (the env as it was). The call itself has no time limit,
        as gymnasium's has none."""
        pool = self._open_pool()
        if pool.deferred is not None:
            try:
                pool.send_deferred(f"{call} (the steps in flight)", STEPS_IN_FLIGHT_TIMEOUT_S)
            except BaseException:
                if pool.deferred is not None:  # not sent: nothing is pending, the replies set aside are back
                    pool.drop_pending()
                raise
        return self._wait(call, pending, None)

    def _drop_steps_in_flight(self, pool: WorkerPool) -> None:
        """Pool mode's reset: waits for the steps in flight (an interrupted reset's too) and drops every
        reply not taken; the reset is then under way (``WAITING_RESET``, no batch waiting for actions),
        even if a Ctrl-C is raised as the drop returns. A worker hung in its step raises
        ``multiprocessing.TimeoutError`` after ``STEPS_IN_FLIGHT_TIMEOUT_S``, as the calls do; that or
        Ctrl-C meanwhile drops nothing."""
        pool.drop_all("reset (the steps in flight)", STEPS_IN_FLIGHT_TIMEOUT_S, AsyncState.WAITING_RESET)

    def _after_sub_env_error(self, pending: str, pool: WorkerPool) -> None:
        """A sub-env raised in ``reset``/``step`` (its worker goes on): logged as gymnasium logs it. If
        every failing env was given an action outside the action space, the error is the caller's and
        the env stays usable once reset; so it does after a step before the first reset (the sub-envs
        refused it, as gym.make's envs do, or failed without any episode begun); otherwise the workers
        are shut down, as gymnasium's are."""
        log_like_gymnasium(pool.last_raised)
        failed = [remote.env_index for remote in pool.last_raised]
        # An env's agents share its step: one of its rows outside the space is the caller's error.
        rows = [range(e * self.agents_per_env, (e + 1) * self.agents_per_env) for e in failed]
        outside = actions_outside_space(self.action_space, self.single_action_space, self._sent_actions, rows)
        if pending == "step" and outside:
            self._has_reset, self._reset_needed = False, _BAD_ACTION
            return
        if pending == "step" and not self._has_reset:
            return  # stepped before the first reset (the caller's order): no episode to lose, reset to go on
        pool.shutdown()
