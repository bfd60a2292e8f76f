"""Checks that a manylinux wheel's extension loads on the oldest glibc its tag names.

maturin's audit (as auditwheel's) checks the versions of the symbols the extension takes from glibc, but
not the symbols it takes without a version: a function a newer glibc's headers declare (gettid came with
2.30) but the linker's older stubs lack is left undefined and unversioned, and the extension then fails
to load there ("undefined symbol"). Every strong undefined symbol must therefore carry a version, or be
CPython's (an abi3 extension takes those from the interpreter, unversioned), and no glibc version may be
newer than the tag's.

Each extension must also be built for the machine the tag names (an aarch64 wheel holding an x86-64
library installs, then fails to import).

Usage: python scripts/check_wheel_symbols.py dist/torchwm-...-manylinux_2_28_x86_64.whl
"""

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PYTHON_API = re.compile(r"_?Py[A-Z_a-z]")
SYMBOL = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+\S+\s+\w+\s+(?P<bind>\w+)\s+\w+\s+UND\s+(?P<name>\S+)")


# The ELF header's "Machine" (readelf's words) for each architecture a manylinux tag may end with.
MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}


def machine(library: Path) -> str:
    header = subprocess.run(["readelf", "--file-header", str(library)], check=True, capture_output=True, text=True)
    return next((line.split(":", 1)[1].strip() for line in header.stdout.splitlines() if "Machine:" in line), "")


def undefined_symbols(library: Path) -> list[tuple[str, str]]:
    """(name, binding) of each undefined dynamic symbol; the name keeps its @version, if any."""
    listing = subprocess.run(
        ["readelf", "--dyn-syms", "--wide", str(library)], check=True, capture_output=True, text=True
    ).stdout
    return [(m["name"], m["bind"]) for m in map(SYMBOL.match, listing.splitlines()) if m]


def problems(library: Path, glibc: tuple[int, int]) -> list[str]:
    found = []
    for name, bind in undefined_symbols(library):
        base, _, version = name.partition("@")
        if not version:
            if bind != "WEAK" and not PYTHON_API.match(base):
                found.append(f"{base}: undefined without a version (not in glibc {glibc[0]}.{glibc[1]}?)")
            continue
        numbers = re.fullmatch(r"@?GLIBC_(\d+)\.(\d+)(?:\.\d+)?(?:\s.*)?", version)
        if numbers and (int(numbers[1]), int(numbers[2])) > glibc:
            found.append(f"{base}: needs {version.lstrip('@')}")
    return found


def main(wheel: Path) -> int:
    tag = re.search(r"manylinux_(\d+)_(\d+)_(\w+?)\.whl$", wheel.name)
    if tag is None or tag[3] not in MACHINES:
        print(f"{wheel.name}: not a manylinux wheel for one of {sorted(MACHINES)}", file=sys.stderr)
        return 2
    glibc, expected_machine = (int(tag[1]), int(tag[2])), MACHINES[tag[3]]
    failures = []
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as archive:
        libraries = [name for name in archive.namelist() if re.search(r"\.so(\.\d+)*$", name)]
        for name in libraries:
            library = Path(archive.extract(name, tmp))
            if (found := machine(library)) != expected_machine:
                failures.append(f"{name}: built for {found!r}, the tag names {tag[3]} ({expected_machine!r})")
                continue
            failures += [f"{name}: {p}" for p in problems(library, glibc)]
    if not libraries:
        failures.append("no shared library in the wheel")
    for failure in failures:
        print(failure, file=sys.stderr)
    if not failures:
        print(f"{wheel.name}: {len(libraries)} {tag[3]} extension(s) load on glibc {glibc[0]}.{glibc[1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
