"""The stochastic gradients DeFedAvg's claims run are unbiased (Assumption 3: E[grad f(w; xi)] = grad F_i(w)), read
from the draws the constants claim samples sigma from (ratecheck.claims.unbiased) at its three instances (additive
noise on heterogeneous quadratics and on P3's cosine problem), and from draws of their own for the two other stochastic
oracles a claim runs: the stochastic Hessian H_xi (w - c_i) + z (local_steps_exact.py) and P4's mini-batch of rows
drawn with replacement (interpolation_exact.py's small instance), both at w = 0.7 1, away from every c_i and x*.
"""

from __future__ import annotations

from typing import Any

from ratecheck.claims import Profile
from ratecheck.claims.constants import NoiseSample, per_problem
from ratecheck.claims.unbiased import Unbiased, UnbiasedClaim
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .constants import INSTANCES, SAMPLES, gradient_noise, instance, noise_at
from .interpolation_exact import SMALL_P4
from .local_steps_exact import IDENTICAL
from .theorems import KEY, src

# the oracles no constants instance runs: (family, parameters), after the constants claim's instances
OTHERS = (("stochastic_hessian_quadratic", IDENTICAL), ("least_squares_interpolation", SMALL_P4))
AWAY = 0.7  # the point w = AWAY 1 their noise is drawn at: the Hessian noise and the rows' spread are non-zero there
GRID = tuple(range(len(INSTANCES) + 1 + len(OTHERS)))


def configure(value: float, profile: Profile) -> RunConfig:
    i = int(value) - len(INSTANCES) - 1  # the constants claim's instances, the cosine problem, then OTHERS
    if i < 0:
        return instance(value, profile)
    family, params = OTHERS[i]
    return RunConfig("defedavg", {"eta": 0.01, "local_steps": 2, "participation": "full"}, family, dict(params),
                     rounds=1, replicas=1)


def additive(problem: Any) -> bool:
    return problem.family in ("quadratic", "cosine_quadratic")


def stochastic_hessian(problem: Any) -> bool:
    return problem.family == "stochastic_hessian_quadratic"


def rows(problem: Any) -> bool:
    return problem.family == "least_squares" and problem.batch_rows is not None


@per_problem
def away_noise(problem: Any) -> NoiseSample:
    return noise_at(problem, AWAY)


CLAIMS = (
    UnbiasedClaim(
        id="defedavg.unbiased.stochastic_gradients", paper=KEY,
        title="the stochastic gradients the claims run are unbiased",
        statement="The additive-noise gradient (the constants claim's three instances, sigma's draws at w = 0), the "
                  "stochastic-Hessian gradient H_xi (w - c_i) + z and P4's row-sampled gradient (at w = 0.7 1) have "
                  f"mean grad F_i(w): over {SAMPLES} draws per client, every client's every coordinate's sample mean "
                  "is within K standard errors of 0, K Bonferroni's at family-wise false-FAIL 1e-6.",
        source=src("Assumption 3 (unbiased stochastic gradients)", "spec defedavg §1, §6 (P1-P4)"),
        grid={"quick": GRID, "full": GRID}, configure=configure, problem_of=problem_of,
        computations={
            "additive noise": Unbiased(gradient_noise, f"stochastic_grad minus local_grad at w = 0, {SAMPLES} draws per "
                                                       "client, seed 0 (sigma's draws)", where=additive),
            "stochastic Hessian": Unbiased(away_noise, f"stochastic_grad (H_xi (w - c_i) + z) minus local_grad at w = "
                                                       f"{AWAY} 1, {SAMPLES} draws per client, seed 0",
                                           where=stochastic_hessian),
            "row mini-batch": Unbiased(away_noise, f"stochastic_grad (a row drawn with replacement) minus local_grad at "
                                                   f"w = {AWAY} 1, {SAMPLES} draws per client, seed 0", where=rows),
        }),
)
