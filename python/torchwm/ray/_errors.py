"""The Ray backend's errors: a worker's exception kept until every worker answered, the one-line
summaries of Ray's errors, and the process backend's keywords that have no meaning on Ray."""

from __future__ import annotations

from typing import Any

from torchwm._vector_args import positive_count
from torchwm.errors import InvalidArgumentError

__all__ = ["TaskFailure", "first_line", "refuse_process_only", "summary"]


class TaskFailure:
    """A worker's answer that is an exception its envs raised (kept until every worker has answered)."""

    def __init__(self, error: Any) -> None:
        self.error = error


def refuse_process_only(
    context: Any,
    observation_mode: Any,
    max_concurrency: Any,
    num_workers: Any,
    backend: Any,
    batch_size: Any = None,
    envs_per_worker: Any = 1,
) -> None:
    """The process backend's keywords that have no meaning on Ray, refused with the reason."""
    if batch_size is not None and batch_size != positive_count("num_workers", num_workers) * positive_count(
        "envs_per_worker", envs_per_worker
    ):
        raise InvalidArgumentError(
            f"batch_size={batch_size!r}: pool mode (batch_size < num_envs) is the process backend's; the Ray "
            "backend steps every env at each call (leave batch_size None)"
        )
    if backend != "ray":
        raise InvalidArgumentError(f"RayVectorEnv is the 'ray' backend, got backend={backend!r}")
    if context is not None:
        raise InvalidArgumentError(
            f"context={context!r} picks how local worker processes start; Ray starts its actors itself (leave it None)"
        )
    if not (isinstance(observation_mode, str) and observation_mode == "same"):
        raise InvalidArgumentError(
            f"observation_mode={observation_mode!r}: the Ray backend takes 'same' (every env has env 0's "
            "spaces); use the process backend for other modes"
        )
    if max_concurrency is not None:
        limit = positive_count("max_concurrency", max_concurrency)
        if limit < positive_count("num_workers", num_workers):
            raise InvalidArgumentError(
                f"max_concurrency={limit} is below num_workers={num_workers}: each Ray actor steps its envs one "
                "after another, so at most num_workers envs step at once; use num_workers=max_concurrency"
            )


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def summary(error: BaseException) -> str:
    """The first line of a Ray error and, when it carries a traceback, its last line (the root cause)."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    if len(lines) > 1:
        return f"{lines[0]} ... {lines[-1].strip()}"
    return lines[0] if lines else ""
