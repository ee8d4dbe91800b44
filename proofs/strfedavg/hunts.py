"""Registered hunts (issue #13): counterexample searches for Theorem 1's upper bound on f - f*.

Erratum I10 (spec §4.4, §4.10): Theorem 1 states 0 < b < a <= 1, but its proof bounds the
initialization term with (1 - eta mu_f gamma_tilde/2)^R <= R^(-p/2), which needs a + b <= 1 (and
mu_f R >= 1 when a + b < 1). With a + b > 1 the theta-weighted output keeps a fixed fraction of the
start's null-space offset, and f - f* exceeds the bound however large R is. The search space: TP1
instances of the least-squares family (ratecheck.problems.least_squares.strategy: n <= 6, mu_f <= 1, a start
x0 of any size), the exponents a, b = b_fraction a, p, K local steps, full participation, no noise
(the erratum is about the initialization term; replicas then coincide, so each probe is exact up to
rounding and costs one run), and a horizon R = ceil(h R_min), h in [1, 2], R_min the smallest horizon
at which every condition of the searched theorem holds.

* over Theorem 1's printed range (THEOREM_1_PRINTED: every condition but I10's two) the corrected
  bound f_up_corrected breaks: a confirmed erratum, expected FAIL with the shrunk counterexample;
* over the range the proof needs (THEOREM_1, I10's conditions included) a search aimed at its edge
  a + b = 1 with a far start (f - f* > 0 there, up to ~1/24 of f_up) finds none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ratecheck.claims import Verdict
from ratecheck.params import ParamError
from ratecheck.problems.least_squares import strategy as least_squares_strategy
from ratecheck.runner.hunt import HuntSpace, NoCounterexample, smallest_admissible
from ratecheck.theory import Theorem
from ratecheck.trace import RunConfig

from .claims import KEY, theorem1_bindings, theorem1_constants
from .theorems import THEOREM_1, THEOREM_1_PRINTED, src

R_CAP = 800  # the search's largest horizon: beyond it an instance is skipped (no run), not refuted
PROBE_REPLICAS = 2  # noise-free runs: the replicas coincide (the hunt's rule needs two to read a CI)
# the horizon-dependent symbols only the bounds read: any value while the conditions decide admissibility
_BOUND_ONLY = {"G2": 0.0, "Q": 0.0}


def _strategy():
    from hypothesis import strategies as st

    # aimed at the admissible region: Theorem 1's R-conditions exceed R_CAP for mu_f near 1 (the
    # (32 sqrt(1 + B^2) p L_f / ...)^(4/(a+2b)) threshold), for L_h = N lam_max above ~0.3, and for a + 2b small
    return st.fixed_dictionaries({
        "problem": least_squares_strategy(mu=st.floats(0.01, 0.3), lam_max=st.floats(0.001, 0.1)),
        "a": st.floats(0.5, 1.0),
        "b_fraction": st.floats(0.3, 0.95),
        "p": st.floats(1.0, 2.0),
        "K": st.integers(1, 2),
        "horizon": st.floats(1.0, 2.0),
    })


def _proof_range_strategy():
    """The proof-range search aimed where f_up can bind: a + b = 1 exactly (the proof's
    (1 - eta mu_f gamma_tilde/2)^R <= R^(-p/2) is then an equality up to O(ln^2 R/R), not the loose
    exp(-(mu_f R)^(1-a-b)) of a + b < 1), no outer centre (c_scale = 0: a smaller eta-bias, whose negative
    f(x*_eta) - f* otherwise hides the start's term) and a start far out (x0_scale 5-10), whose null-space
    offset makes f - f* = (mu_f/2)||offset||^2 > 0 in the theta-weighted output. Measured (60 draws):
    21 admissible against 8 of 233 for the printed-range space, f - f* positive on some, up to ~0.04 of
    f_up_corrected."""
    from hypothesis import strategies as st

    return st.fixed_dictionaries({
        "problem": least_squares_strategy(mu=st.floats(0.01, 0.3), lam_max=st.floats(0.001, 0.1),
                                          x0_scale=st.floats(5.0, 10.0), c_scale=st.just(0.0)),
        "a": st.floats(0.52, 0.76),  # b = 1 - a in (0.24, 0.48): b < a, as Theorem 1 needs
        "b_fraction": st.just(None),  # None: b = 1 - a
        "p": st.floats(1.0, 2.0),
        "K": st.integers(1, 2),
        "horizon": st.floats(1.0, 2.0),
    })


def _b(instance: Mapping[str, Any]) -> float:
    a, fraction = float(instance["a"]), instance["b_fraction"]
    return 1.0 - a if fraction is None else a * float(fraction)


def _run(instance: Mapping[str, Any], rounds: int, replicas: int) -> RunConfig:
    a = float(instance["a"])
    params = {"horizon": rounds, "schedule": "strongly_convex", "a": a, "b": _b(instance),
              "p": float(instance["p"]), "local_steps": int(instance["K"]), "participation": "full",
              "gamma_g": 1.0, "exponents": "printed"}
    return RunConfig("strfedavg", params, "least_squares", dict(instance["problem"]), rounds=rounds,
                     replicas=replicas)


def _configure_for(theorem: Theorem):
    def configure(instance: Mapping[str, Any], replicas: int) -> RunConfig | None:
        config = _run(instance, 2, PROBE_REPLICAS)
        # the conditions read the horizon-free symbols (the claims' own), the bounds' other symbols any value
        values = {**theorem1_constants(config), **_BOUND_ONLY}
        if not theorem.evaluate({**values, "R": R_CAP}, use_schedule=False).all_hold:
            return None  # one evaluation rejects most draws (conditions only get easier as R grows)
        r_min = smallest_admissible(theorem, values, "R", low=2, high=R_CAP, use_schedule=False)
        if r_min is None:
            return None
        rounds = int(math.ceil(r_min * float(instance["horizon"])))
        if rounds > R_CAP:
            return None
        try:
            config = _run(instance, rounds, PROBE_REPLICAS)
            theorem1_bindings(config)  # the schedule at this horizon must exist (theta finite)
        except ParamError:
            return None
        return config

    return configure


def _space(theorem: Theorem, note: str, strategy=_strategy) -> HuntSpace:
    return HuntSpace(theorem=theorem, strategy=strategy, configure=_configure_for(theorem),
                     bindings=theorem1_bindings, source=src("Theorem 1 (i-1), explicit form", "spec §4.4, I10"),
                     note=note)


THEOREM_1_PRINTED_SPACE = _space(THEOREM_1_PRINTED, "TP1 least squares, 0 < b < a <= 1 as printed, R >= R_min")
THEOREM_1_SPACE = _space(THEOREM_1, "TP1 least squares, a + b = 1 (the edge of the proof's range, where its "
                         "initialization term is tight), c = 0, a far start, R >= R_min", _proof_range_strategy)

# quick: 8 instances; the printed-range search finds its counterexample at the second, then shrinks it
_HUNT: dict[str, Any] = dict(paper=KEY, version="f_up_corrected", grid={"quick": (8,), "full": (150,)}, seed=0,
                             replicas=PROBE_REPLICAS)

HUNT_PRINTED_RANGE = NoCounterexample(
    id="strfedavg.hunt.T1_printed_range",
    title="Hunt: Theorem 1's f_up over its printed exponent range 0 < b < a <= 1",
    statement="E f(x^) - f* <= f_up (with Prop. 1's factor 3) on every TP1 instance satisfying Theorem 1's stated "
              "conditions, for any 0 < b < a <= 1.",
    source=src("Theorem 1 (i-1)", "spec §4.4, I10"),
    space=THEOREM_1_PRINTED_SPACE,
    restarts=3,  # one search of 8 found no counterexample under 1 of 5 seed offsets (tools/seed_stability.py)
    expect=Verdict.FAIL,
    expect_reason="with a + b > 1 the initialization term decays like exp(-(p/2) ln R (mu_f R)^(1-a-b)), not "
                  "R^(-p/2) (I10): a start far from X*_h breaks the bound, and the search must find one",
    **_HUNT,
)

HUNT_CORRECTED_RANGE = NoCounterexample(
    id="strfedavg.hunt.T1_proof_range",
    title="Hunt: Theorem 1's f_up where its proof holds (a + b <= 1, I10), at its edge a + b = 1",
    statement="E f(x^) - f* <= f_up (with Prop. 1's factor 3) on every TP1 instance satisfying Theorem 1's "
              "conditions with a + b = 1, the edge of the range the proof needs, where its initialization term "
              "decays like R^(-p/2) as the bound says, started far from X*_h so that f - f* > 0.",
    source=src("proof of Theorem 1", "spec §4.4, I10"),
    space=THEOREM_1_SPACE,
    # what a PASS certifies: measured in quick (32 draws, 18 admissible) the largest measure/bound is ~0.04
    # (f - f* positive, the start's null-space offset): 24x inside f_up, not a tight check, but a start
    # whose null-space offset is not contracted (f - f* = (mu_f/2)||offset||^2, O(1) here) or a wrong
    # schedule exponent would exceed it. Before this space (a + b < 1 allowed, c != 0) f - f* was negative
    # on all 8 admissible instances and the ratio 0: that PASS could not fail.
    expect_reason="with a + b <= 1 the proof's f_up holds; the search finds f - f* > 0 from the start's null-space "
                  "offset, up to ~1/24 of f_up (the report gives the largest measure/bound), and none above it",
    **{**_HUNT, "grid": {"quick": (32,), "full": (150,)}},
)

HUNTS = (HUNT_PRINTED_RANGE, HUNT_CORRECTED_RANGE)
SPACES = (THEOREM_1_PRINTED_SPACE, THEOREM_1_SPACE)
