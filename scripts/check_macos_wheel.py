"""Checks that a macOS wheel's extensions load on the oldest macOS its tag names, on the machine it names.

Read with LLVM's tools (Debian's `llvm` package: `llvm-objdump`, `llvm-nm`), each extension must
- be a thin Mach-O for the tag's architecture (arm64 for `macosx_11_0_arm64`);
- carry the tag's minimum macOS (LC_BUILD_VERSION's minos, or an older LC_VERSION_MIN_MACOSX): a newer
  one would refuse to load on the systems the tag promises, an older one would mean the tag is wrong;
- link only the system libraries every macOS has (libSystem, libc++, libiconv), and no Python library: an
  abi3 extension takes CPython's API from whichever interpreter loads it, with `-undefined
  dynamic_lookup`, so no `_Py*` symbol may be bound to a library;
- export `PyInit_<module>` (`_PyInit__core` for `_core.abi3.so`), which the interpreter looks up.

Usage: python scripts/check_macos_wheel.py dist/torchwm-...-macosx_11_0_arm64.whl
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# Libraries every macOS has, in the dyld shared cache. libc++ is there for a C++ runtime linked as a
# library (zig links its own statically); Rust's standard library links libiconv, whose stubs
# (zig's) bring libcharset.
SYSTEM_LIBRARIES = {
    "/usr/lib/libSystem.B.dylib",
    "/usr/lib/libc++.1.dylib",
    "/usr/lib/libiconv.2.dylib",
    "/usr/lib/libcharset.1.dylib",
}
# Load commands that make dyld load a library.
LOAD_COMMANDS = {
    "LC_LOAD_DYLIB",
    "LC_LOAD_WEAK_DYLIB",
    "LC_REEXPORT_DYLIB",
    "LC_LAZY_LOAD_DYLIB",
    "LC_LOAD_UPWARD_DYLIB",
}
TAG = re.compile(r"-abi3-macosx_(\d+)_(\d+)_(arm64|x86_64)\.whl$")
# llvm-objdump's names for the Mach-O header's cputype, per wheel-tag architecture.
CPU_TYPES = {"arm64": "ARM64", "x86_64": "X86_64"}


def objdump(*args: str) -> str:
    return subprocess.run(["llvm-objdump", "--macho", *args], check=True, capture_output=True, text=True).stdout


def cpu_types(library: Path) -> list[str]:
    """The cputype of each Mach-O header: one for a thin file, one per slice of a universal one."""
    lines = objdump("--private-header", "--universal-headers", str(library)).splitlines()
    return [line.split()[1] for line in lines if line.startswith(("MH_MAGIC", "MH_CIGAM"))]


def load_commands(library: Path) -> list[dict[str, str]]:
    """Each load command's fields (`cmd`, `name`, `minos`, ...) as llvm-objdump prints them."""
    commands: list[dict[str, str]] = []
    for line in objdump("--private-headers", str(library)).splitlines():
        if line.startswith("Load command"):
            commands.append({})
        elif commands and (field := line.strip().split(None, 1)) and len(field) == 2:
            commands[-1].setdefault(field[0], field[1])
    return commands


def minimum_macos(commands: list[dict[str, str]]) -> tuple[int, ...] | None:
    for command in commands:
        if command.get("cmd") == "LC_BUILD_VERSION" and command.get("platform") == "macos":
            return tuple(int(part) for part in command["minos"].split("."))
        if command.get("cmd") == "LC_VERSION_MIN_MACOSX":
            return tuple(int(part) for part in command["version"].split("."))
    return None


def linked_libraries(commands: list[dict[str, str]]) -> list[str]:
    return [c["name"].split(" (offset")[0] for c in commands if c.get("cmd") in LOAD_COMMANDS]


def python_symbols_bound_to_libraries(library: Path) -> list[str]:
    """Undefined `_Py*` symbols that llvm-nm shows taken `(from <library>)`, not looked up at load."""
    listing = subprocess.run(
        ["llvm-nm", "-m", "--undefined-only", str(library)], check=True, capture_output=True, text=True
    ).stdout
    return [line.strip() for line in listing.splitlines() if re.search(r"\s_Py\w*\s+\(from ", line)]


def exported(library: Path) -> set[str]:
    """The symbols of the export trie, which dyld (and so the interpreter's dlsym) finds."""
    return {m[1] for m in re.finditer(r"^0x[0-9a-fA-F]+\s+(\S+)", objdump("--exports-trie", str(library)), re.M)}


def problems(library: Path, module: str, minimum: tuple[int, int], arch: str) -> list[str]:
    if (types := cpu_types(library)) != [CPU_TYPES[arch]]:
        return [f"Mach-O cputype(s) {types}, the tag names {arch} ({CPU_TYPES[arch]}) alone"]
    found = []
    commands = load_commands(library)
    minos = minimum_macos(commands)
    if minos is None or minos[:2] != minimum or any(minos[2:]):
        shown = ".".join(map(str, minos)) if minos else "not recorded"
        found.append(f"minimum macOS {shown}, the tag names {minimum[0]}.{minimum[1]}")
    found += [
        f"links {name}, not a system library" for name in linked_libraries(commands) if name not in SYSTEM_LIBRARIES
    ]
    found += [
        f"{symbol}: bound to a library, not looked up at load" for symbol in python_symbols_bound_to_libraries(library)
    ]
    if f"_PyInit_{module}" not in exported(library):
        found.append(f"does not export _PyInit_{module}")
    return found


def main(wheel: Path) -> int:
    tag = TAG.search(wheel.name)
    if tag is None:
        print(f"{wheel.name}: not an abi3 macOS wheel (…-abi3-macosx_<major>_<minor>_<arch>.whl)", file=sys.stderr)
        return 2
    minimum, arch = (int(tag[1]), int(tag[2])), tag[3]
    failures = []
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        libraries = [name for name in archive.namelist() if name.endswith((".so", ".dylib"))]
        for name in libraries:
            module = Path(name).name.split(".")[0]
            failures += [f"{name}: {p}" for p in problems(Path(archive.extract(name, tmp)), module, minimum, arch)]
    if not libraries:
        failures.append("no extension in the wheel")
    for failure in failures:
        print(failure, file=sys.stderr)
    if not failures:
        print(f"{wheel.name}: {len(libraries)} {arch} extension(s) load on macOS {minimum[0]}.{minimum[1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
