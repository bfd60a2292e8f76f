"""A real multi-node Ray cluster on this machine for the Ray tests: each node its own raylet.

Small on purpose (CI runners and dev boxes have few cores): one CPU and a small object store per node,
no dashboard, node failure noticed after about a second instead of Ray's default ~30 s, and workers at
the driver's priority (``TEST_SYSTEM_CONFIG``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

OBJECT_STORE_BYTES = 80 * 1024 * 1024
# Ray starts its worker processes (our actors) at niceness 15, below the driver. On a machine kept busy by
# other jobs at the default priority (scripts/load.sh, a shared CI runner) they then got a few percent of a
# core and the Ray tests took over 25 min instead of 2; at niceness 0 they compete as the driver does.
WORKERS_AT_DRIVER_PRIORITY = {"worker_niceness": 0}
# Ray's GCS health checks of the raylets: a removed node is declared dead after period * threshold.
FAST_FAILURE_DETECTION = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 300,
    "health_check_timeout_ms": 300,
    "health_check_failure_threshold": 3,
}
TEST_SYSTEM_CONFIG = {**WORKERS_AT_DRIVER_PRIORITY, **FAST_FAILURE_DETECTION}


@contextlib.contextmanager
def local_cluster(worker_nodes: list[dict[str, Any]]) -> Iterator[Any]:
    """A head node (where this driver connects) plus one node per entry of ``worker_nodes`` (``add_node``
    arguments); ``ray.init`` connected to it for the duration."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "object_store_memory": OBJECT_STORE_BYTES,
            "include_dashboard": False,
            "_system_config": TEST_SYSTEM_CONFIG,
        },
    )
    try:
        for args in worker_nodes:
            cluster.add_node(object_store_memory=OBJECT_STORE_BYTES, **args)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, include_dashboard=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
