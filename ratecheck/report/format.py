"""Formatting helpers shared by the report's plots and pages: numbers, anchors, verdict badges."""

from __future__ import annotations

import math
import re
from typing import Any

from ..claims import Outcome, Verdict
from ..claims.views import pct, point_mean_ci, replicas_identical, value_text
from . import counts
from .document import Inline, Span

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


# references a reviewer cannot decode: the implementation spec's sections, pitfalls, inconsistency items
# (I7) and test problems (P4). The report keeps the text readable and lists them in the raw-references block.
_SPEC_REF = re.compile(r"spec\s+(?:pitfall\s+\d+|§\d+(?:\.\d+)*(?:'s)?(?:\s+item\s+\d+|\s+[PS]\d+(?:-[a-z])?)?)")
_LABEL = re.compile(r"\b[IP]\d+(?:-[a-z])?\b")
_BARE_ITEM = re.compile(r"\s*\bI\d+\b(?=\s*[:,.])")
_GROUP = re.compile(r"(\s*)\(([^()]*)\)")


def plain(text: str) -> tuple[str, list[str]]:
    """``text`` without the spec's internal references, and the references removed: a parenthesis that
    holds only references goes, one that also says something keeps what it says; a bare "spec §6.3"
    becomes "the implementation spec §6.3"."""
    refs: list[str] = []

    def group(m: re.Match) -> str:
        inner = m.group(2)
        if not (_SPEC_REF.search(inner) or _LABEL.search(inner)):
            return m.group(0)
        refs.extend(r.group(0) for r in _SPEC_REF.finditer(inner))
        inner = _SPEC_REF.sub("", inner)
        refs.extend(_LABEL.findall(inner))
        inner = re.sub(r"\s*,(\s*,)+", ",", _LABEL.sub("", inner)).strip(" ,;:")
        return f"{m.group(1)}({inner})" if inner else ""

    def bare(m: re.Match) -> str:
        refs.append(m.group(0))
        return "the implementation spec" + m.group(0)[len("spec"):]

    text = _GROUP.sub(group, str(text))
    text = re.sub(r"(?<!implementation )" + _SPEC_REF.pattern, bare, text)
    refs.extend(r.strip() for r in _BARE_ITEM.findall(text))
    return _BARE_ITEM.sub("", text), refs


def _one_line(text: str, limit: int = REASON_CHARS) -> str:
    text = " ".join(plain(text)[0].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _verdict(v: Verdict | str, ok: bool | None = None) -> Span:
    """A verdict cell. ``ok`` given (a measured verdict): an expected FAIL is not painted as a failure."""
    v = str(v)
    if ok is None:  # an expectation: neutral
        return Span(v, cls="v-neutral")
    if ok and v == "FAIL":
        return Span(v, cls="v-fail-expected")
    return Span(v, cls=f"v-{v.lower()}")


BADGES = {  # category (ratecheck.report.counts) -> what the reader sees, and its colour
    counts.UNEXPECTED: ("UNEXPECTED", "v-unexpected"),
    counts.ERRATUM: ("erratum confirmed", "v-erratum"),
    counts.CONTROL: ("negative control (fails as designed)", "v-control"),
    counts.PASS: ("pass", "v-pass"),
    counts.OBSERVATION: ("observation (no verdict)", "v-observed"),
    counts.TWIN: ("Monte-Carlo check (reuses the exact runs)", "v-observed"),
}


def _badge(category: str) -> Span:
    text, cls = BADGES[category]
    return Span(text, bold=category == counts.UNEXPECTED, cls=cls)


def _status(o: Outcome, category: str | None = None) -> Span:
    return _badge(category or counts.category(o))


def legend() -> list[Inline]:
    """The colour legend of the verdict tables."""
    return [[_badge(c), f" - {meaning}"] for c, meaning in (
        (counts.UNEXPECTED, "the verdict differs from the expected one: look here first"),
        (counts.ERRATUM, "the paper's statement fails, as its erratum predicts"),
        (counts.CONTROL, "the algorithm fails where it must (a check that the test can fail), not a paper error"),
        (counts.PASS, "the paper's statement holds on the runs"),
        (counts.OBSERVATION, "a number reported with no verdict"),
    )]


_SPEC = re.compile(r"\s*\((?:spec|see spec)\b[^()]*(?:\([^()]*\)[^()]*)*\)|[;,]\s*spec\b[^;]*", re.I)


def readable_source(source: Any, title: str = "") -> str:
    """'DeFedAvg, arXiv:2402.11198v1, Theorem 1': the paper's short name and identifier, the place in it,
    without the seed file's name or the implementation spec's sections (shown apart, in a details block)."""
    paper = str(getattr(source, "paper", source))
    inside = re.match(r"^\S+\.txt\s*\((.*)\)\s*$", paper)
    ident = inside.group(1) if inside else paper
    short = re.split(r"[:(]", title, maxsplit=1)[0].strip() if title else ""
    if short and short.split()[0].split("/")[0] not in ident:
        ident = f"{short}, {ident}"
    where = _SPEC.sub("", str(getattr(source, "where", ""))).strip(" ;,")
    return f"{ident}, {where}" if where else ident


# the claims' display pieces and the pages format grid points alike
_deterministic = replicas_identical
_mean_ci = point_mean_ci
_pct = pct
