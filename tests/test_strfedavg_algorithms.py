"""StR-FedAvg, IPIR-FedAvg and the baselines against plain per-client recursions."""

import math

import numpy as np
import pytest

from ratecheck.model.participation import Participation
from ratecheck.params import ParamError
from ratecheck.problems import least_squares as ls
from ratecheck.problems import make_problem
from ratecheck.registry import make_algorithm
from ratecheck.seeding import Streams
from ratecheck.simulate.engine import run

SMALL = {"dim": 8, "rank": 4, "clients": 4, "rows": 1, "mu": 0.5, "lam_min": 0.5, "lam_max": 1.0, "rho": 1.0}


def test_k1_full_participation_is_gd_on_f_eta():
    p = ls.tp0()
    alg = make_algorithm("strfedavg", {"horizon": 20, "schedule": "fixed", "eta": 0.3, "gamma_tilde": 0.4,
                                       "local_steps": 1, "participation": "full"})
    trace = run(alg, p, 20, replicas=2)
    x = p.x0.copy()
    xs = []
    for _ in range(20):
        xs.append(x)
        x = x - 0.4 * p.global_grads(x[None], 0.3)[0]
    np.testing.assert_allclose(trace.final["last"][0], x, atol=1e-13)
    theta = 1 / (1 - 0.5 * 0.3 * 1.0 * 0.4)
    w = theta ** np.arange(1, 21)
    np.testing.assert_allclose(trace.final["x"][0], (w[:, None] * np.array(xs)).sum(0) / w.sum(), atol=1e-13)


def test_matches_a_per_client_hand_recursion_with_noise_and_sampling():
    p = make_problem("least_squares", {**SMALL, "sigma_h": 0.7, "sigma_f": 0.4})
    R, K, S, gg = 6, 3, 2, 2.0
    alg = make_algorithm("strfedavg", {"horizon": R, "schedule": "strongly_convex", "local_steps": K, "gamma_g": gg,
                                       "participation": f"without_replacement:{S}"})
    trace = run(alg, p, R, replicas=3, seed=5)
    par = alg.parameters(p)
    # the same streams, drawn in the algorithm's documented order, per client in a plain loop
    streams = Streams(5, trace.config.run_key(), range(3))
    part = Participation("without_replacement", S)
    n = p.dim
    x = np.tile(p.x0, (3, 1))
    acc, total = np.zeros_like(x), 0.0
    for r in range(1, R + 1):
        weight = par["theta"] ** (r - R)
        acc += weight * x
        total += weight
        clients = part.sample(p.num_clients, streams["sampling"])
        y = np.repeat(x[:, None, :], S, axis=1)
        for _ in range(K):
            zeta = streams["noise"].normal((S, n)).copy()
            xi = streams["noise"].normal((S, n)).copy()
            new = y.copy()
            for rep in range(3):
                for j, i in enumerate(clients[rep]):
                    gh = p.A[i].T @ (p.A[i] @ y[rep, j] - p.b[i]) + 0.7 / math.sqrt(n) * zeta[rep, j]
                    gf = y[rep, j] @ p.outer.P - p.outer.q[i] + 0.4 / math.sqrt(n) * xi[rep, j]
                    new[rep, j] = y[rep, j] - par["gamma_l"] * (gh + par["eta"] * gf)
            y = new
        x = x + gg * (y - x[:, None, :]).mean(axis=1)
    np.testing.assert_allclose(trace.final["last"], x, atol=1e-12)
    np.testing.assert_allclose(trace.final["x"], acc / total, atol=1e-12)


def test_schedules_follow_the_spec_table():
    p = make_problem("least_squares", {})
    R, K, gg = 1000, 5, 2.0
    sc = make_algorithm("strfedavg", {"horizon": R, "local_steps": K, "gamma_g": gg}).parameters(p)
    mu = 1e-4
    assert sc["gamma_tilde"] == pytest.approx((mu * R) ** (-2 / 3))
    assert sc["eta"] == pytest.approx(math.log(R) / (mu * R) ** (1 / 3))
    assert sc["gamma_l"] == pytest.approx(sc["gamma_tilde"] / (gg * K))
    assert sc["theta"] == pytest.approx(1 / (1 - 0.5 * sc["eta"] * mu * sc["gamma_tilde"]))
    cv = make_algorithm("strfedavg", {"horizon": R, "schedule": "convex", "a": 0.5, "b": 0.25}).parameters(p)
    assert (cv["gamma_tilde"], cv["eta"], cv["theta"]) == pytest.approx((R ** -0.5, R ** -0.25, 1.0))
    ex = make_algorithm("strfedavg", {"horizon": R, "schedule": "paper_experiment", "a": 0.5, "b": 0.25,
                                      "local_steps": K, "gamma_g": gg, "offset": 10.0}).parameters(p)
    assert ex["gamma_l"] == pytest.approx((R + 10) ** -0.5)  # no 1/(gamma_g K): I28
    assert ex["gamma_tilde"] == pytest.approx(gg * K * (R + 10) ** -0.5)


def test_theta_average_does_not_overflow_for_long_horizons():
    alg = make_algorithm("strfedavg", {"horizon": 10**7, "schedule": "fixed", "eta": 1.0, "gamma_tilde": 1.0,
                                       "mu_f": 1.0})
    assert alg.output_weight(1.9, 1) == 0.0 and alg.output_weight(1.9, 10**7) == 1.0


@pytest.mark.parametrize("params, name", [
    ({"a": 0.3, "b": 0.4}, "b"),
    ({"a": 0.8, "b": 0.3}, "a"),
    ({"schedule": "convex", "a": 0.6, "b": 0.4}, "a"),
    ({"schedule": "fixed"}, "eta"),
    ({"gamma_g": 0.5}, "gamma_g"),
    ({"horizon": 1}, "horizon"),
    ({"local_steps": True}, "local_steps"),
])
def test_bad_parameters_are_refused(params, name):
    with pytest.raises(ParamError, match=name):
        make_algorithm("strfedavg", params)


