"""Bad input to the emulator raises a clear Python exception, never a crash, and the emulator stays usable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ale_py import roms

import torchwm
from torchwm import _core


def test_missing_rom_file(tmp_path: Path) -> None:
    ale = _core.Ale()
    with pytest.raises(FileNotFoundError, match=r"nope\.bin"):
        ale.load_rom(tmp_path / "nope.bin")


def test_file_that_is_not_a_rom(tmp_path: Path) -> None:
    bogus = tmp_path / "breakout.bin"
    bogus.write_bytes(b"\x00" * 4096)
    ale = _core.Ale()
    with pytest.raises(ValueError, match="not a supported Atari 2600 ROM"):
        ale.load_rom(bogus)
    assert _core.is_supported_rom(bogus) is False
    assert _core.is_supported_rom(roms.get_rom_path("breakout")) is True
    # Still usable: a real ROM loads afterwards.
    ale.load_rom(roms.get_rom_path("breakout"))
    assert ale.lives() == 5


def test_unknown_setting_name() -> None:
    ale = _core.Ale()
    with pytest.raises(torchwm.AleError, match="no_such_key"):
        ale.set_int("no_such_key", 1)
    with pytest.raises(torchwm.AleError):
        ale.set_float("also_missing", 1.0)
    with pytest.raises(ValueError, match="NUL"):
        ale.set_int("random\0seed", 1)


@pytest.mark.parametrize("action", [-1, 18, 255])
def test_action_out_of_range(action: int) -> None:
    ale = _core.Ale()
    ale.load_rom(roms.get_rom_path("pong"))
    with pytest.raises(ValueError, match=r"\[0, 18\)"):
        ale.act(action)
    assert ale.act(0) == 0
    assert ale.frame_number() == 1


def test_calls_before_load_and_bad_ram_index() -> None:
    ale = _core.Ale()
    with pytest.raises(torchwm.AleError, match="no ROM is loaded"):
        ale.act(0)
    with pytest.raises(torchwm.AleError, match="no ROM is loaded"):
        ale.screen_rgb()
    ale.load_rom(roms.get_rom_path("pong"))
    with pytest.raises(ValueError, match="RAM index"):
        ale.set_ram(128, 0)
    with pytest.raises(ValueError, match="mode"):
        ale.set_mode(999)


def test_bad_rom_does_not_exit_the_process(tmp_path: Path) -> None:
    """ALE itself calls exit(1) on an unsupported ROM; torchwm must not let it."""
    bogus = tmp_path / "x.bin"
    bogus.write_bytes(b"junk")
    code = (
        "from torchwm import _core\n"
        f"try:\n    _core.Ale().load_rom({str(bogus)!r})\nexcept ValueError:\n    print('raised')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "raised" in out.stdout, out.stderr
