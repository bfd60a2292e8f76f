"""The docs stay true: the README's speed figures are the committed bench results', and no page reads as a
work diary (work-item numbers, rounds of work, sessions)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOC_PAGES = sorted((ROOT / "docs").rglob("*.md"))

# scripts/headline_figure.py is a developer's script, not part of the package: it computes the figures.
_spec = importlib.util.spec_from_file_location("headline_figure", ROOT / "scripts" / "headline_figure.py")
assert _spec is not None and _spec.loader is not None
headline_figure = importlib.util.module_from_spec(_spec)
sys.modules["headline_figure"] = headline_figure  # its dataclass looks its module up there
_spec.loader.exec_module(headline_figure)

# "issue 30", "issues 29-30", "#29", "second round" (of work), "the session", "ticket", "work item": a
# reader cannot look any of them up. Rounds of a measurement ("3 interleaved rounds") stay allowed.
WORK_ITEM = re.compile(
    r"\bissues? #?\d+|(?<![\w&/])#\d+\b|\b(?:first|second|third|fourth|fifth|sixth|next|last) round\b(?! (?:trip|of \d))"
    r"|\bsessions?\b|\btickets?\b|\bwork items?\b|\bthe issue\b|\bthis issue\b|\bissue's\b",
    re.IGNORECASE,
)
RATIO = re.compile(r"(?<![\w.])\d+(?:\.\d+)?x(?!\w)")  # "1.76x", not "84x84" or "2x16"


def section(path: Path, heading: str) -> str:
    """The text under a ``## heading`` up to the next ``## ``."""
    text = path.read_text()
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_every_ratio_in_the_readme_speed_section_is_recomputed_from_a_committed_bench_result():
    quoted = RATIO.findall(section(README, "Speed"))
    figures = headline_figure.figures()
    recomputed = {ratio for value in figures.values() for ratio in RATIO.findall(value)}
    assert quoted, "the Speed section quotes no figure"
    assert sorted(set(quoted) - recomputed) == [], "figures that no committed bench result gives"
    speed = section(README, "Speed")
    missing = {name: value for name, value in figures.items() if value not in speed}
    assert missing == {}, "figures scripts/headline_figure.py computes that the README does not quote as computed"


def test_the_readme_names_each_source_with_its_date():
    speed = section(README, "Speed")
    for source in headline_figure.SOURCES.values():
        assert (ROOT / source.path).is_file(), source.path
        assert f"`{source.path}`, {source.date}" in speed, f"the Speed section must name {source.path}, {source.date}"


def test_the_headline_picture_is_committed_and_shown_first_on_both_front_pages():
    assert (ROOT / "docs" / "headline.png").is_file()
    readme, home = README.read_text(), (ROOT / "docs" / "index.md").read_text()
    assert "](docs/headline.png)" in readme and "](headline.png)" in home
    for text in (readme, home):
        # install, then a quickstart, then the picture, before anything else the page says
        assert text.index("## Install") < text.index("## Quickstart") < text.index("headline.png)")


def quickstart_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", section(path, "Quickstart"), flags=re.DOTALL)


def test_the_quickstarts_run_as_written():
    """The README's; the docs site's front page has the same blocks (the test below)."""
    blocks = quickstart_blocks(README)
    assert len(blocks) == 3  # Atari, any factory, SB3
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for block in blocks:
        if "stable_baselines3" in block and importlib.util.find_spec("stable_baselines3") is None:
            continue  # the test extra installs SB3; a bare checkout may not have it
        subprocess.run([sys.executable, "-c", block], check=True, timeout=300, env=env, cwd=ROOT)


def test_the_front_pages_share_one_install_and_quickstart():
    home = ROOT / "docs" / "index.md"
    assert section(README, "Install") == section(home, "Install")
    assert quickstart_blocks(README) == quickstart_blocks(home)


@pytest.mark.parametrize("page", [README, *DOC_PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_names_a_work_item(page: Path):
    lines = page.read_text().splitlines()
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(lines, 1) if WORK_ITEM.search(line)]
    assert hits == []


@pytest.mark.parametrize(
    "text",
    ["issue 30", "issues 29-30", "(issue #19)", "the second round of this work", "the session", "this issue's"],
)
def test_the_work_item_pattern_finds_diary_terms(text: str):
    assert WORK_ITEM.search(text)


@pytest.mark.parametrize(
    "text", ["3 interleaved rounds of 2 s", "a round trip", "round-robin", "per round", "rounds 0.90–0.94"]
)
def test_the_work_item_pattern_leaves_measurement_rounds_alone(text: str):
    assert not WORK_ITEM.search(text)


def test_a_changed_figure_is_caught(tmp_path: Path):
    """The check reads the JSON: a result edited by hand no longer gives the README's figure."""
    for source in headline_figure.SOURCES.values():
        (tmp_path / source.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / source.path).write_text((ROOT / source.path).read_text())
    bench = tmp_path / "docs" / "bench-atari.json"
    bench.write_text(bench.read_text().replace('"steps_per_s": 5112', '"steps_per_s": 6112', 1))
    assert headline_figure.figures(tmp_path) != headline_figure.figures()


def test_the_headline_picture_is_drawn_from_the_sources(tmp_path: Path):
    """The script still draws with the bench's plotting helpers (what `python scripts/headline_figure.py` runs)."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "headline.png"
    headline_figure.draw(path)
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 50_000