def test_more_sampled_clients_than_clients_is_refused():
    p = make_problem("least_squares", SMALL)
    alg = make_algorithm("strfedavg", {"participation": "without_replacement:5"})
    with pytest.raises(ParamError, match="participation"):
        run(alg, p, 3, replicas=1)
    with pytest.raises(ValueError, match="lam"):
        make_algorithm("ipir_fedavg", {"lam": 0.0})
    with pytest.raises(ParamError, match="lam"):
        run(make_algorithm("ipir_fedavg", {}), p, 2, replicas=1)  # the problem defines no lambda


def test_ipir_inner_loop_is_strfedavg_on_the_projection_problem():
    p = make_problem("least_squares", {**SMALL, "outer": "tp3b", "lam": 0.5, "mu": 1.0})
    alg = make_algorithm("ipir_fedavg", {"R0": 5, "participation": "full", "local_steps": 2})
    trace = run(alg, p, 3, replicas=1)
    assert trace.counters["inner_rounds"][-1] == 5 + 6 + 7
    assert trace.counters["vectors_up"][-1] == 4 * (5 + 6 + 7)
    # hand recursion: inner GD-like rounds on h + eta_t/2 ||x - y||^2, outer step with (y - x)/lam
    y = p.x0.copy()
    gamma = 0.5 / (4 * (p.constants()["L_f"].value * 0.5 + 2))
    for t in range(3):
        s = alg.inner_schedule(t)
        x, acc, tot = y.copy(), np.zeros_like(y), 0.0
        for r in range(1, s["R"] + 1):
            w = s["theta"] ** (r - s["R"])
            acc, tot = acc + w * x, tot + w
            ends = []
            for i in range(p.num_clients):
                z = x.copy()
                for _ in range(2):
                    z = z - s["gamma_l"] * (p.A[i].T @ (p.A[i] @ z - p.b[i]) + s["eta"] * (z - y))
                ends.append(z)
            x = x + np.mean(ends, axis=0) - x
        y = y - gamma * (p.outer.grad(y) + (y - acc / tot) / 0.5)
    np.testing.assert_allclose(trace.final["y"][0], y, atol=1e-12)


def test_exact_projection_gd_and_ir_sgd_and_scaffold_run():
    p = make_problem("least_squares", {**SMALL, "outer": "tp3b", "lam": 0.5, "mu": 1.0})
    trace = run(make_algorithm("exact_projection_gd", {}), p, 400, replicas=1)
    assert trace.measures["y_dist_sq"][-1, 0] < 1e-12
    q = make_problem("least_squares", {**SMALL, "eta_ref": 0.5})
    trace = run(make_algorithm("scaffold", {"eta": 0.5, "gamma_tilde": 0.2, "local_steps": 5,
                                            "participation": "full"}), q, 800, replicas=1)
    assert trace.measures["last_dist_sq_eta"][-1, 0] < 1e-20  # control variates remove the drift
    drift = run(make_algorithm("tikhonov_fedavg", {"eta": 0.5, "gamma_tilde": 0.2, "local_steps": 5,
                                                   "participation": "full"}), q, 300, replicas=1)
    assert drift.measures["last_dist_sq_eta"][-1, 0] > 1e-8
    with pytest.raises(ParamError, match="participation"):  # SCAFFOLD samples a set (c = mean_i c_i)
        make_algorithm("scaffold", {"participation": "with_replacement:3"}).validate(q)
    ir = run(make_algorithm("ir_sgd", {"gamma0": 0.5, "eta0": 1.0}), q, 3000, replicas=1)
    assert ir.measures["dist_sq"][-1, 0] < ir.measures["dist_sq"][0, 0]


def test_ipir_anchor_is_an_array_from_the_start_and_exact_mode_matches_the_runs():
    """The anchor (y^0 before the first step) keeps the state's arrays typed, so IPIR runs exactly;
    its noise-free runs then agree with Monte Carlo to rounding."""
    from ratecheck.simulate.engine import run_config
    from ratecheck.trace import RunConfig

    params = {**SMALL, "outer": "tp3b", "lam": 0.25, "mu": 1.0, "lam_min": 2.0, "lam_max": 2.0}
    alg = make_algorithm("ipir_fedavg", {"R0": 10, "participation": "full"})
    state = alg.init(make_problem("least_squares", params), Streams(0, "t", range(2)))
    assert isinstance(state.anchor, np.ndarray) and np.array_equal(state.anchor, state.y)
    config = RunConfig("ipir_fedavg", {"R0": 10, "participation": "full"}, "least_squares", params, rounds=6,
                       replicas=2)
    mc, exact = run_config(config), run_config(config.with_(mode="exact", replicas=1))
    assert exact.exact
    for name in ("stat_sq", "y_dist_sq", "inner_err_sq", "y_feas_sq"):
        np.testing.assert_allclose(exact.measures[name][:, 0], mc.measures[name][:, 0], rtol=1e-8, atol=1e-12)
    assert math.isnan(exact.info["max_dist"]) and mc.info["max_dist"] > 0  # a monitor: not tracked exactly


def test_printed_exponent_range_is_a_named_option():
    with pytest.raises(ParamError, match="a \\+ b"):
        make_algorithm("strfedavg", {"a": 0.9, "b": 0.5})
    alg = make_algorithm("strfedavg", {"a": 0.9, "b": 0.5, "exponents": "printed"})
    assert alg.a + alg.b > 1
