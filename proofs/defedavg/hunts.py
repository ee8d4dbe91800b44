"""Registered hunts (issue #13): counterexample searches for Theorem 2's bound versions.

The space: IID quadratics of the package's quadratic family (any dimension <= 12, condition number
<= 100, noise and start over four decades), n clients of 16 drawn without replacement, K local
steps, a constant delay lambda, and a horizon T at least the smallest one at which every condition
of Theorem 2 holds under its schedule (eq. (13)): T = ceil(h * T_min), h in [1, 4]. Runs are exact
expectations (ratecheck.exact), so a counterexample is decided with no Monte-Carlo error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ratecheck.claims import Verdict
from ratecheck.inspection import constants_of
from ratecheck.problems.quadratic import strategy as quadratic_strategy
from ratecheck.runner.hunt import HuntSpace, NoCounterexample, smallest_admissible
from ratecheck.trace import RunConfig

from .claims import bindings, scheduled_config
from .theorems import KEY, THEOREM_2, src

T_CAP = 4000  # the search's largest horizon: beyond it an instance is skipped (no run), not refuted


def _strategy():
    from hypothesis import strategies as st

    return st.fixed_dictionaries({
        "problem": quadratic_strategy(heterogeneity="none", zeta=0.0, curvature="shared", clients=16),
        "n": st.integers(1, 8),
        "K": st.integers(1, 5),
        "lam": st.integers(1, 3),
        "horizon": st.floats(1.0, 4.0),
    })


def _configure(instance: Mapping[str, Any], replicas: int) -> RunConfig | None:
    problem, n, K, lam = instance["problem"], instance["n"], instance["K"], instance["lam"]
    const = constants_of(RunConfig("defedavg_iid", {}, "quadratic", dict(problem), 1))
    values = {"L": const["L"], "sigma": const["sigma"], "Delta": const["Delta"], "n": n, "K": K, "lam": lam}
    t_min = smallest_admissible(THEOREM_2, values, "T", high=T_CAP)
    if t_min is None:
        return None
    rounds = int(math.ceil(t_min * instance["horizon"]))
    if rounds > T_CAP:
        return None
    config = scheduled_config(THEOREM_2, "defedavg_iid", problem, n_clients=n, local_steps=K, rounds=rounds,
                              delay=f"constant:{lam}", participation=f"without_replacement:{n}",
                              replicas=replicas)
    return config.with_(mode="exact", replicas=1)


THEOREM_2_SPACE = HuntSpace(
    theorem=THEOREM_2, strategy=_strategy, configure=_configure, bindings=bindings,
    source=src("Theorem 2, eqs. (13)-(14)"),
    note="IID quadratics, n of 16 without replacement, constant delay, T >= T2_min under the schedule",
)

_HUNT: dict[str, Any] = dict(paper=KEY, space=THEOREM_2_SPACE, grid={"quick": (24,), "full": (200,)}, seed=0)

HUNT_MAIN_TEXT = NoCounterexample(
    id="defedavg.hunt.T2_main_text",
    title="Hunt: bound (14) as printed in the main text",
    statement="M_T <= sqrt(128 Delta/(nKT)) + 8L/(KT) on every instance satisfying (13), with the schedule.",
    source=src("Theorem 2, eq. (14), main text"),
    version="main_text",
    expect=Verdict.FAIL,
    expect_reason="the printed leading term lacks L sigma^2 (spec §4.7 item 4): any instance with L sigma^2 "
                  "well above 1 breaks it, and the search must find one",
    **_HUNT,
)

HUNT_CORRECTED = NoCounterexample(
    id="defedavg.hunt.T2_corrected",
    title="Hunt: the corrected bound (14)",
    statement="M_T <= sqrt(128 L sigma^2 Delta/(nKT)) + 8L/(KT) on every instance satisfying (13).",
    source=src("Appendix A.2.2", "spec §4.2"),
    version="corrected",
    **_HUNT,
)

HUNTS = (HUNT_MAIN_TEXT, HUNT_CORRECTED)
SPACES = (THEOREM_2_SPACE,)
