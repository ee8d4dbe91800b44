"""DeFedAvg on P4, interpolating least squares: a negative control of linear speedup (spec §6 P4).

Every F_i vanishes on the solution set, and the mini-batch oracle's noise is multiplicative: it
vanishes there too. So DeFedAvg converges geometrically with no noise floor, and the n^(-1/2) of
Theorems 1-2 (a variance term divided by n) has nothing to act on: the speedup in n saturates, as
for mini-batch SGD under interpolation. The package must say "not in the noise-dominated regime",
never report linear speedup; this claim is a FAIL by design, against T2.speedup_n on the same grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ratecheck.claims import Decision, ExpectedOrder, ExponentInBand, PointResult, Profile, Rule, SlopeClaim, Verdict
from ratecheck.inspection import constants_of
from ratecheck.model.fit import log_rate, mean_ci
from ratecheck.trace import RunConfig

from .claims import N_GRID, T2_SPEEDUP_N
from .theorems import KEY, THEOREM_2, src


@dataclass(frozen=True)
class NoiseDominated(Rule):
    """Linear speedup in n is shown only by noise-dominated runs: FAIL when a run's ``decay_measure`` still
    falls geometrically over the last half of the run (by more than ``efolds`` e-folds, with confidence: no
    noise floor, so no variance for n to divide), else the ``inner`` rule (the slope band) decides.

    Why one e-fold: a noise-dominated run sits at (or falls like a power of t towards) its floor,
    which changes ||grad F||^2 by far less than a factor e over [T/2, T]; only a contraction does."""

    inner: Rule = ExponentInBand()
    decay_measure: str = "grad_norm_sq"
    efolds: float = 1.0

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        rows, geometric, unsure = [], [], []
        for p in points:
            assert p.trace is not None  # the decay is read on the run itself
            marks = np.asarray(p.trace.checkpoints, dtype=float)
            window = marks >= marks[-1] / 2
            span = float(marks[-1] - marks[window][0])
            rates = log_rate(marks[window], p.trace.measures[self.decay_measure][window])
            ci = mean_ci(rates[np.isfinite(rates)], level=claim.level)
            rows.append({"value": p.value, "efolds_last_half": ci.mean * span, "low": ci.low * span,
                         "high": ci.high * span})
            if ci.high * span < -self.efolds:
                geometric.append(p.value)
            elif ci.low * span < -self.efolds:
                unsure.append(p.value)
        verdict, reason, evidence = self.inner(claim, points, estimate)
        evidence = {**evidence, "regime": {"measure": self.decay_measure, "efolds": self.efolds, "rows": rows}}
        if geometric:
            worst = max(rows, key=lambda r: r["high"])
            return (Verdict.FAIL, f"not in the noise-dominated regime: {self.decay_measure} still falls geometrically "
                    f"over the last half of the run (at least {-worst['high']:.2f} e-folds, 95% CI, at "
                    f"{claim.vary}={worst['value']:g}; {len(geometric)} of {len(rows)} points): no noise floor for n "
                    f"to divide, so no linear speedup is reported ({reason})", evidence)
        if unsure:
            return (Verdict.INCONCLUSIVE, f"regime undecided: the last-half decay's CI crosses {self.efolds:g} e-fold at "
                    f"{claim.vary}={', '.join(f'{v:g}' for v in unsure)} ({reason})", evidence)
        return verdict, reason, evidence


# A small P4 (N m = 32 < d = 64, B = 1 row per step) run by DeFedAvg-nIID (heterogeneous clients,
# sampled with replacement, so n goes past N as in T2.speedup_n's grid). Fixed steps: Theorem 2's
# schedule needs sigma^2 > 0 and P4 has no additive noise; etabar = 1/(2 L_max) keeps single-row
# steps stable. 400 rounds: ||grad F||^2 falls by about 2.8 e-folds over the last half at every n
# (measured), while M_T moves from n = 1 to 32 by a slope near -0.2 that flattens (saturation).

P4_PROBLEM = {"dim": 64, "clients": 16, "rows": 2, "batch": 1, "x0_scale": 1.0, "seed": 0}
P4_ROUNDS = {"quick": 400, "full": 1600}


def p4_config(n_clients: float, profile: Profile) -> RunConfig:
    draft = RunConfig("defedavg_niid", {}, "least_squares_interpolation", dict(P4_PROBLEM), rounds=1)
    params = {"eta_global": 1.0, "eta_local": 0.5 / constants_of(draft)["L_max"], "local_steps": 5,
              "participation": f"with_replacement:{int(n_clients)}", "delay": "constant:2", "duplicates": "shared"}
    return RunConfig("defedavg_niid", params, "least_squares_interpolation", dict(P4_PROBLEM),
                     rounds=P4_ROUNDS[profile.name], replicas=profile.replicas)


P4_NO_SPEEDUP = SlopeClaim(
    id="defedavg.P4.no_linear_speedup",
    paper=KEY,
    title="Negative control: no linear speedup is reported on interpolating least squares (P4)",
    statement="Under interpolation the mini-batch noise vanishes at the solution: DeFedAvg converges geometrically "
              "with no noise floor, and M_T does not fall like n^(-1/2).",
    source=src("Theorem 2 (variance term sigma^2/n); spec §6 P4"),
    vary="n",
    grid=N_GRID,
    configure=p4_config,
    measure="avg:grad_norm_sq",
    expected=ExpectedOrder(THEOREM_2, "n", "corrected", dominant_in="T"),
    tolerance=0.1,
    rule=NoiseDominated(),
    expect=Verdict.FAIL,
    negative_control=True,
    controls=T2_SPEEDUP_N,
    expect_reason="interpolation: the noise vanishes on the solution set, so the run is not noise-dominated (spec §6 "
                  "P4); the package must say so rather than report linear speedup",
)

CLAIMS = (P4_NO_SPEEDUP,)
