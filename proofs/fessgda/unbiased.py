"""The minimax stochastic gradients are unbiased (Assumption 2.3: E[grad f_i(z; xi)] = grad f_i(z)), read from the
draws the constants claim samples sigma from (ratecheck.claims.unbiased), at its four instances: the quadratic with and
without client Hessian spread, the NC-PL log problem and the point-wise max over the simplex (every noisy kind a claim
runs).
"""

from __future__ import annotations

from ratecheck.claims.unbiased import Unbiased, UnbiasedClaim
from ratecheck.inspection import problem_of

from .constants import DRAWS, INSTANCES, gradient_noise, instance
from .theorems import KEY, src

GRID = tuple(range(len(INSTANCES)))

CLAIMS = (
    UnbiasedClaim(
        id="fessgda.unbiased.minimax", paper=KEY,
        title="minimax: the stochastic gradients are unbiased",
        statement="At the constants claim's four instances (quadratic with and without Hessian spread, NC-PL, point-wise "
                  "max), stochastic_grads has mean local_grads in both blocks: over "
                  f"{DRAWS} draws per client, every client's every coordinate's sample mean is within K standard errors "
                  "of 0, K Bonferroni's at family-wise false-FAIL 1e-6.",
        source=src("Assumption 2.3 (unbiased stochastic gradients)", "spec fessgda notation table, §6"),
        grid={"quick": GRID, "full": GRID}, configure=instance, problem_of=problem_of,
        computations={
            "stochastic gradient": Unbiased(gradient_noise, f"stochastic_grads minus local_grads at z = (0.5, -0.5), "
                                                            f"{DRAWS} draws per client, seed 0 (sigma's draws)"),
        }),
)
