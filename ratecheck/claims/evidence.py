"""Typed evidence records: what a statistic's decision rests on, written to the outcome's JSON by
``to_dict`` (the shape ``ratecheck check --json`` has always had) and read back by ``read`` (views and
paper reports read attributes, not nested dicts by string)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BandEvidence:
    """A fitted slope against the band of its expected exponent (SlopeClaim and its kinds)."""

    fit: Mapping[str, Any]  # SlopeFit.to_dict()
    expected_exponent: float
    expected_from: str
    tolerance: float
    side: str
    band: tuple[float, float]
    design_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fit": dict(self.fit), "expected_exponent": self.expected_exponent,
                               "expected_from": self.expected_from, "tolerance": self.tolerance, "side": self.side,
                               "band": list(self.band)}
        if self.design_reason:
            out["design_reason"] = self.design_reason
        return out

    @classmethod
    def read(cls, evidence: Mapping[str, Any]) -> BandEvidence | None:
        """The record in an outcome's evidence (None when the decision stopped before the fit)."""
        if "fit" not in evidence or "expected_exponent" not in evidence:
            return None
        band = evidence.get("band", [math.nan, math.nan])
        return cls(fit=evidence["fit"], expected_exponent=float(evidence["expected_exponent"]),
                   expected_from=str(evidence.get("expected_from", "")),
                   tolerance=float(evidence.get("tolerance", math.nan)), side=str(evidence.get("side", "")),
                   band=(float(band[0]), float(band[1])), design_reason=str(evidence.get("design_reason", "")))


@dataclass(frozen=True)
class DifferenceEvidence:
    """Two series' fitted slopes and the CI of their difference (ExponentComparisonClaim)."""

    labels: tuple[str, str]
    margin: float
    fits: Mapping[str, Mapping[str, Any]]  # label -> SlopeFit.to_dict()
    expected: Mapping[str, Mapping[str, Any]]  # label -> {"exponent", "from", "band"} when given
    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"labels": list(self.labels), "margin": self.margin}
        for label in self.labels:
            out[f"fit_{label}"] = dict(self.fits[label])
            if label in self.expected:
                out[f"expected_{label}"] = dict(self.expected[label])
        out["difference"] = {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}
        return out

    @classmethod
    def read(cls, evidence: Mapping[str, Any]) -> DifferenceEvidence | None:
        diff = evidence.get("difference")
        if not diff:
            return None
        labels = tuple(evidence.get("labels", ("A", "B")))
        return cls(labels=labels, margin=float(evidence.get("margin", 0.0)),
                   fits={lab: evidence[f"fit_{lab}"] for lab in labels if f"fit_{lab}" in evidence},
                   expected={lab: evidence[f"expected_{lab}"] for lab in labels if f"expected_{lab}" in evidence},
                   value=float(diff["value"]), ci_low=float(diff["ci_low"]), ci_high=float(diff["ci_high"]))
