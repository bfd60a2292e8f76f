"""The fuzz tests' case runner."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def runner():
    """The fuzz tests' case runner: one process per test module, replaced after a crash or a hang."""
    from fuzz_support import CaseRunner

    case_runner = CaseRunner()
    yield case_runner
    case_runner.stop()
