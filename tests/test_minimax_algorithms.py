"""FESS-GDA (Algorithm 1 of 004_57c332141565532a.txt) against a per-client hand recursion, its special
cases as parameter settings, and bad input."""

import numpy as np
import pytest

from ratecheck.model.participation import Participation
from ratecheck.problems.minimax import make
from ratecheck.registry import make_algorithm
from ratecheck.seeding import Streams
from ratecheck.simulate.engine import run

KEY = "ab" * 32


def hand_fess_gda(prob, params, rounds, replicas, seed=0):
    """Algorithm 1 written literally: loops over replicas, clients and local steps. The sampled
    clients and the noise come from the same named streams the vectorized code uses (the sampling
    stream is consumed once per round, the noise stream once per local step for all clients)."""
    streams = Streams(seed, KEY, range(replicas))
    part = Participation.parse(params["participation"])
    K, p, beta = params["local_steps"], params["p"], params["beta"]
    exl, eyl, exg, eyg = (params[k] for k in ("eta_x_local", "eta_y_local", "eta_x_global", "eta_y_global"))
    x = np.tile(prob.x0, (replicas, 1))
    y = np.tile(prob.y0, (replicas, 1))
    z = x.copy()  # z_0 = x_0
    for _ in range(rounds):
        clients = part.sample(prob.num_clients, streams["sampling"])
        m = clients.shape[1]
        noise = [streams["noise"].normal((m, prob.dim)) * prob.noise for _ in range(K)]
        x_new, y_new, z_new = x.copy(), y.copy(), z.copy()
        for r in range(replicas):
            xs, ys = [], []
            for j in range(m):
                i = int(clients[r, j])
                theta = 2 * np.pi * i / prob.num_clients
                xk, yk = x[r].copy(), y[r].copy()
                for k in range(K):
                    gx = np.sin(xk) + yk @ prob.slopes  # global part of grad_x f_i (sum y = 1)
                    gy = prob.components(xk)
                    arg = prob.omega * xk[None, :] + theta + np.arange(1, 5)[:, None]
                    gx = gx + yk @ (prob.zeta * prob.omega * np.cos(arg)) + noise[k][r, j, :2]
                    gy = gy + prob.zeta * np.sin(arg).sum(axis=1) + noise[k][r, j, 2:]
                    xk, yk = xk - exl * gx, prob.project_y(yk + eyl * gy)  # simultaneous (line 7-8)
                xs.append(xk)
                ys.append(yk)
            # line 13: smoothing once at the server with the round-start x_t, z_t
            x_new[r] = x[r] + exg * (np.mean(xs, axis=0) - x[r]) - exl * exg * K * p * (x[r] - z[r])
            y_new[r] = prob.project_y(y[r] + eyg * (np.mean(ys, axis=0) - y[r]))  # line 14
            z_new[r] = z[r] + beta * (x_new[r] - z[r])  # line 15: the NEW x
        x, y, z = x_new, y_new, z_new
    return x, y, z


@pytest.mark.parametrize("participation", ["full", "without_replacement:2"], ids=["all_clients", "m2"])
def test_fess_gda_matches_the_hand_recursion(participation):
    prob = make(kind="pwmax", clients=4, zeta=0.3, omega=1.5, noise=0.2)
    params = {"eta_x_local": 0.05, "eta_y_local": 0.04, "eta_x_global": 1.5, "eta_y_global": 2.5, "local_steps": 3,
              "p": 0.8, "beta": 0.3, "participation": participation}
    alg = make_algorithm("fess_gda", params)
    streams = Streams(0, KEY, range(3))
    state = alg.init(prob, streams)
    for t in range(4):
        state, costs = alg.round(state, prob, t, streams)
    x, y, z = hand_fess_gda(prob, params, 4, 3)
    np.testing.assert_allclose(state.x, x, atol=1e-13)
    np.testing.assert_allclose(state.y, y, atol=1e-13)
    np.testing.assert_allclose(state.z, z, atol=1e-13)
    # eta_{y,g} = 2.5 > 1 makes the server projection matter: y stays in the simplex
    assert np.allclose(state.y.sum(axis=1), 1.0) and (state.y >= 0).all()
    m = 4 if participation == "full" else 2
    assert costs == {"oracle_calls": m * 3.0, "vectors_up": float(m), "vectors_down": float(m)}


