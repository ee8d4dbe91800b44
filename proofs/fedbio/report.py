"""The FedBiO report page: Table 1 next to the derived and measured exponents, errata with the runs
that confirm them, and figures drawn from the claims' runs (placeholder, filled below)."""

from __future__ import annotations

from typing import Sequence

from ratecheck.claims import Outcome


def report_sections(outcomes: Sequence[Outcome]) -> list[tuple[str, str]]:
    return []


def report_figures(outcomes: Sequence[Outcome]):
    return []
