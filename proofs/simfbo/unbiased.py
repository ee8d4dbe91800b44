"""The quadratic-bilevel stochastic oracles are unbiased (SimFBO Assumption 3: the sampled gradients and Hessians have
the exact ones as means), read from the draws the constants claim samples sigma_f and sigma_g from
(ratecheck.claims.unbiased), at the same two P1 instances; the Hessian-vector product's N2 noise from draws of its own
(sigma_gg reads only the largest norm of 210 draws).
"""

from __future__ import annotations

from ratecheck.claims.unbiased import Unbiased, UnbiasedClaim
from ratecheck.inspection import problem_of

from .constants import DRAWS, HVP_DIRECTION, INSTANCES, f_noise, g_noise, hvp_noise, instance
from .theorems import KEY, src

CLAIMS = (
    UnbiasedClaim(
        id="simfbo.unbiased.quadratic_bilevel", paper=KEY,
        title="quadratic bilevel: the stochastic gradients and the sampled Hessian are unbiased",
        statement="At the constants claim's two P1 instances, the N1 noise of grad f (surrogate_grad, ls_grad at v = 0) "
                  "and of grad_y g (lower_grad), and the N2 noise of the Hessian-vector product (ls_grad at v != 0 minus "
                  f"its replay at v = 0) have mean 0: over {DRAWS} draws per client, every client's every coordinate's "
                  "sample mean is within K standard errors of 0, K Bonferroni's at family-wise false-FAIL 1e-6.",
        source=src("Assumption 3 (unbiased stochastic gradients and Hessians)", "spec simfbo §1, §6.1 (N1, N2)"),
        grid={"quick": tuple(range(len(INSTANCES))), "full": tuple(range(len(INSTANCES)))}, configure=instance,
        problem_of=problem_of,
        computations={
            "grad f": Unbiased(f_noise, f"surrogate_grad and ls_grad (v = 0) minus their noise-free values at (x, y) = "
                                        f"(0.4, -0.3), {DRAWS} draws per client, seed 0 (sigma_f's draws)"),
            "grad_y g": Unbiased(g_noise, f"lower_grad minus its noise-free value at (x, y) = (0.4, -0.3), {DRAWS} draws "
                                          "per client, seed 0 (sigma_g's draws)"),
            "Hessian-vector product": Unbiased(
                hvp_noise, f"ls_grad at v = linspace{HVP_DIRECTION} minus its replay at v = 0 and the noise-free "
                           f"difference: (grad_yy g_i(psi) - A_i) v, {DRAWS} draws per client, seed 0"),
        }),
)
