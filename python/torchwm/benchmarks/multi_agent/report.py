"""The multi-agent cases' summary lines, as ``torchwm bench --suite process`` prints them after the
single-agent cases: each backend's best, torchwm's ratio to the best other, the env's bounds, the final."""

from __future__ import annotations

from typing import Any

from torchwm.benchmarks.core.machine import cores
from torchwm.benchmarks.multi_agent.env_alone import ALONE
from torchwm.benchmarks.multi_agent.final import final_line

__all__ = ["summary_lines"]


def summary_lines(report: dict[str, Any]) -> list[str]:
    """Per case: each backend's best configuration, median rows/s (min..max) and CPU per row; the ratio
    (median, spread over rounds) against the target; the env's ceiling on this machine's cores."""
    lines = []
    for row in report["rows"]:
        if "skipped" in row:
            lines.append(f"multi-agent {row['case']}: skipped ({row['skipped']})")
            continue
        lines.append(f"multi-agent {row['case']} (best of {', '.join(row['configs'])}), rows/s:")
        lines += [f"  {b:9s} {_best_text(v)}" for b, v in [*row["backends"].items(), (ALONE, row[ALONE])]]
        if row["backends"]["torchwm"].get("workers_envs") != row["torchwm_sync"].get("workers_envs") and row.get(
            "sync_ratio_vs_best_other"
        ):
            sync = row["torchwm_sync"]
            lines.append(
                f"  torchwm in sync mode: {_best_text(sync)}, {row['sync_ratio_vs_best_other']:.2f}x the best other"
            )
        lines.append(f"  {_verdict(row, report['target'])}")
        if row.get("final"):
            lines.append(f"  {final_line(row['final'], report['target'])}")
    return lines


def _best_text(best: dict[str, Any]) -> str:
    if "median" not in best:
        return f"skipped ({best.get('skipped')})"
    cpu = "" if best["cpu_ms_per_row"] is None else f", {best['cpu_ms_per_row']:.3f} ms CPU/row"
    return f"{best['median']:>9,.0f} ({best['min']:,.0f}..{best['max']:,.0f}) at {best['workers_envs']}{cpu}"


def _verdict(row: dict[str, Any], target: float) -> str:
    ratio, rounds = row["ratio_vs_best_other"], row["ratio_rounds"]
    text = "torchwm / best other n/a"
    if ratio is not None:
        # With a final, its pairs judge the target (the next line); the grid's rounds only pick the contenders.
        met = "" if row.get("final") else f", target {target}x {'met' if row['target_met'] else 'not met'}"
        text = f"torchwm / best other {ratio:.2f}x (rounds {min(rounds):.2f}..{max(rounds):.2f}){met}"
    ceiling, cpu, alone = row["ceiling_vs_best_other"], row["cpu_bound_vs_best_other"], row["alone_vs_best_other"]
    bound = f" = {ceiling:.2f}x the best other" if ceiling else ""
    bound += f"; its CPU/row over the env's: {cpu:.2f}x" if cpu else ""
    bound += f"; {ALONE} over it: {alone:.2f}x" if alone else ""
    return (
        f"{text}; env alone {row['env_ms_per_row']:.3f} ms CPU/row: ceiling {row['ceiling_rows_per_s']:,.0f} "
        f"rows/s on {cores()} cores{bound}"
    )
