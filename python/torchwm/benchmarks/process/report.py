"""``torchwm bench --suite process``'s table, summary lines and plot (``process_bench.png``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchwm.benchmarks.core.table import format_table
from torchwm.benchmarks.multi_agent.report import summary_lines as multi_agent_lines

TABLE_COLUMNS = [
    "case",
    "backend",
    "mode",
    "workers_envs",
    "batch_size",
    "steps_per_s",
    "min..max",  # over the rounds the row was measured in ("n" of them)
    "n",
    "wall_us",  # per batch
    "parent_cpu_us",  # per batch: the caller's CPU, its policy left out
    "workers_cpu_us",  # per batch: all workers together
    "vs_pufferlib",
    "skipped",
]
ASYNC_COLUMN = "vs_pufferlib_async"  # shown where the opt-in pufferlib_async backend was measured
# Bars, in this order, per workers x envs group; gymnasium's are lines across the panel.
BARS = [
    ("torchwm", "sync"),
    ("torchwm", "pool"),
    ("pufferlib", "sync"),
    ("pufferlib", "pool"),
    ("pufferlib_async", "pool"),
]
COLORS = {
    "torchwm": "tab:blue",
    "pufferlib": "tab:orange",
    "pufferlib_async": "tab:brown",
    "gym_sync": "tab:green",
    "gym_async": "tab:red",
}


def table(report: dict[str, Any]) -> str:
    """Every row, skipped ones with their reason (once per backend and reason)."""
    if not report["rows"]:  # only multi-agent cases were asked for: their lines are in the summary
        return "(no single-agent case measured)"
    seen: set[tuple[str, str]] = set()
    rows = []
    for row in report["rows"]:
        if row.get("skipped"):
            key = (row["backend"], row["skipped"])
            if key in seen:
                continue
            seen.add(key)
            row = {**row, "workers_envs": "(all)" if row["backend"].startswith("pufferlib") else row["workers_envs"]}
        rows.append({k: "" if v is None else v for k, v in {**row, **_range(row)}.items()})
    columns = list(TABLE_COLUMNS)
    if any(ASYNC_COLUMN in row for row in rows):
        columns.insert(columns.index("vs_pufferlib") + 1, ASYNC_COLUMN)
    return format_table(rows, columns)


def _range(row: dict[str, Any]) -> dict[str, Any]:
    """The table's ``min..max`` and ``n`` (rounds measured) of a row."""
    if row.get("min_steps_per_s") is None:
        return {}
    measured = sum(x is not None for x in row.get("rounds", []))
    return {"min..max": f"{row['min_steps_per_s']:,}..{row['max_steps_per_s']:,}", "n": measured}


INDENT = " " * 18  # under the backend's name


def _cost(best: dict[str, Any]) -> list[str]:
    """A best row's per-batch wall and CPU time, where measured."""
    if best.get("wall_us") is None:
        return []
    workers = best.get("workers_cpu_us")
    workers_text = f"workers {workers:,.0f} us" if workers is not None else "no workers (envs in the caller)"
    # All processes' CPU per env step: steadier than steps/s on a busy machine, comparable across backends.
    per_step = (best["parent_cpu_us"] + (workers or 0.0)) / best["batch_size"]
    return [
        f"{INDENT}per batch: wall {best['wall_us']:,.0f} us; CPU: caller {best['parent_cpu_us']:,.0f} us,"
        f" {workers_text}; {per_step:.1f} us of CPU per env step in all"
    ]


def _ratio_text(ratio: float | None, spread: dict[str, Any] | None) -> list[str]:
    """torchwm's best over a peer's: the per-round ratio's median, its interval and spread, its range."""
    if ratio is None:
        return []
    if not spread or spread.get("spread") is None:
        return [f"{INDENT}torchwm best = {ratio:.2f}x (one round: spread not measured)"]
    return [
        f"{INDENT}torchwm best = {ratio:.2f}x (median of {spread['rounds']} per-round ratios; its 90% interval"
        f" {spread['low']:.2f}..{spread['high']:.2f}, spread {spread['spread']:.1%}; rounds {spread['min']:.2f}..{spread['max']:.2f})"
    ]


def rounds_lines(report: dict[str, Any]) -> list[str]:
    """How many rounds ran and why they stopped: every ratio settled, or the cap (and which did not)."""
    r = report.get("rounds")
    if not r:
        return []
    head = f"rounds: {r['run']} (at least {r['least']}, at most {r['most']})"
    if r["most"] == 1:
        return [f"{head}: spreads not measured"]
    if not r["cap_hit"]:
        return [
            f"{head}: every ratio of torchwm's best to another backend's spreads by less than {r['ratio_spread']:.0%}"
        ]
    return [
        f"{head}: CAP HIT: these ratios still spread by {r['ratio_spread']:.0%} or more (or were measured once):",
        *(f"  {what}" for what in r["unsettled"]),
    ]