def test_smoothing_is_applied_once_at_the_server():
    """P1: with K local steps the server subtracts eta_xl eta_xg K p (x_t - z_t), nothing locally:
    on a problem whose x-gradient vanishes the round moves x exactly by that amount."""
    prob = make(kind="ncpl", alpha=1e-300, c=1e-300, mu=1.0, x0=0.7, y0=0.0)  # grad_x f ~ 0 at y = 0
    alg = make_algorithm("fess_gda", {"eta_x_local": 0.1, "eta_y_local": 0.1, "eta_x_global": 2.0,
                                      "eta_y_global": 1.0, "local_steps": 5, "p": 3.0, "beta": 0.5})
    streams = Streams(0, KEY, range(1))
    state = alg.init(prob, streams)
    state.z[:] = 0.2  # pretend z has moved: x_t - z_t = 0.5
    new, _ = alg.round(state, prob, 0, streams)
    assert new.x[0, 0] == pytest.approx(0.7 - 0.1 * 2.0 * 5 * 3.0 * 0.5)
    assert new.z[0, 0] == pytest.approx(0.2 + 0.5 * (new.x[0, 0] - 0.2))  # z uses the new x
    # the deviation smoothing='local' compounds over the K local steps and goes through eta_g
    local = make_algorithm("fess_gda", {**alg.to_params(), "smoothing": "local"})
    state = local.init(prob, streams)
    state.z[:] = 0.2
    moved, _ = local.round(state, prob, 0, streams)
    x_K = 0.2 + 0.5 * (1 - 0.1 * 3.0) ** 5
    assert moved.x[0, 0] == pytest.approx(0.7 + 2.0 * (x_K - 0.7))
    assert abs(moved.x[0, 0] - new.x[0, 0]) > 0.1


def test_special_cases_are_parameter_settings():
    """FSGDA and Local SGDA are FESS-GDA with p = 0 (and global steps 1): identical numbers."""
    prob = make(noise=0.5, zeta=0.5, clients=6)
    common = {"eta_x_local": 0.05, "eta_y_local": 0.05, "local_steps": 3, "participation": "without_replacement:3"}
    finals = []
    for name, extra in (("fess_gda", {"p": 0.0, "beta": 0.9}), ("fsgda", {}), ("local_sgda", {})):
        streams = Streams(0, KEY, range(3))
        alg = make_algorithm(name, {**common, **extra})
        state = alg.init(prob, streams)
        for t in range(5):
            state, _ = alg.round(state, prob, t, streams)
        finals.append(np.concatenate([state.x, state.y], axis=1))
    np.testing.assert_array_equal(finals[0], finals[1])
    np.testing.assert_array_equal(finals[0], finals[2])


def test_sgda_is_one_full_gradient_step():
    prob = make(noise=0.0, zeta=0.8, clients=4)
    alg = make_algorithm("sgda", {"eta_x_local": 0.1, "eta_y_local": 0.2, "participation": "full"})
    streams = Streams(0, KEY, range(1))
    state = alg.init(prob, streams)
    new, _ = alg.round(state, prob, 0, streams)
    gx, gy = prob.grads(state.x, state.y)
    np.testing.assert_allclose(new.x, state.x - 0.1 * gx, atol=1e-15)
    np.testing.assert_allclose(new.y, state.y + 0.2 * gy, atol=1e-15)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("fess_gda", {"beta": 1.0}, r"beta = 1.0 is invalid: must be a finite real number > 0 and < 1"),
        ("fess_gda", {"beta": 0.0}, r"beta = 0.0 is invalid: must be a finite real number > 0 and < 1"),
        ("fess_gda", {"p": -1.0}, r"p = -1.0 is invalid: must be a finite real number >= 0"),
        ("fess_gda", {"tracking": "False"}, r"tracking = 'False' is invalid: must be true or false"),
        ("fess_gda", {"local_steps": 2.0}, r"local_steps = 2.0 is invalid: must be an integer"),
        ("fess_gda_two_phase", {"eta_y_local_2": -1}, r"eta_y_local_2 = -1 is invalid"),
        ("fess_gda_two_phase", {"phase1_rounds": -1}, r"phase1_rounds = -1 is invalid"),
        ("fess_gda", {"eta_x_local": 0.0}, "eta_x_local"),
        ("fess_gda", {"local_steps": 0}, "local_steps"),
        ("fess_gda", {"participation": "with_replacement:2"}, "without replacement"),
        ("fess_gda", {"participation": "without_replacement:9"}, "m <= N"),
        ("fsgda", {"p": 1.0}, "p = 0"),
        ("local_sgda", {"eta_x_global": 2.0}, "global steps 1"),
        ("sgda", {"local_steps": 2}, "centralized"),
    ],
)
def test_bad_parameters_fail_early(name, params, match):
    prob = make(clients=4)
    with pytest.raises(ValueError, match=match):
        make_algorithm(name, params).validate(prob)


