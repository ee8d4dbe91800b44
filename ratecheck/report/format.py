"""Formatting helpers shared by the report's plots and pages: numbers, anchors, verdict badges."""

from __future__ import annotations

import math
import re
from typing import Any

from ..claims import Outcome, Verdict
from ..claims.views import pct, point_mean_ci, replicas_identical, value_text
from .document import Span

REASON_CHARS = 220  # the verdict table shows one line; the claim section has the full reason


# ---------------------------------------------------------------------------------------------
# Formatting helpers


def _g(x: Any) -> str:
    """A number with 3 significant digits; non-finite values and None spelled out."""
    if x is None:
        return "-"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.3g}"


_value = value_text


def _safe(name: str) -> str:
    """A file name from an id: dots (and anything else unsafe) become underscores."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _anchor(prefix: str, name: str) -> str:
    return f"{prefix}-{_safe(name)}"


def _one_line(text: str, limit: int = REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _verdict(v: Verdict | str, ok: bool | None = None) -> Span:
    """A verdict cell. ``ok`` given (a measured verdict): an expected FAIL is not painted as a failure."""
    v = str(v)
    if ok is None:  # an expectation: neutral
        return Span(v, cls="v-neutral")
    if ok and v == "FAIL":
        return Span(v, cls="v-fail-expected")
    return Span(v, cls=f"v-{v.lower()}")


def _status(o: Outcome) -> Span:
    if not o.ok:
        return Span("UNEXPECTED", bold=True, cls="unexpected")
    if o.observation:
        return Span("observation (no verdict)")
    if o.erratum:
        return Span("OK (erratum confirmed)")
    # an expected FAIL of the algorithm itself is no erratum of the paper: say which it is
    if o.verdict == Verdict.FAIL and getattr(o.claim, "negative_control", False):
        return Span("OK (negative control)")
    return Span("OK")


# the claims' display pieces and the pages format grid points alike
_deterministic = replicas_identical
_mean_ci = point_mean_ci
_pct = pct
