"""The plain-text tables the reports print: columns padded to their widest cell."""

from __future__ import annotations

from typing import Any

__all__ = ["format_table"]


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """``columns`` of ``rows`` under a header and a rule; a row without a column leaves it blank."""
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(columns, widths)) for r in rows]
    return "\n".join(lines)