def test_engine_runs_and_measures_named_points():
    prob = make(kind="ncpl", mu=0.3, noise=0.1, clients=4, zeta=0.1)
    alg = make_algorithm("fess_gda", {"eta_x_local": 0.05, "eta_y_local": 0.02, "p": 2 * prob.l, "beta": 0.01,
                                      "local_steps": 2, "participation": "without_replacement:2"})
    trace = run(alg, prob, 200, replicas=4)
    assert set(trace.final) == {"x", "y", "z"}
    assert {"stat_kappa", "phi_grad_sq", "avg:stat_kappa"} <= set(trace.measures)
    assert np.all(trace.at_end("phi_gap") < 0.5 * trace.measures["phi_gap"][0])  # it made progress


def test_smoothed_agda_alternates_with_local_smoothing():
    """Smoothed-AGDA (spec §7): x+ = x - tau1 (grad_x f + p (x - z)), y+ = y + tau2 grad_y f(x+, y)."""
    prob = make(kind="ncpl", mu=0.5, x0=0.8, y0=0.3)
    tau1, tau2, p, beta = 0.1, 0.05, 2.0, 0.2
    alg = make_algorithm("smoothed_agda", {"eta_x_local": tau1, "eta_y_local": tau2, "p": p, "beta": beta})
    streams = Streams(0, KEY, range(1))
    state = alg.init(prob, streams)
    state.z[:] = 0.5
    new, costs = alg.round(state, prob, 0, streams)
    gx, _ = prob.grads(state.x, state.y)
    x_plus = state.x - tau1 * (gx + p * (state.x - state.z))
    _, gy_plus = prob.grads(x_plus, state.y)
    np.testing.assert_allclose(new.x, x_plus, atol=1e-15)
    np.testing.assert_allclose(new.y, state.y + tau2 * gy_plus, atol=1e-15)
    np.testing.assert_allclose(new.z, 0.5 + beta * (x_plus - 0.5), atol=1e-15)
    assert costs["oracle_calls"] == 2.0  # two samples per step: alternating needs a second gradient
    with pytest.raises(ValueError, match="centralized and alternating"):
        make_algorithm("smoothed_agda", {"local_steps": 2}).validate(prob)
    with pytest.raises(ValueError, match="updates = 'sideways' is invalid: must be one of"):
        make_algorithm("fess_gda", {"updates": "sideways"}).validate(prob)


def test_fedgda_gt_removes_client_drift():
    """Sinusoidal heterogeneity makes real client drift (pitfall P10): with K = 5 large local steps
    Local SGDA stalls at a biased point, FedGDA-GT's tracked direction converges to a stationary point."""
    prob = make(kind="ncpl", mu=1.0, clients=4, zeta=0.5, omega=2.0, x0=0.6)
    params = {"eta_x_local": 0.1, "eta_y_local": 0.1, "local_steps": 5, "participation": "full"}
    gt = run(make_algorithm("fedgda_gt", params), prob, 600, replicas=1)
    plain = run(make_algorithm("local_sgda", params), prob, 600, replicas=1)
    assert gt.at_end("stat_sq")[0] < 1e-20
    assert plain.at_end("stat_sq")[0] > 1e-6  # the drift bias: O((eta_l K)^2) away from stationarity
    with pytest.raises(ValueError, match="tracks the full gradient"):
        make_algorithm("fedgda_gt", {**params, "participation": "without_replacement:2"}).validate(prob)
    # two exchanges a round (Sun & Wei 2022): gradients up and their mean down, then the models
    assert gt.counters["vectors_up"][-1] == gt.counters["vectors_down"][-1] == 2 * 4 * 600


