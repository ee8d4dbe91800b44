"""The verdict model: verdicts, profiles, what a claim measured at a grid point (PointResult), and
what a verdict's evidence says about exactness."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np
import sympy as sp

from ..theory import Evaluation
from ..trace import RunConfig, Trace


class Verdict(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    OBSERVED = "OBSERVED"  # an Observation: a number reported with no verdict
    ERROR = "ERROR"  # issue #23: a run or search the claim needs failed (never expected)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Profile:
    """How much work a check may do: 'quick' for CI and the default command, 'full' for the report."""

    name: str
    replicas: int
    scale: float = 1.0  # multiplies round counts where a claim allows it
    seed_offset: int = 0  # added to every Monte-Carlo run's and search's seed when it runs (check --seed-offset)


PROFILES = {"quick": Profile("quick", replicas=16), "full": Profile("full", replicas=48, scale=4.0)}


@dataclass
class PointResult:
    """One grid point: the measured samples and, when the claim has a theorem, its evaluation."""

    value: float
    config: RunConfig
    samples: np.ndarray  # finite per-replica values of the claim's measure
    diverged: int
    evaluation: Evaluation | None = None
    stats: dict[str, Any] = field(default_factory=dict)  # claim-specific summaries
    first_divergence: int | None = None  # earliest round at which a replica diverged
    trace: Trace | None = field(default=None, repr=False)  # the run itself, for paper-specific figures
    # what the claim's plan fetched beside the run for its reading (a stored recursion, the grid value's other
    # runs by role); never written to the outcome's JSON
    inputs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def exact(self) -> bool:
        """Issue #8: the samples are exact expectations (an exact-mode run), not replica draws."""
        return self.trace is not None and self.trace.exact

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "exact": self.exact,
            "mean": float(np.mean(self.samples)) if self.samples.size else None,
            "replicas_used": int(self.samples.size),
            "diverged": self.diverged,
            "first_divergence": self.first_divergence,
            "config_key": self.config.key(),
        }
        if self.evaluation is not None:
            out["theory"] = self.evaluation.to_dict()
        out.update(self.stats)
        return _jsonable(out)  # a diverged point's NaN mean is the string "nan": the JSON stays strict


Bindings = Callable[[RunConfig, Trace], Mapping[str, float]]


def _first_divergence(trace: Trace) -> int | None:
    rounds = trace.diverged_round[trace.diverged_round >= 0]
    return int(rounds.min()) if rounds.size else None


def _fmt(value: float) -> str:
    return f"{value:g}"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return _jsonable(obj.item())
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, sp.Basic):
        return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def _num(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def exact_state(points: Sequence[PointResult]) -> bool | str:
    """True when every point is exact, False when none is, "partial" otherwise (an auto fallback)."""
    flags = [p.exact for p in points]
    if flags and all(flags):
        return True
    return "partial" if any(flags) else False


def exact_evidence(points: Sequence[PointResult]) -> dict[str, Any]:
    """What a verdict's evidence says about exactness: the state and any auto fallback's reason."""
    out: dict[str, Any] = {"exact": exact_state(points)}
    fallbacks = sorted({str(p.trace.info["exact_fallback"]) for p in points
                        if p.trace is not None and "exact_fallback" in p.trace.info})
    if fallbacks:
        out["exact_fallback"] = fallbacks
    return out
