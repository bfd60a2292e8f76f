"""Errors a process vectorizer reports: never a hang, never a lost traceback."""

from __future__ import annotations


class SubEnvError(RuntimeError):
    """A sub-environment raised in its worker process; carries the env index and the remote traceback."""

    def __init__(self, env_index: int, exc_type: str, message: str, remote_traceback: str) -> None:
        self.env_index = env_index
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback
        super().__init__(
            f"sub-environment {env_index} raised {exc_type}: {message}\n\nRemote traceback:\n{remote_traceback}"
        )


class WorkerCrashedError(RuntimeError):
    """A worker process died (killed, segfault, os._exit) or stopped answering."""
