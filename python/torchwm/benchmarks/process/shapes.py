"""The shape of a process-vectorizer run: workers x envs per worker, and the batch one ``send``/``recv``
returns (all envs in sync mode, whole workers fewer in pool mode); the sweeps' shapes, and
``WORKERSxENVS`` as the command line writes them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Shape", "parse_workers_envs", "sync_and_pool"]


@dataclass(frozen=True)
class Shape:
    """``num_workers`` processes x ``envs_per_worker`` envs; ``batch_size`` envs per step call (all of
    them: sync mode; fewer: pool mode, where a batch must be whole workers, see ``valid``)."""

    num_workers: int
    envs_per_worker: int
    batch_size: int

    @property
    def num_envs(self) -> int:
        return self.num_workers * self.envs_per_worker

    @property
    def pool(self) -> bool:
        return self.batch_size < self.num_envs

    @property
    def mode(self) -> str:
        return "pool" if self.pool else "sync"

    @property
    def workers_envs(self) -> str:
        return f"{self.num_workers}x{self.envs_per_worker}"

    def valid(self) -> bool:
        """A batch is whole workers, at least one, at most all of them."""
        return 0 < self.batch_size <= self.num_envs and self.batch_size % self.envs_per_worker == 0


def sync_and_pool(num_workers: int, envs_per_worker: int) -> list[Shape]:
    """The shape in sync mode, and in pool mode with half the envs per batch where that is whole workers."""
    shapes = [Shape(num_workers, envs_per_worker, num_workers * envs_per_worker)]
    if num_workers > 1 and num_workers % 2 == 0:
        shapes.append(Shape(num_workers, envs_per_worker, num_workers * envs_per_worker // 2))
    return shapes


def parse_workers_envs(text: str) -> list[tuple[int, int]]:
    """``"1x32,2x16,4x8"`` -> ``[(1, 32), (2, 16), (4, 8)]``."""
    pairs = []
    for item in text.replace(" ", "").split(","):
        workers, sep, envs = item.partition("x")
        if not sep or not workers.isdigit() or not envs.isdigit() or int(workers) < 1 or int(envs) < 1:
            raise ValueError(f"expected WORKERSxENVS items like 2x16, got {item!r}")
        pairs.append((int(workers), int(envs)))
    return pairs
