"""``@pytest.mark.own_interpreter``: the test runs in a fresh Python process of its own, never in the
pytest process.

For tests that load a library which starts threads of its own (JAX's runtime): a pytest process runs
many tests, and most of them fork (worker processes, ``SubprocVecEnv``, the fork-safety tests). A fork
after such threads exist may deadlock the child (JAX warns ``os.fork() was called ...`` on every
fork). In their own interpreter they cannot be in any process that forks later.

The marked test runs as ``python -m pytest NODEID`` (the same ini file and root directory); that
process writes its reports (setup, call, teardown) to a file and the pytest process reports them as
its own, so results, skips and failure texts look as if the test had run here. ``conftest.py``
imports the hooks below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Set in the test's own process: the node id it runs, and the file its reports go to.
RUNNING = "TORCHWM_OWN_INTERPRETER_NODEID"
REPORTS = "TORCHWM_OWN_INTERPRETER_REPORTS"


def in_own_interpreter() -> bool:
    """Whether this pytest process was started for an ``own_interpreter`` test."""
    return RUNNING in os.environ


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "own_interpreter: runs the test in a fresh Python process (it loads a library whose threads must "
        "never be in a process that forks; see tests/own_interpreter.py)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """A marked test (in the pytest process): run in its own interpreter, its reports passed on."""
    if item.get_closest_marker("own_interpreter") is None or in_own_interpreter():
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = _run_in_own_interpreter(item)
    teardown = _tear_down_for(item, nextitem)
    if teardown.excinfo is not None:  # a finalizer here failed: that is the test's teardown report
        reports = [r for r in reports if r.when != "teardown"]
        reports.append(item.ihook.pytest_runtest_makereport(item=item, call=teardown))
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _tear_down_for(item: pytest.Item, nextitem: pytest.Item | None) -> pytest.CallInfo[None]:
    """What pytest's protocol does at a test's end, here too: tear down the modules, classes and fixtures
    set up in this process that ``nextitem`` does not share. The test before this one kept those this
    one shares (its module, when the test before was of the same module); left set up, the next test of
    another module fails its setup ("previous item was not torn down properly")."""
    setup_state = item.session._setupstate  # pytest's, which its teardown hook calls the same way
    return pytest.CallInfo.from_call(lambda: setup_state.teardown_exact(nextitem), when="teardown")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In the test's own process: each report written down for the pytest process to read."""
    path = os.environ.get(REPORTS)
    if path is None or report.nodeid != os.environ.get(RUNNING):
        return
    record = {
        "when": report.when,
        "outcome": report.outcome,
        "duration": report.duration,
        "longrepr": _longrepr(report),
        "sections": list(report.sections),
    }
    with open(path, "a", encoding="utf-8") as reports:
        reports.write(json.dumps(record) + "\n")


def _longrepr(report: pytest.TestReport) -> Any:
    if report.skipped and isinstance(report.longrepr, tuple):
        return list(report.longrepr)  # (path, line, reason): how pytest reports a skip
    return None if report.longrepr is None else str(report.longrepr)


def _run_in_own_interpreter(item: pytest.Item) -> list[pytest.TestReport]:
    config = item.config
    handle, name = tempfile.mkstemp(prefix="torchwm-own-interpreter-", suffix=".jsonl")
    os.close(handle)
    reports_file = Path(name)
    command = [sys.executable, "-m", "pytest", item.nodeid, "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    command += ["--rootdir", str(config.rootpath)]
    if config.inipath is not None:
        command += ["-c", str(config.inipath)]
    environment = {**os.environ, RUNNING: item.nodeid, REPORTS: str(reports_file)}
    environment.pop("PYTEST_XDIST_WORKER", None)
    # No timeout here: pytest-timeout's, in the test's own process, bounds the test itself.
    finished = subprocess.run(command, cwd=config.rootpath, env=environment, capture_output=True, text=True)
    try:
        records = [json.loads(line) for line in reports_file.read_text(encoding="utf-8").splitlines()]
    finally:
        reports_file.unlink()
    if not any(record["when"] == "call" or record["outcome"] != "passed" for record in records):
        output = (finished.stdout + finished.stderr)[-6000:]
        failure = f"the test's own interpreter ended without a result (exit code {finished.returncode}):\n{output}"
        if not records:
            records = [_record("setup", "passed", None)]
        records.append(_record("call", "failed", failure))
    return [_report(item, record) for record in records]


def _record(when: str, outcome: str, longrepr: Any) -> dict[str, Any]:
    return {"when": when, "outcome": outcome, "duration": 0.0, "longrepr": longrepr, "sections": []}


def _report(item: pytest.Item, record: dict[str, Any]) -> pytest.TestReport:
    longrepr = record["longrepr"]
    return pytest.TestReport(
        item.nodeid,
        item.location,
        dict.fromkeys(item.keywords, 1),
        record["outcome"],
        tuple(longrepr) if isinstance(longrepr, list) else longrepr,
        record["when"],
        [tuple(section) for section in record["sections"]],
        record["duration"],
    )