def summary_lines(report: dict[str, Any]) -> list[str]:
    """Per case: each backend's best and torchwm's ratio to it; then the targets, met or not."""
    lines = []
    for case, s in report["summary"].items():
        ms = report.get("env_ms_per_step", {}).get(case)
        cost = f" (one env alone: {ms:.3f} ms of CPU per step)" if ms is not None else ""
        lines.append(f"{case}{cost}:")
        for backend, best in s["best"].items():
            versus = _ratio_text(s["torchwm_best_x"].get(backend), s.get("torchwm_best_ratio", {}).get(backend))
            span = (
                f" (rounds {best['min_steps_per_s']:,}..{best['max_steps_per_s']:,})"
                if "min_steps_per_s" in best
                else ""
            )
            lines.append(
                f"  {backend:15s} best {best['steps_per_s']:>9,} steps/s at {best['workers_envs']} {best['mode']}{span}"
            )
            lines += _cost(best) + versus
    lines += rounds_lines(report)
    if report.get("targets"):
        lines.append("targets:")
        for t in report["targets"]:
            lines.append(
                f"  {'met    ' if t['met'] else 'NOT met'} {t['target']} = {t['ratio']:.2f}x (goal {t['goal']}x)"
            )
    if report.get("multi_agent"):
        lines += multi_agent_lines(report["multi_agent"])
    return lines


def plot(report: dict[str, Any], path: Path) -> Path | None:
    """One panel per case: bars per workers x envs (torchwm and PufferLib, sync and pool), gymnasium's
    Sync and Async as lines. None where matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if not report["rows"]:
        return None
    rows = [r for r in report["rows"] if r["steps_per_s"]]
    cases = list(dict.fromkeys(r["case"] for r in report["rows"]))
    fig, axes = plt.subplots(1, len(cases), figsize=(6.5 * len(cases), 4.5), squeeze=False)
    for ax, case in zip(axes[0], cases):
        _panel(ax, [r for r in rows if r["case"] == case], case, report)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _span(row: dict[str, Any]) -> tuple[float, float]:
    """How far below and above its median a row's rounds went (0, 0 where not recorded)."""
    if row.get("min_steps_per_s") is None:
        return 0.0, 0.0
    return row["steps_per_s"] - row["min_steps_per_s"], row["max_steps_per_s"] - row["steps_per_s"]


def _panel(ax: Any, rows: list[dict[str, Any]], case: str, report: dict[str, Any]) -> None:
    groups = list(dict.fromkeys(r["workers_envs"] for r in rows if not r["backend"].startswith("gym_")))
    rate = {(r["backend"], r["mode"], r["workers_envs"]): r["steps_per_s"] for r in rows}
    span = {(r["backend"], r["mode"], r["workers_envs"]): _span(r) for r in rows}
    versus = {(r["mode"], r["workers_envs"]): r["vs_pufferlib"] for r in rows if r.get("vs_pufferlib")}
    bars = [b for b in BARS if any((b[0], b[1], g) in rate for g in groups)]
    width = 0.8 / max(1, len(bars))
    for i, (backend, mode) in enumerate(bars):
        xs = [g + (i - (len(bars) - 1) / 2) * width for g in range(len(groups))]
        heights = [rate.get((backend, mode, g), 0) for g in groups]
        spans = [span.get((backend, mode, g), (0, 0)) for g in groups]
        ax.bar(
            xs,
            heights,
            width,
            yerr=[[low for low, _ in spans], [high for _, high in spans]],  # min..max over the rounds
            capsize=2,
            label=f"{backend} {mode}",
            color=COLORS[backend],
            alpha=1.0 if mode == "sync" else 0.55,
            hatch="" if mode == "sync" else "//",
        )
        if backend == "torchwm":  # its rate over PufferLib's at the same shape and mode
            for x, height, g in zip(xs, heights, groups):
                if (mode, g) in versus:
                    ax.annotate(f"{versus[(mode, g)]:.2f}x", (x, height), ha="center", va="bottom", fontsize=7)
    for r in rows:
        if r["backend"].startswith("gym_"):
            style = "--" if r["backend"] == "gym_sync" else ":"
            ax.axhline(r["steps_per_s"], color=COLORS[r["backend"]], linestyle=style, label=r["backend"])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_xlabel("workers x envs per worker (pool: half the envs per batch)")
    ax.set_ylabel("env steps/s (median over rounds; bars: min..max)")
    settings = report.get("settings", {})
    policy = f", caller {settings['policy']} {settings['policy_ms']:g} ms/batch" if settings.get("policy_ms") else ""
    ax.set_title(f"{settings.get('cases', {}).get(case, case)}{policy}", fontsize=10)
    ax.legend(fontsize=8)
