"""Text in and out of the command line: values as typed after --set, plain-text tables that fit a width."""

from __future__ import annotations

import json
import math
from typing import Any


def _parse_value(text: str) -> Any:
    """CLI values: JSON where it parses (numbers, true, null, lists), else the plain string.

    JSON's own words are true/false/null; Python's True/False/None are read the same way rather
    than as (truthy) strings. Non-finite numbers stay strings, so the declaration refuses them."""
    words = {"True": True, "False": False, "None": None}
    if text in words:
        return words[text]
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    if isinstance(value, float) and not math.isfinite(value):
        return text  # 1e999 parses to inf: keep what the user wrote, for the error message
    return value


def _elide(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with a visible ellipsis where it was cut."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "\u2026"


def _table(rows: list[list[str]], header: list[str], *, width: int | None = None, stretch: int = -1) -> str:
    """A plain-text table; with ``width``, column ``stretch`` (default the last) is elided with an
    ellipsis so that every line fits, and other columns are capped at a third of the width."""
    rows = [[" ".join(str(c).split()) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    if width is not None:
        stretch %= len(header)
        cap = max(width // 3, 8)
        widths = [min(w, cap) if i != stretch else w for i, w in enumerate(widths)]
        rest = width - sum(w for i, w in enumerate(widths) if i != stretch) - 2 * (len(header) - 1)
        widths[stretch] = max(min(widths[stretch], rest), 8)
    line = lambda r: "  ".join(_elide(c, w).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])
