"""The least-squares stochastic gradients are unbiased (Assumption 3: E[grad h_i(x, zeta)] = grad h_i(x) and
E[grad f_i(x, xi)] = grad f_i(x)), read from the draws the constants claim samples sigma_h and sigma_f from
(ratecheck.claims.unbiased), at its two instances (the claims run additive noise only).
"""

from __future__ import annotations

from ratecheck.claims.unbiased import Unbiased, UnbiasedClaim
from ratecheck.inspection import problem_of

from .claims import KEY
from .constants import DRAWS, INSTANCES, additive_noise, f_noise, h_noise, instance
from .theorems import src

GRID = tuple(range(len(INSTANCES)))

CLAIMS = (
    UnbiasedClaim(
        id="strfedavg.unbiased.least_squares", paper=KEY,
        title="least squares: the stochastic gradients of h and f are unbiased",
        statement="At the constants claim's two instances, stochastic_grad has mean grad h_i and composite_grad's xi "
                  f"(zeta replayed) has mean 0: over {DRAWS} draws per client, every client's every coordinate's sample "
                  "mean is within K standard errors of 0, K Bonferroni's at family-wise false-FAIL 1e-6.",
        source=src("Assumption 3 (unbiased stochastic gradients)", "spec strfedavg §3.4"),
        grid={"quick": GRID, "full": GRID}, configure=instance, problem_of=problem_of,
        computations={
            "grad h": Unbiased(h_noise, f"stochastic_grad minus local_grad at x = 0.3 1, {DRAWS} draws per client, seed 0 "
                                        "(sigma_h's draws)", where=additive_noise),
            "grad f": Unbiased(f_noise, f"composite_grad (eta = 1) minus its zeta replayed through stochastic_grad minus "
                                        f"grad f_i at x = 0.3 1, {DRAWS} draws per client, seed 0 (sigma_f's draws)",
                               where=additive_noise),
        }),
)
