"""scripts/check_macos_wheel.py finds what keeps a macOS wheel's extension from loading on the macOS
and machine its tag names: built here from tiny C libraries with zig's clang (`python -m ziglang cc`),
each wrong in one way the checker must catch."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "check_macos_wheel", Path(__file__).resolve().parents[2] / "scripts" / "check_macos_wheel.py"
)
assert _spec is not None and _spec.loader is not None
check_macos_wheel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_macos_wheel)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ziglang") is None
    or shutil.which("llvm-objdump") is None
    or shutil.which("llvm-nm") is None,
    reason="needs zig (the ziglang package) and LLVM's llvm-objdump and llvm-nm",
)

# An abi3 extension: CPython's API undefined, for the interpreter to provide at load.
EXTENSION = "extern long PyLong_FromLong(long);\nint {init}(void) {{ return (int)PyLong_FromLong(1); }}\n"
# A library the extension must not link: a Python framework, as a build against python.org's would.
PYTHON_FRAMEWORK = "/Library/Frameworks/Python.framework/Versions/3.11/Python"


def zig_cc(tmp: Path, output: str, source: str, *args: str) -> Path:
    (tmp / f"{output}.c").write_text(source)
    command = [sys.executable, "-m", "ziglang", "cc", "-target", "aarch64-macos.11.0", "-shared", "-O1"]
    subprocess.run([*command, "-o", str(tmp / output), str(tmp / f"{output}.c"), *args], check=True)
    return tmp / output


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """Extensions as maturin links them (`-undefined dynamic_lookup`), and each way wrong."""
    tmp = tmp_path_factory.mktemp("macho")
    lookup = ["-Wl,-undefined,dynamic_lookup"]
    framework = zig_cc(
        tmp, "libpython.dylib", "long PyLong_FromLong(long v) { return v; }\n", f"-Wl,-install_name,{PYTHON_FRAMEWORK}"
    )
    elsewhere = zig_cc(
        tmp, "libother.dylib", "int other(void) { return 0; }\n", "-Wl,-install_name,/opt/lib/libother.dylib"
    )
    return {
        "good": zig_cc(tmp, "good.so", EXTENSION.format(init="PyInit__core"), *lookup),
        "no_init": zig_cc(tmp, "no_init.so", EXTENSION.format(init="PyInit_other"), *lookup),
        "python_linked": zig_cc(tmp, "python_linked.so", EXTENSION.format(init="PyInit__core"), str(framework)),
        "other_linked": zig_cc(tmp, "other_linked.so", EXTENSION.format(init="PyInit__core"), str(elsewhere), *lookup),
    }


def wheel_of(tmp_path: Path, library: Path, tag: str = "macosx_11_0_arm64") -> Path:
    wheel = tmp_path / f"torchwm-0.1-cp310-abi3-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(library, "torchwm/_core.abi3.so")
        archive.writestr("torchwm/__init__.py", "")
    return wheel


def test_an_extension_linked_as_maturin_does_passes(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["good"])) == 0
    assert "1 arm64 extension(s) load on macOS 11.0" in capsys.readouterr().out


def test_a_minimum_macos_other_than_the_tags_fails(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["good"], "macosx_10_12_arm64")) == 1
    assert "minimum macOS 11.0, the tag names 10.12" in capsys.readouterr().err


def test_an_architecture_other_than_the_tags_fails(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["good"], "macosx_11_0_x86_64")) == 1
    assert "cputype(s) ['ARM64'], the tag names x86_64" in capsys.readouterr().err


def test_a_missing_module_init_fails(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["no_init"])) == 1
    assert capsys.readouterr().err.strip() == "torchwm/_core.abi3.so: does not export _PyInit__core"


def test_a_library_other_than_the_systems_fails(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["other_linked"])) == 1
    assert (
        capsys.readouterr().err.strip() == "torchwm/_core.abi3.so: links /opt/lib/libother.dylib, not a system library"
    )


def test_python_taken_from_a_library_fails(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["python_linked"])) == 1
    errors = capsys.readouterr().err
    assert f"links {PYTHON_FRAMEWORK}, not a system library" in errors
    assert "_PyLong_FromLong (from Python): bound to a library, not looked up at load" in errors


def test_a_wheel_not_tagged_abi3_for_macos_is_refused(libraries, tmp_path, capsys):
    assert check_macos_wheel.main(wheel_of(tmp_path, libraries["good"], "manylinux_2_28_x86_64")) == 2
    assert "not an abi3 macOS wheel" in capsys.readouterr().err
