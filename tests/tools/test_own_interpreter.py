"""The ``own_interpreter`` marker (tests/own_interpreter.py) in a pytest run of its own: the tests around
a marked one still set up and tear down as in pytest's own protocol."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("teardown_fails", [False, True], ids=["teardown_passes", "teardown_fails"])
def test_a_marked_test_leaves_no_module_of_an_earlier_test_set_up(tmp_path: Path, teardown_fails: bool) -> None:
    """An unmarked test, then a marked one of the same module, then a test of another module. pytest
    ends the first test by tearing down what the next one does not share: the module stays. The marked
    test runs elsewhere, so its end must tear the module down, or the third test's setup fails
    ("previous item was not torn down properly", seen in CI under pytest-xdist) and the module's
    fixtures outlive it. A failure in that teardown is the marked test's teardown error, as pytest's."""
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(TESTS)!r})
            from own_interpreter import pytest_configure, pytest_runtest_logreport, pytest_runtest_protocol
            """
        )
    )
    (tmp_path / "test_first.py").write_text(
        textwrap.dedent(
            f"""
            import pytest

            @pytest.fixture(scope="module")
            def module_fixture():
                yield
                print("module fixture", "torn down")  # the traceback shows this line: not the same text
                if {teardown_fails}:
                    raise RuntimeError("the module fixture's teardown failed")

            def test_in_this_process(module_fixture):
                pass

            @pytest.mark.own_interpreter
            def test_in_its_own():
                pass
            """
        )
    )
    (tmp_path / "test_second.py").write_text("def test_after():\n    pass\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-s", "-rA", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = run.stdout + run.stderr
    assert output.count("module fixture torn down") == 1, output
    assert "3 passed" in output, output
    if teardown_fails:
        assert run.returncode == 1, output
        assert "ERROR at teardown of test_in_its_own" in output and "3 passed, 1 error" in output, output
    else:
        assert run.returncode == 0, output
