"""scripts/check_wheel_symbols.py finds what keeps a manylinux wheel's extension from loading on the glibc
its tag names: built here from tiny C libraries with the system's compiler."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "check_wheel_symbols", Path(__file__).resolve().parents[2] / "scripts" / "check_wheel_symbols.py"
)
assert _spec is not None and _spec.loader is not None
check_wheel_symbols = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_wheel_symbols)

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("readelf") is None, reason="needs a C compiler and readelf"
)

# CPython's API (taken from the interpreter, unversioned) and a weak symbol are fine; a function no
# library provides is left undefined without a version, as glibc 2.30's gettid was under zig's 2.28 stubs.
SOURCE = """
#include <unistd.h>
extern long PyLong_FromLong(long);
extern int absent_from_glibc_2_28(void);
extern int optional_feature(void) __attribute__((weak));
long f(void) { return PyLong_FromLong(1) + (optional_feature ? optional_feature() : 0) + %s; }
"""


def wheel_of(tmp_path: Path, body: str, tag: str = "manylinux_2_28", arch: str = "x86_64") -> Path:
    source = tmp_path / "ext.c"
    source.write_text(SOURCE % body)
    library = tmp_path / "_ext.abi3.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(library), str(source)], check=True)
    wheel = tmp_path / f"pkg-0.1-cp310-abi3-{tag}_{arch}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(library, "pkg/_ext.abi3.so")
    return wheel


def test_an_unversioned_undefined_symbol_fails(tmp_path, capsys):
    assert check_wheel_symbols.main(wheel_of(tmp_path, "absent_from_glibc_2_28()")) == 1
    errors = capsys.readouterr().err
    assert "absent_from_glibc_2_28: undefined without a version" in errors
    assert "PyLong_FromLong" not in errors and "optional_feature" not in errors


def test_python_api_and_weak_symbols_pass(tmp_path, capsys):
    assert check_wheel_symbols.main(wheel_of(tmp_path, "0")) == 0
    assert "load on glibc 2.28" in capsys.readouterr().out


def test_a_glibc_version_above_the_tag_fails(tmp_path, capsys):
    # getpid is GLIBC_2.2.5 on x86_64, newer than the glibc 2.1 of this made-up tag.
    wheel = wheel_of(tmp_path, "getpid()", tag="manylinux_2_1")
    assert check_wheel_symbols.main(wheel) == 1
    assert "needs GLIBC_2." in capsys.readouterr().err


def test_a_library_for_another_machine_than_the_tag_fails(tmp_path, capsys):
    # This machine's compiler builds x86-64 code: a wheel tagged aarch64 holding it must not pass.
    assert check_wheel_symbols.main(wheel_of(tmp_path, "0", arch="aarch64")) == 1
    assert "built for 'Advanced Micro Devices X86-64', the tag names aarch64" in capsys.readouterr().err


def test_an_unknown_architecture_is_refused(tmp_path, capsys):
    assert check_wheel_symbols.main(wheel_of(tmp_path, "0", arch="riscv64")) == 2
    assert "not a manylinux wheel for one of" in capsys.readouterr().err
