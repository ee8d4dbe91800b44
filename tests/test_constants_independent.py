"""Problem constants against independent computation (issue #23 item 2): the constants the bound and rate claims
read, recomputed here from Hessians built by central finite differences of the problems' own gradient oracles
(exact for quadratics up to round-off) and from the definitions in the specs, compared at rtol 1e-6. The conformance
kit (ratecheck.testing.conformance) checks that L and mu BOUND the curvature; these goldens check the values, so a
constant that is loose by a factor (L doubled, mu halved, l of the wrong block) fails here."""

import numpy as np
import pytest

from ratecheck.claims import PROFILES
from ratecheck.inspection import constants_of, problem_of
from ratecheck.proofs.defedavg import claims as dc
from ratecheck.proofs.defedavg import oracles as do
from ratecheck.proofs.fedbio import oracles as bo
from ratecheck.proofs.fessgda import oracles as fo
from ratecheck.proofs.strfedavg import claims as sc

QUICK = PROFILES["quick"]
H = 1e-4  # central differences: exact for quadratics up to round-off ~1e-12/H


def _fd_jacobian(grad, d):
    """J[:, j] = (grad(e_j H) - grad(-e_j H)) / 2H for a gradient map R^d -> R^k."""
    cols = [(grad(H * e) - grad(-H * e)) / (2 * H) for e in np.eye(d)]
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("config", [dc.T2_BOUND_CORRECTED.own_runs(QUICK)[0],
                                    do.CLAIMS[0].configure(do.ORACLE_T, QUICK)], ids=["theorem2", "per_client"])
def test_quadratic_L_mu_nu(config):
    """Theorem 2's instance (shared curvature) and the oracles' (per-client rotated Hessians, where the largest
    client curvature and the mean's differ)."""
    prob, c = problem_of(config), constants_of(config)
    N, d = prob.num_clients, prob.dim
    batch = prob.gather(np.arange(N)[None, :])
    x0 = np.zeros((1, N, d))
    hess = _fd_jacobian(lambda u: prob.local_grad(batch, x0 + u)[0], d)  # (N, d, d): each client's Hessian
    L = max(np.linalg.eigvalsh(0.5 * (h + h.T)).max() for h in hess)  # L = max_i lambda_max(H_i)
    mu = np.linalg.eigvalsh(hess.mean(0)).min()  # mu = lambda_min of F = (1/N) sum F_i
    assert c["L"] == pytest.approx(L, rel=1e-6) and c["mu"] == pytest.approx(mu, rel=1e-6)
    if prob.hessians.ndim == 3:  # per-client curvature: nu is a bound on a ball (spec §6), not a point value
        assert L > np.linalg.eigvalsh(hess.mean(0)).max() * 1.01  # the instance tells the two L's apart
        return
    # nu = max_i ||grad F_i(x*) - grad F(x*)||, x* from the finite-difference system
    g0 = prob.local_grad(batch, x0)[0]  # grad F_i(0) = -H_i c_i
    x_star = np.linalg.solve(hess.mean(0), -g0.mean(0))
    at = prob.local_grad(batch, np.broadcast_to(x_star, (1, N, d)))[0]
    assert c["nu"] == pytest.approx(np.linalg.norm(at - at.mean(0), axis=1).max(), rel=1e-6, abs=1e-9)


def test_minimax_l_mu1_mu2_of_the_fessgda_oracle_instance():
    config = fo.oracle_config(fo.ORACLE_T, QUICK)
    prob, c = problem_of(config), constants_of(config)
    N, dx, dy = prob.num_clients, prob.dim_x, prob.dim_y
    batch = prob.gather(np.arange(N)[None, :])

    def field(u):  # (grad_x f_i, grad_y f_i) at (x, y) = u
        gx, gy = prob.local_grads(batch, np.broadcast_to(u[:dx], (1, N, dx)), np.broadcast_to(u[dx:], (1, N, dy)))
        return np.concatenate([gx[0], gy[0]], axis=-1)

    hess = _fd_jacobian(field, dx + dy)  # (N, dx+dy, dx+dy): client Hessians [[A_i, B], [B', -C]]
    l = max(np.linalg.norm(h, 2) for h in hess)  # Assumption 2.1: l bounds every client's Hessian (spec P7)
    glob = hess.mean(0)
    mu1 = np.linalg.eigvalsh(glob[:dx, :dx]).min()  # strongly convex x-part (a1): PL constant lambda_min(A)
    mu2 = np.linalg.eigvalsh(-glob[dx:, dx:]).min()  # lambda_min(C)
    assert (c["l"], c["mu1"], c["mu2"]) == (pytest.approx(l, rel=1e-6), pytest.approx(mu1, rel=1e-6),
                                            pytest.approx(mu2, rel=1e-6))


def test_fedbio_mu_L_of_the_fedbio_oracle_instance():
    config = bo.oracle_config(bo.ORACLE_T, QUICK)
    prob, c = problem_of(config), constants_of(config)
    M, p, d = prob.num_clients, prob.dim_x, prob.dim_y
    s = prob.draw(None, ())

    def lower(u):  # grad_(x, y) g_m at z = u, every client: (M, p + d); grad_x g_m = -B_m^T y
        x, y = np.broadcast_to(u[:p], (1, M, p)), np.broadcast_to(u[p:], (1, M, d))
        gy = prob.grad_y_g(x, y, s)[0]
        gx = -np.einsum("mdp,md->mp", prob.B, y[0])
        return np.concatenate([gx, gy], axis=-1)

    joint = _fd_jacobian(lower, p + d)  # (M, p+d, p+d): the joint Hessians of g_m
    mu = min(np.linalg.eigvalsh(h[p:, p:]).min() for h in joint)  # A1: every g_m mu-strongly convex in y
    L = max(max(np.abs(np.linalg.eigvalsh(0.5 * (h + h.T))).max() for h in joint), 1.0, float(prob.rho))  # spec §6.1
    assert c["mu"] == pytest.approx(mu, rel=1e-6) and c["L"] == pytest.approx(L, rel=1e-6)


def test_least_squares_L_h_mu_f_alpha_of_the_selection_instance():
    config = sc.tp1_config(100, QUICK)
    prob, c = problem_of(config), constants_of(config)
    N, n = prob.num_clients, prob.dim
    batch = prob.gather(np.arange(N)[None, :])
    hess = _fd_jacobian(lambda u: prob.local_grad(batch, np.broadcast_to(u, (1, N, n)))[0], n)  # s A_i^T A_i
    L_h = max(np.linalg.eigvalsh(0.5 * (h + h.T)).max() for h in hess)
    eig = np.linalg.eigvalsh(hess.mean(0))
    plus = eig[eig > 1e-8 * eig.max()].min()  # lambda_min^+ of H_h
    assert c["L_h"] == pytest.approx(L_h, rel=1e-6) and c["lambda_min_plus"] == pytest.approx(plus, rel=1e-6)
    assert c["alpha"] == pytest.approx(plus / 2, rel=1e-6)  # weak sharpness kappa = 2, alpha = lambda_min^+/2 (spec §6)
    assert c["mu_f"] == pytest.approx(float(config.problem_params["mu"]), rel=1e-12)  # tp1: f_i = mu/2 ||x - c_i||^2
