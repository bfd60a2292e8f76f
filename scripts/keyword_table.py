"""Rewrites the keyword table of docs/atari.md from the core's one table of settings
(``torchwm._core.ATARI_SETTINGS``). Run it after changing ``src/vector/settings.rs``; a test checks the
table against the core."""

from __future__ import annotations

import pathlib
import re

from gymnasium.vector import AutoresetMode

from torchwm import _core

GUIDE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "atari.md"


def table() -> str:
    rows = ["| keyword | default | alias | meaning |", "| --- | --- | --- | --- |"]
    for name, aliases, default, doc in _core.ATARI_SETTINGS:
        shown = AutoresetMode(default).name if name == "autoreset_mode" else repr(default)
        alias_cell = ", ".join(f"`{alias}`" for alias in aliases)
        rows.append(f"| `{name}` | `{shown}` | {alias_cell} | {doc.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    text = GUIDE.read_text()
    updated, count = re.subn(r"\| keyword \| default \|.*?\n(?=\n)", table(), text, count=1, flags=re.DOTALL)
    if count != 1:
        raise SystemExit(f"no keyword table found in {GUIDE}")
    GUIDE.write_text(updated)


if __name__ == "__main__":
    main()
