"""The FedBiO oracles are unbiased (Assumption 4: the stochastic gradients, Jacobian and Hessian have the exact ones as
means), read from the draws the constants claim samples sigma_f, sigma_g, sigma_J and sigma_H from
(ratecheck.claims.unbiased) at its two test-B instances (N1), and from the same draws at the finite-sum instance whose
samples carry their own matrices (N2, claims.py's N2_ROWS_PROBLEM: every oracle a row drawn without replacement).
"""

from __future__ import annotations

from typing import Any

from ratecheck.claims import Profile
from ratecheck.claims.unbiased import Unbiased, UnbiasedClaim
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .claims import KEY, N2_ROWS_PROBLEM
from .constants import DRAWS, INSTANCES, instance, noise_samples
from .theorems import src

GRID = tuple(range(len(INSTANCES) + 1))


def configure(value: float, profile: Profile) -> RunConfig:
    if int(value) < len(INSTANCES):
        return instance(value, profile)
    return RunConfig("fedbio", {"I": 5, "eta": 0.05, "gamma": 0.1, "tau": 0.1}, "fedbio_bilevel", dict(N2_ROWS_PROBLEM),
                     rounds=1, replicas=1)


def oracle(name: str) -> Any:
    def sample(problem: Any) -> Any:
        return noise_samples(problem)[name]
    sample.__name__ = name
    return sample


CLAIMS = (
    UnbiasedClaim(
        id="fedbio.unbiased.fedbio_bilevel", paper=KEY,
        title="FedBiO: the stochastic gradients, Jacobian and Hessian are unbiased",
        statement="At the constants claim's two test-B instances (N1) and at the finite-sum instance with per-sample "
                  "matrices (N2), grad f, grad_y g, the Jacobian-vector and the Hessian-vector oracles have the exact "
                  f"ones as means: over {DRAWS} draws per client, every client's every coordinate (matrix entry) has "
                  "its sample mean within K standard errors of 0, K Bonferroni's at family-wise false-FAIL 1e-6.",
        source=src("Assumption 4 (unbiased stochastic oracles)", "spec fedbio §3.1, §6.0 (N1, N2)"),
        grid={"quick": GRID, "full": GRID}, configure=configure, problem_of=problem_of,
        computations={
            name: Unbiased(oracle(key), f"{via} at (x, y) = (0.5, -0.5) minus the same at the exact sample, {DRAWS} "
                                        f"draws per client, seed 0 ({key}'s draws)")
            for name, key, via in (("grad f", "sigma_f", "draw, grad_x_f and grad_y_f"),
                                   ("grad_y g", "sigma_g", "draw, grad_y_g"),
                                   ("Jacobian", "sigma_J", "draw, jvp at e_1..e_d (every entry)"),
                                   ("Hessian", "sigma_H", "draw, hvp at e_1..e_d (every entry)"))},
        ),
)