def test_role_swap_runs_fess_gda_on_minus_f_with_smoothing_on_y():
    """spec §2.4(C): p = 0 coincides with FSGDA (role-symmetric round, same noise draws); p > 0 puts the
    server smoothing on y: y+ = y + g_y (ybar - y) - l_y g_y K p (y - z), z+ = z + beta (y+ - z)."""
    prob = make(kind="ncnc_pl", clients=3, zeta=0.2, noise=0.3)
    base = {"eta_x_local": 0.004, "eta_y_local": 0.002, "eta_x_global": 1.5, "eta_y_global": 2.0, "local_steps": 3,
            "participation": "without_replacement:2"}
    finals = []
    for name, params in (("fess_gda_swapped", {**base, "p": 0.0}), ("fsgda", base)):
        alg, streams = make_algorithm(name, params), Streams(5, KEY, range(3))  # same named streams
        state = alg.init(prob, streams)
        for t in range(7):
            state = alg.round(state, prob, t, streams)[0]
        finals.append(state)
    np.testing.assert_allclose(finals[0].x, finals[1].x, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(finals[0].y, finals[1].y, rtol=1e-13, atol=1e-15)
    # one deterministic round with p > 0 by hand, single client, from (x0, y0), z0 = y0
    det = make(kind="ncnc_pl", x0=0.7, y0=-0.4)
    params = {**base, "participation": "full", "p": 3.0, "beta": 0.3}
    alg = make_algorithm("fess_gda_swapped", params)
    state = alg.init(det, Streams(0, KEY, range(1)))
    state.z = state.z + 0.1  # z != y so that the smoothing term acts
    new, _ = alg.round(state, det, 0, Streams(0, KEY, range(1)))
    x, y = det.x0.copy(), det.y0.copy()
    for _ in range(3):
        gx, gy = det.grads(x, y)
        x, y = x - 0.004 * gx, y + 0.002 * gy
    x_new = det.x0 + 1.5 * (x - det.x0)
    y_new = det.y0 + 2.0 * (y - det.y0) - 0.002 * 2.0 * 3 * 3.0 * (det.y0 - (det.y0 + 0.1))
    np.testing.assert_allclose(new.x[0], x_new, rtol=1e-14)
    np.testing.assert_allclose(new.y[0], y_new, rtol=1e-14)
    np.testing.assert_allclose(new.z[0], det.y0 + 0.1 + 0.3 * (y_new - det.y0 - 0.1), rtol=1e-14)
    with pytest.raises(ValueError, match="role swap needs an unconstrained Y"):
        make_algorithm("fess_gda_swapped", {}).validate(make(kind="pwmax"))


def test_two_phase_switches_to_fsgda_on_the_anchored_clients():
    """spec §2.4(B): rounds < T1 are FESS-GDA; afterwards FSGDA (p = 0) on f_i + l ||x - x~||^2, x~ = x_{T1}."""
    prob = make(kind="ncpl", mu=0.5, x0=0.8, y0=0.3)
    phase1 = {"eta_x_local": 0.1, "eta_y_local": 0.05, "p": 2 * prob.l, "beta": 0.2}
    alg = make_algorithm("fess_gda_two_phase", {**phase1, "phase1_rounds": 2, "eta_x_local_2": 0.03,
                                                "eta_y_local_2": 0.02, "eta_x_global_2": 2.0})
    one = make_algorithm("fess_gda", phase1)
    streams = Streams(0, KEY, range(1))
    state, ref = alg.init(prob, streams), one.init(prob, streams)
    for t in range(2):
        state, ref = alg.round(state, prob, t, streams)[0], one.round(ref, prob, t, streams)[0]
    np.testing.assert_allclose(state.x, ref.x, rtol=1e-15)
    anchor = state.x.copy()
    for t in (2, 3):
        x, y = state.x.copy(), state.y.copy()
        gx, gy = prob.grads(x, y)
        x_loc = x - 0.03 * (gx + 2 * prob.l * (x - anchor))  # the anchored client, K = 1
        y_loc = y + 0.02 * gy
        state = alg.round(state, prob, t, streams)[0]
        np.testing.assert_allclose(state.x, x + 2.0 * (x_loc - x), rtol=1e-14)  # no smoothing (p = 0)
        np.testing.assert_allclose(state.y, y_loc, rtol=1e-14)
        np.testing.assert_array_equal(state.anchor, anchor)  # x~ is frozen at the switch
    with pytest.raises(ValueError, match="phase1_rounds"):
        make_algorithm("fess_gda_two_phase", {"phase1_rounds": -1}).validate(prob)
