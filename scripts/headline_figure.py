"""The speed picture of the README and the docs' home page (docs/headline.png), drawn from the bench
results committed in docs/, and the figures the README's "Speed" section quotes from the same files.

    python scripts/headline_figure.py                 # writes docs/headline.png, prints the figures
    python scripts/headline_figure.py --figures-only  # prints the figures (no matplotlib needed)

The panels reuse the bench's own plotting (``torchwm.benchmarks.atari.report`` and ``torchwm.benchmarks.process.report``),
so the picture reads like ``torchwm bench``'s plots. To show newer results, commit the new ``torchwm
bench --out`` JSON under docs/, point ``SOURCES`` at it with its machine and date, rerun this script,
and paste the figures it prints into the README (tests/tools/test_docs_figures.py checks them).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEERS = ("ale_py", "envpool")  # the Atari panels' backends besides torchwm


@dataclass(frozen=True)
class Source:
    """A committed bench result: where it is, and the machine and day it was measured on (the JSON
    records cores and Python, not the day)."""

    path: str
    machine: str
    date: str

    def label(self) -> str:
        return f"{self.machine}, {self.date} ({self.path})"


SOURCES = {
    "atari_2core": Source("docs/bench-atari.json", "2-vCPU VM (AMD EPYC)", "2026-11-22"),
    "atari_16core": Source("docs/many-cores-16core.jsonl", "16-vCPU VM (H200 host)", "2026-11-27"),
    "process_2core": Source("docs/bench-process-2core-vm.json", "2-vCPU VM (AMD EPYC)", "2026-11-27"),
}


def load(name: str, root: Path = ROOT) -> Any:
    """A source's JSON (a list of rows for a JSON-lines file)."""
    text = (root / SOURCES[name].path).read_text()
    if SOURCES[name].path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def atari_rows(name: str, mode: str, root: Path = ROOT) -> list[dict[str, Any]]:
    """Env-only Atari rows of torchwm and its peers in one mode ("sync" or "async": half batches)."""
    data = load(name, root)
    rows = data if isinstance(data, list) else data["atari"]["results"]
    return [
        r
        for r in rows
        if r.get("kind", "throughput") == "throughput"
        and r.get("policy", "none") in ("none", "no policy")
        and r["backend"] in ("torchwm", *PEERS)
        and (r.get("mode", "sync") == "sync") == (mode == "sync")
    ]


def speedups(rows: list[dict[str, Any]], peer: str) -> list[float]:
    """torchwm's steps/s over the peer's at each env count both measured."""
    rate = {(r["backend"], r["num_envs"]): r["steps_per_s"] for r in rows}
    counts = sorted({r["num_envs"] for r in rows})
    return [rate[("torchwm", n)] / rate[(peer, n)] for n in counts if ("torchwm", n) in rate and (peer, n) in rate]


def span(ratios: list[float]) -> str:
    """A range of ratios as the docs write it: "1.59x–1.83x" (one value: "1.76x")."""
    low, high = f"{min(ratios):.2f}x", f"{max(ratios):.2f}x"
    return low if low == high else f"{low}–{high}"


def process_best(case: str, peer: str, root: Path = ROOT) -> str:
    """torchwm's best configuration over the peer's best (the bench's own summary), as "1.76x"."""
    return f"{load('process_2core', root)['process']['summary'][case]['torchwm_best_x'][peer]:.2f}x"


def figures(root: Path = ROOT) -> dict[str, str]:
    """Every figure the README's "Speed" section quotes, by name, recomputed from the sources."""
    quoted = {}
    for name, mode in (("atari_2core", "sync"), ("atari_16core", "sync"), ("atari_16core", "async")):
        rows = atari_rows(name, mode, root)
        for peer in PEERS:
            quoted[f"{name} {mode} vs {peer}"] = span(speedups(rows, peer))
    for case in ("cartpole", "cartpole_numpy"):
        for peer in ("pufferlib", "gym_sync"):
            quoted[f"process_2core {case} best vs {peer}"] = process_best(case, peer, root)
    return quoted


def _atari_panel(ax: Any, name: str, mode: str, title: str) -> None:
    from torchwm.benchmarks.atari.measure import AtariResult
    from torchwm.benchmarks.atari.report import _draw_panel

    fields = AtariResult.__dataclass_fields__
    _draw_panel(ax, [AtariResult(**{k: v for k, v in r.items() if k in fields}) for r in atari_rows(name, mode)])
    ax.set_title(f"{title}\n{SOURCES[name].label()}", fontsize=9)
    ax.set_ylabel("env steps/s (higher is better)")
    ax.grid(True, alpha=0.3)


def _process_panel(ax: Any, case: str) -> None:
    from torchwm.benchmarks.process.report import _panel

    report = load("process_2core")["process"]
    _panel(ax, [r for r in report["rows"] if r["case"] == case and r["steps_per_s"]], case, report)
    name = report["settings"]["cases"][case]
    ax.set_title(f"TorchVectorizedEnv, {name}, 32 envs\n{SOURCES['process_2core'].label()}", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)


def draw(path: Path) -> None:
    """Three Atari panels on top (2 cores sync; 16 cores sync and async), the process vectorizer's
    two cases below."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(16, 9.5))
    grid = fig.add_gridspec(2, 6)
    _atari_panel(fig.add_subplot(grid[0, 0:2]), "atari_2core", "sync", "AtariVectorEnv, Breakout, 2 cores, sync")
    _atari_panel(fig.add_subplot(grid[0, 2:4]), "atari_16core", "sync", "AtariVectorEnv, Breakout, 16 cores, sync")
    _atari_panel(
        fig.add_subplot(grid[0, 4:6]),
        "atari_16core",
        "async",
        "AtariVectorEnv, Breakout, 16 cores, async (half batches)",
    )
    _process_panel(fig.add_subplot(grid[1, 0:3]), "cartpole")
    _process_panel(fig.add_subplot(grid[1, 3:6]), "cartpole_numpy")
    fig.suptitle("torchwm against ale_py, EnvPool, PufferLib and gymnasium: env steps/s, random actions")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "headline.png")
    parser.add_argument("--figures-only", action="store_true", help="print the README's figures, draw nothing")
    args = parser.parse_args()
    for name, value in figures().items():
        print(f"{name}: {value}")
    if not args.figures_only:
        draw(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
