"""``torchwm bench``'s Atari suite: which points to measure, and the table, plot and JSON it makes.

Three shapes of run, all measured side by side with the backends interleaved (``measure``):
- the default sweep: every ``--game`` x ``--num-envs`` x backend, sync, with ``--policy`` between steps,
  plus torchwm's async overlap (sync against half batches, a ``--policy-ms`` sleep between);
- ``--scaling``: num_envs (16..256) x mode (sync; async with half batches) x policy (none, a 1 ms
  sleep, a CPU MLP) x backends, threads = cores, on Breakout and Pong by default;
- a single point (one game, one num_envs) is plotted as bars, a sweep as lines; ratios are labelled.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from torchwm.benchmarks.atari.measure import AtariResult, Point, measure_points, sweep_points
from torchwm.benchmarks.atari.summary import point_label, summarize
from torchwm.benchmarks.core.table import format_table

SCALING_ENVS = [16, 32, 64, 128, 256]
SCALING_GAMES = ["breakout", "pong"]
SCALING_POLICIES = ["none", "sleep", "cpu"]


def default_points(
    games: list[str], num_envs: list[int], backends: list[str], policy: str, policy_ms: float
) -> list[Point]:
    points = sweep_points(games, num_envs, backends, policy)
    if policy_ms > 0:
        overlap_envs = 8 if 8 in num_envs else max(num_envs)
        for game in games:
            points += [Point(game, "torchwm", overlap_envs, size, "sleep") for size in (0, overlap_envs // 2)]
    return list(dict.fromkeys(points))


def scaling_points(games: list[str], num_envs: list[int], backends: list[str]) -> list[Point]:
    return [
        Point(game, backend, n, batch, policy)
        for game in games
        for n in num_envs
        for batch in (0, n // 2)
        for policy in SCALING_POLICIES
        for backend in backends
        if not (backend.startswith("gym_") and batch)
    ]


def table_rows(results: list[AtariResult], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per point, with torchwm's speed-up over that backend at the same point (``summarize``'s)."""
    rows = []
    for r in results:
        speedups = summary["games"][r.game]["torchwm_speedup"].get(point_label(r), {})
        row = r.to_dict()
        row["torchwm_x"] = f"{speedups[r.backend]:.2f}" if r.backend in speedups else ""
        row["steps_per_s"] = round(r.steps_per_s)
        row["frames_per_s"] = round(r.frames_per_s)
        rows.append(row)
    return rows


def _panels(results: list[AtariResult]) -> dict[tuple[str, str, str], list[AtariResult]]:
    panels: dict[tuple[str, str, str], list[AtariResult]] = {}
    for r in results:
        panels.setdefault((r.game, "sync" if r.mode == "sync" else "async", r.policy), []).append(r)
    return panels


def _draw_panel(ax: Any, results: list[AtariResult]) -> None:
    backends = sorted({r.backend for r in results}, key=lambda b: (b != "torchwm", b))
    env_counts = sorted({r.num_envs for r in results})
    rate = {(r.backend, r.num_envs): r.steps_per_s for r in results}
    if len(env_counts) == 1:  # a single point: bars, labelled with torchwm's speed-up
        ours = rate.get(("torchwm", env_counts[0]))
        values = [rate[(b, env_counts[0])] for b in backends]
        bars = ax.bar(backends, values, color=[f"C{i}" for i in range(len(backends))])
        labels = [
            f"{v:,.0f}" + (f"\n(torchwm {ours / v:.2f}x)" if ours and b != "torchwm" else "")
            for b, v in zip(backends, values)
        ]
        ax.bar_label(bars, labels, fontsize=8)
        ax.set_xlabel(f"{env_counts[0]} envs")
        return
    for i, backend in enumerate(backends):
        xs = [n for n in env_counts if (backend, n) in rate]
        ax.plot(xs, [rate[(backend, n)] for n in xs], marker="o", color=f"C{i}", label=backend)
        if backend != "torchwm":
            for n in xs:
                if ("torchwm", n) in rate:
                    ax.annotate(
                        f"{rate[('torchwm', n)] / rate[(backend, n)]:.2f}x",
                        (n, rate[(backend, n)]),
                        textcoords="offset points",
                        xytext=(0, -12),
                        ha="center",
                        fontsize=7,
                        color=f"C{i}",
                    )
    ax.set_xscale("log", base=2)
    ax.set_xticks(env_counts, [str(n) for n in env_counts])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("num_envs (labels: torchwm's speed-up)")
    ax.legend(fontsize=8)


def plot(results: list[AtariResult], path: Path, cores: int) -> bool:
    """One panel per game x mode x policy; returns False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'torchwm[bench]')", file=sys.stderr)
        return False
    panels = _panels(results)
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for ax, ((game, mode, policy), panel) in zip(axes.flat, sorted(panels.items())):
        _draw_panel(ax, panel)
        ax.set_title(f"{game}, {mode}, {policy}", fontsize=10)
        ax.set_ylabel("env steps / s")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(f"Atari env steps/s on {cores} cores (higher is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run(args: Any, backends: list[str], progress: Any, out_dir: Path) -> dict[str, Any]:
    """Measures, prints the table and each game's efficiency, plots; returns the JSON report's part."""
    games = args.game
    if args.scaling:
        points = scaling_points(games, args.num_envs, backends)
    else:
        points = default_points(games, args.num_envs, backends, args.policy, args.policy_ms)
    progress.total = len(points) * args.repeats
    results, raw_fps = measure_points(
        points, args.seconds, args.policy_ms, args.repeats, progress, with_stock_ale="ale_py" in backends
    )
    summary = summarize(results, raw_fps)
    rows = table_rows(results, summary)
    print()
    print(format_table(rows, ["game", "backend", "mode", "policy", "num_envs", "steps_per_s", "torchwm_x"]))
    print(f"\ncores: {summary['cores']}")
    for game, emulators in raw_fps.items():
        for emulator, fps in emulators.items():
            label = {"torchwm": "torchwm's ALE build", "ale_py": "stock ALE (ale_py)"}[emulator]
            print(f"{game}: raw single-thread {label}: {fps:,.0f} frames/s")
            for point, eff in summary["games"][game]["torchwm_frames_vs_cores_x_raw"][emulator].items():
                print(f"  torchwm {point}: frames/s = {eff:.2f} x (cores x that)")
    path = out_dir / ("atari_scaling.png" if args.scaling else "atari_throughput.png")
    if plot(results, path, summary["cores"]):
        print(f"plot: {path}")
    return {"results": rows, "summary": summary}
