"""The entry point of a worker process: the worker class its envs need (``Worker``, or ``AgentWorker``
for PettingZoo ParallelEnvs, which builds on it), in a module of its own so that neither imports the
other's module back."""

from __future__ import annotations

from typing import Any

from torchwm.process.agent_worker import AgentWorker
from torchwm.process.channel import open_channel
from torchwm.process.worker import Worker, WorkerConfig


def worker_main(config: WorkerConfig, pipe: Any, parent_end: Any) -> None:
    """Entry point of one worker process; ``parent_end`` (fork only) is the parent's end of the pipe."""
    if parent_end is not None:
        parent_end.close()
    channel = open_channel(pipe)
    try:
        worker = AgentWorker if config.agents is not None else Worker
        worker(config, channel).run()
    finally:
        channel.close()
