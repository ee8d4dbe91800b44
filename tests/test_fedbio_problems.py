"""FedBiO test problems (spec fedbio §6): worked rational instances, closed forms against finite
differences and numerical solves, oracle noise levels, bad input."""

import numpy as np
import pytest

from ratecheck.params import ParamError
from ratecheck.problems import make_problem
from ratecheck.problems.quadratic_bilevel import make_fedbio
from ratecheck.seeding import ReplicaStream


def test_worked_instance_test_a():
    """Spec §6.1: p = d = 2, A = diag(1, 4), B = I, rho = 1, c_bar = (1, 0), d_bar = (0, 1), e_bar = 0."""
    p = make_fedbio(test="A", clients=2)
    np.testing.assert_allclose(p.x_star, [-0.5, 4 / 17], atol=1e-14)
    np.testing.assert_allclose(p.y_star(p.x_star), [0.5, 1 / 17], atol=1e-14)
    np.testing.assert_allclose(p.u_star(p.x_star), [0.5, -4 / 17], atol=1e-14)
    np.testing.assert_allclose(p.hessian(p.x_star), np.diag([2, 17 / 16]), atol=1e-14)
    c = p.constants()
    assert c["L"].value == pytest.approx(2 + np.sqrt(5))
    assert c["mu"].value == 1.0
    assert c["Delta"].value == pytest.approx(19 / 68)
    assert c["Delta_y"].value == pytest.approx(1.0)
    assert c["Delta_u"].value == pytest.approx(17 / 16)
    assert c["Lbar_exact"].value == pytest.approx(2.0)
    assert c["zeta_gyy"].value == 0.0 and c["zeta_gxy"].value == 0.0


def test_worked_instance_neumann_fixed_point():
    """Spec §6.3 (C1): x_Q = (-n1/(1+n1), 4 n2/(16+n2)), n_i = 1 - (1 - tau_N a_i)^(Q+1), tau_N = 0.2."""
    p = make_fedbio(test="C1", clients=2)
    for Q in (0, 4, 20):
        n1, n2 = 1 - 0.8 ** (Q + 1), 1 - 0.2 ** (Q + 1)
        np.testing.assert_allclose(p.x_neumann(Q, 0.2), [-n1 / (1 + n1), 4 * n2 / (16 + n2)], atol=1e-14)
    np.testing.assert_allclose(p.x_neumann(0, 0.2), [-0.16667, 0.19048], atol=1e-5)
    np.testing.assert_allclose(p.x_neumann(200, 0.2), p.x_star, atol=1e-14)


@pytest.mark.parametrize("test, setting", [("A", None), ("B", None), ("C1", None), ("C2", None), ("D", None),
                                           ("D", "local"), ("Dp", None), ("Dp", "local")])
