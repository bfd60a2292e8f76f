"""The worker's fast write of Box observations into shared memory: what gymnasium's ``concatenate``
writes, and gymnasium's own path for anything it does not take."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import concatenate

from torchwm.process.worker import BoxRows


@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int64])
def test_writes_what_gymnasium_concatenate_writes(shape, dtype):
    space = spaces.Box(0, 100, shape, dtype)
    rng = np.random.default_rng(0)
    observations = [rng.integers(0, 100, shape).astype(dtype) for _ in range(5)]
    ours, theirs = np.zeros((5, *shape), dtype), np.zeros((5, *shape), dtype)
    rows = BoxRows.of(ours)
    assert rows is not None and rows.write(observations)
    concatenate(space, observations, theirs)
    np.testing.assert_array_equal(ours, theirs)


def test_writes_into_the_rows_of_a_larger_buffer():
    shared = np.zeros((6, 4), np.float32)
    rows = BoxRows.of(shared[2:4])
    assert rows is not None and rows.write([np.full(4, 1.0, np.float32), np.full(4, 2.0, np.float32)])
    np.testing.assert_array_equal(shared[:, 0], [0, 0, 1, 2, 0, 0])


@pytest.mark.parametrize(
    "odd",
    [
        np.zeros(4, np.float64),  # another dtype: gymnasium casts it (same_kind) or refuses it
        np.zeros(3, np.float32),  # another shape: gymnasium refuses it
        np.zeros((1, 4), np.float32),  # broadcastable, but not the row's shape
        [0.0, 0.0, 0.0, 0.0],  # not an array: gymnasium converts it
    ],
)
def test_leaves_anything_else_to_gymnasium(odd):
    buffer = np.full((2, 4), 7, np.float32)
    rows = BoxRows.of(buffer)
    assert rows is not None
    assert not rows.write([np.zeros(4, np.float32), odd])
    assert (buffer == 7).all()  # nothing written


def test_only_rows_of_arrays_take_it():
    assert BoxRows.of(None) is None
    assert BoxRows.of(np.zeros(5)) is None  # a Box of shape (): one number a row
    assert BoxRows.of({"a": np.zeros((2, 3))}) is None