def test_hypergradient_matches_finite_differences_and_x_star_is_stationary(test, setting):
    kw = {"s_H": 0.4, "s_B": 0.3} if test in ("B", "C2") else {}
    p = make_fedbio(test=test, setting=setting, clients=6, **kw)
    x = np.array([0.3, -0.7])
    h = 1e-6
    fd = np.array([(p.value(x + h * e) - p.value(x - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(p.hypergrad(x), fd, atol=1e-7)
    hess_fd = np.array([(p.hypergrad(x + h * e) - p.hypergrad(x - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(p.hessian(x), hess_fd, atol=1e-6)
    assert np.linalg.norm(p.hypergrad(p.x_star)) < 1e-12


def test_heterogeneity_does_not_move_x_star_in_the_global_setting():
    """Zero-sum offsets, average A_m = A_bar, B_m = B_bar: x* is the same for every s, s_H, s_B and M."""
    ref = make_fedbio(test="A", clients=2, s=0.0).x_star
    for kw in ({"test": "A", "clients": 7, "s": 2.0}, {"test": "B", "clients": 8, "s_H": 0.5, "s_B": 0.3}):
        np.testing.assert_allclose(make_fedbio(**kw).x_star, ref, atol=1e-12)


def test_test_d_antisymmetric_pairs_have_the_constructed_minimizer():
    p = make_fedbio(test="D", clients=6)
    assert np.linalg.norm(p.hypergrad(p.x_star)) < 1e-14
    np.testing.assert_allclose(p.u_star(p.x_star), 0.0, atol=1e-14)  # u_x* = 0 by oddness (spec §6.4)
    assert p.constants()["C_f"].value == pytest.approx(np.sqrt(2 + 2))  # delta sqrt(d + rho^2 p)


def test_naive_fixed_point_closed_form_solves_the_averaged_local_hypergradients():
    p = make_fedbio(test="B", clients=8, s_H=0.5, s_B=0.3)
    xn = p.x_naive
    assert np.linalg.norm(p.client_hypergrads(xn[None]).mean(1)) < 1e-12
    assert np.linalg.norm(xn - p.x_star) > 0.02


def test_oracle_noise_levels_are_exact():
    """N1: E||noise||^2 = sigma^2 per oracle (Jacobian and Hessian in Frobenius norm), / b for a minibatch;
    the same sample at two points has a noise-free difference (additive oracles)."""
    p = make_fedbio(test="A", clients=3, sigma_f=2.0, sigma_g=1.5, sigma_J=0.7, sigma_H=0.4)
    R, m = 40, 1000  # 40000 samples; the client axis is just a shape to the sampler
    stream = ReplicaStream(0, "c" * 64, range(R), "noise")
    s = p.draw(stream, (m,), batch=4)
    assert np.mean((s.fx**2).sum(-1) + (s.fy**2).sum(-1)) == pytest.approx(4.0 / 4, rel=0.03)
    assert np.mean((s.gy**2).sum(-1)) == pytest.approx(2.25 / 4, rel=0.03)
    assert np.mean((s.J**2).sum((-1, -2))) == pytest.approx(0.49 / 4, rel=0.03)
    assert np.mean((s.H**2).sum((-1, -2))) == pytest.approx(0.16 / 4, rel=0.03)
    np.testing.assert_array_equal(s.H, np.swapaxes(s.H, -1, -2))
    s = p.draw(stream, (3,), batch=4)
    x1, x2 = np.zeros((R, 3, 2)), np.ones((R, 3, 2))
    diff = p.grad_y_g(x2, x2, s) - p.grad_y_g(x1, x1, s)
    exact = p.grad_y_g(x2, x2, p.draw(None, ())) - p.grad_y_g(x1, x1, p.draw(None, ()))
    np.testing.assert_allclose(diff, exact, atol=1e-12)


def test_bad_input_names_the_parameter():
    with pytest.raises(ParamError, match="s_H"):
        make_fedbio(test="A", s_H=0.5)
    with pytest.raises(ParamError, match="s_H = 1.5"):
        make_fedbio(test="B", s_H=1.5)
    with pytest.raises(ParamError, match="clients = True"):
        make_problem("fedbio_bilevel", {"clients": True})
    with pytest.raises(ParamError, match="test"):
        make_problem("fedbio_bilevel", {"test": "E"})


@pytest.mark.parametrize("replacement", [False, True])
def test_finite_sum_minibatch_variance_matches_its_closed_form(replacement):
    """N2: the mean of b of K rows has E||.||^2 = s^2/b (K - b)/(K - 1) without replacement (s^2/b with),
    s^2 = sigma^2 exactly; at b = K without replacement it is exactly zero (the full sum). 40000 draws per
    block: the relative standard error of the mean square is ~1%, so 5% is a 5-sigma tolerance."""
    K = 8
    p = make_fedbio(test="A", clients=3, sigma_f=2.0, sigma_g=1.5, finite_sum=K, replacement=replacement)
    assert p.row_variance("fx", 1) + p.row_variance("fy", 1) == pytest.approx(4.0)
    assert p.row_variance("gy", 1) == pytest.approx(2.25)
    np.testing.assert_allclose(p.rows_f.mean(1), 0.0, atol=1e-12)  # the client's mean is its own gradient
    R, m = 40, 1000
    stream = ReplicaStream(0, "d" * 64, range(R), "noise")
    for b in (1, 3, 6):
        s = p.draw(stream, (3, m // 3), batch=b)
        for block in ("fx", "fy", "gy"):
            got = np.mean((getattr(s, block) ** 2).sum(-1))
            assert got == pytest.approx(p.row_variance(block, b), rel=0.05), (block, b)
    if not replacement:
        s = p.draw(stream, (3,), batch=K)
        np.testing.assert_allclose(s.fx, 0.0, atol=1e-12)
        with pytest.raises(ParamError, match="batch"):
            p.draw(stream, (3,), batch=K + 1)
    else:
        assert p.row_variance("gy", K) == pytest.approx(2.25 / K)


# -- N2 with matrix rows (spec §6.0: samples (A_m,i, B_m,i, c_m,i, d_m,i), state-dependent noise) ----------


def _stream(seed: int, replicas: int = 40) -> ReplicaStream:
    return ReplicaStream(seed, "e" * 64, range(replicas), "noise")


def _matrix_rows(K=6, **kw):
    return make_fedbio(test="B", clients=3, s_H=0.4, s_B=0.3, sigma_f=1.0, sigma_g=0.5, sigma_J=0.4, sigma_H=0.3,
                       finite_sum=K, **kw)


def test_matrix_rows_are_centred_symmetric_and_scaled_exactly():
    """The rows' means are the client's own A_m, B_m (so every oracle is unbiased), each A_m,i is symmetric, and
    each oracle's rows have mean square sigma^2 on every client; the offsets' rows do not change with the flag."""
    p = _matrix_rows()
    np.testing.assert_allclose((p.A[:, None] + p.rows_A).mean(1), p.A, atol=1e-15)
    np.testing.assert_allclose((p.B[:, None] + p.rows_B).mean(1), p.B, atol=1e-15)
    np.testing.assert_array_equal(p.rows_A, np.swapaxes(p.rows_A, -1, -2))
    np.testing.assert_allclose(p.row_second_moments("H"), 0.3**2, rtol=1e-12)
    np.testing.assert_allclose(p.row_second_moments("J"), 0.4**2, rtol=1e-12)
    plain = _matrix_rows(finite_sum_matrices=False)
    assert plain.rows_A is None and plain.rows_B is None
    np.testing.assert_array_equal(plain.rows_f, p.rows_f)
    np.testing.assert_array_equal(plain.rows_g, p.rows_g)


def test_row_mean_hessian_and_jacobian_have_the_finite_population_variance():
    """E||mean of b of K rows||_F^2 = s^2/b (K - b)/(K - 1): exact by enumerating all C(K, b) subsets (the draw
    without replacement is uniform over them, checked by a chi-square on 12000 Hessian draws: 0.1% level), then
    the sampler against the closed form on 60000 draws per oracle (relative standard error ~0.8%: 5%)."""
    from itertools import combinations

    from scipy.stats import chisquare

    K, b = 5, 2
    p = _matrix_rows(K)
    subsets = list(combinations(range(K), b))
    for block, rows in (("H", p.rows_A), ("J", p.rows_B)):
        exact = np.mean([(rows[:, list(s)].mean(1) ** 2).sum((-1, -2)).mean() for s in subsets])
        assert exact == pytest.approx(p.row_variance(block, b), rel=1e-12)
    s = p.draw(_stream(1), (3, 300), b, hessians=1, oracles=("H",))  # 40 replicas x 300 per client
    means = np.stack([p.rows_A[0, list(sub)].mean(0) for sub in subsets])  # client 0's 10 possible Hessian noises
    gap = ((s.H[:, 0, :, 0].reshape(-1, 1, 2, 2) - means[None]) ** 2).sum((-1, -2))
    assert gap.min(1).max() < 1e-24  # every draw is one of them
    counts = np.bincount(gap.argmin(1), minlength=len(subsets))
    assert chisquare(counts).pvalue > 1e-3, counts
    s = p.draw(_stream(2), (3, 500), b, oracles=("J", "H"))
    for block, z in (("J", s.J), ("H", s.H)):
        assert np.mean((z**2).sum((-1, -2))) == pytest.approx(p.row_variance(block, b), rel=0.05), block


def test_grad_y_g_reads_one_sample_for_A_B_c_and_its_noise_depends_on_the_point():
    """grad_y g(z; i) = A_m,i y - B_m,i x - c_m,i: at b = 1 the noise is one row's dA_i y - dB_i x + dc_i (one index
    for all three parts), and its mean square at (x, y) is the state-dependent closed form (60000 draws: 5%)."""
    p = _matrix_rows()
    x, y = np.array([0.7, -1.2]), np.array([1.5, 0.4])
    stream = _stream(3)
    s = p.draw(stream, (3, 500), 1, oracles=("gy",))
    X, Y = np.broadcast_to(x, (40, 3, 500, 2)), np.broadcast_to(y, (40, 3, 500, 2))
    exact = p.grad_y_g(X, Y, p.draw(None, ()))
    noise = p.grad_y_g(X, Y, s) - exact
    rows = p.rows_g + np.einsum("mkij,j->mki", p.rows_A, y) - np.einsum("mkij,j->mki", p.rows_B, x)  # (M, K, d)
    gap = ((noise[..., None, :] - rows[None, :, None]) ** 2).sum(-1).min(-1)
    assert gap.max() < 1e-24
    assert np.mean((noise**2).sum(-1)) == pytest.approx(p.row_variance("gy", 1, x, y), rel=0.05)
    assert p.row_variance("gy", 1, x, y) > 1.5 * p.row_variance("gy", 1)  # the state matters here
    s4 = p.draw(stream, (3, 500), 4, oracles=("gy",))
    got = np.mean(((p.grad_y_g(X, Y, s4) - exact) ** 2).sum(-1))
    assert got == pytest.approx(p.row_variance("gy", 4, x, y), rel=0.05)


def test_independent_batches_draw_independent_rows_and_eq6_shares_xi_f():
    """Alg. 1 line 4: B_f,1, B_f,2, B_g,1, B_g,2 (and the Neumann draws xi_1..xi_Q) are independent minibatches, so
    two of them pick the same row with probability 1/K; eq. (6)'s xi_f is ONE sample for grad_x f and grad_y f.
    With 6000 single-row draws per pair, 1/K = 1/6 has a standard error of 0.005: +-0.03 is 6 standard errors."""
    K = 6
    p = _matrix_rows(K)
    P = p.dim_x

    def index(z, rows):  # which of client 0's rows a single-sample block (R, M, n, k) is
        return ((z[:, 0, :, None, :] - rows[0]) ** 2).sum(-1).argmin(-1)

    def flat(z):
        return z.reshape(z.shape[:3] + (-1,))
    s = p.draw(_stream(4), (3, 150), 1, hessians=3, oracles=("fx", "fy", "J", "H"))  # 40 x 150 per client
    ix = {"fx": index(s.fx, p.rows_f[..., :P]), "fy": index(s.fy, p.rows_f[..., P:]),
          "J": index(flat(-np.swapaxes(s.J, -1, -2)), p.rows_B.reshape(3, K, -1)),
          **{f"H{k}": index(flat(s.H[:, :, :, k]), p.rows_A.reshape(3, K, -1)) for k in range(3)}}
    for a, b in (("fx", "fy"), ("J", "H0"), ("H0", "H1"), ("H1", "H2"), ("fx", "J")):
        assert np.mean(ix[a] == ix[b]) == pytest.approx(1 / K, abs=0.03), (a, b)
    shared = p.draw(_stream(5), (3, 150), 1, oracles=("fx", "fy"), share_f=True)
    assert np.all(index(shared.fx, p.rows_f[..., :P]) == index(shared.fy, p.rows_f[..., P:]))


def test_sigma_g_under_matrix_rows_bounds_the_state_dependent_variance_on_the_ball():
    """sigma_g^2 must bound E||grad_y g(z; i) - grad_y g_m(z)||^2 on the C_f ball (spec §6.0 N2): checked at 2000
    points of the ball's boundary; without matrix rows it is the rows' exact sigma_g."""
    p = _matrix_rows()
    R_x, R_y = p.ball
    sig = p.constants()["sigma_g"].value
    rng = np.random.default_rng(6)
    worst = 0.0
    for _ in range(2000):
        x, y = rng.standard_normal(2), rng.standard_normal(2)
        worst = max(worst, float(p.row_second_moments("gy", R_x * x / np.linalg.norm(x), R_y * y / np.linalg.norm(y)).max()))
    assert worst <= sig**2 and worst > 0.5 * sig**2  # a bound, and not a vacuous one (measured 0.69)
    assert "sup over the C_f ball" in p.constants()["sigma_g"].how
    assert p.constants()["sigma"].value == sig
    assert _matrix_rows(finite_sum_matrices=False).constants()["sigma_g"].value == pytest.approx(0.5)


def test_full_batch_of_matrix_rows_is_the_exact_oracle():
    """b = K without replacement: every oracle (grad_y g's state-dependent part, the Jacobian, each Hessian) is
    the client's exact one up to round-off."""
    K = 6
    p = _matrix_rows(K)
    s = p.draw(_stream(7), (3, 5), K, hessians=4)
    for z in (s.fx, s.fy, s.gy, s.J, s.H, s.gA, s.gB):
        np.testing.assert_allclose(z, 0.0, atol=1e-15)
