"""FedAvg / DeFedAvg semantics against hand-written recursions (noise-free, so exact)."""

import numpy as np
import pytest

from ratecheck import run
from ratecheck.model.participation import Participation
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p2
from ratecheck.registry import make_algorithm
from ratecheck.seeding import ReplicaStream

PROBLEM = make_problem("quadratic", p2(clients=6, sigma=0.0, curvature="per_client", dim=4, mu=0.3))


def _local_update(x, client, steps, lr):
    """Delta = start - end of `steps` exact GD steps on client `client` (spec §2.1)."""
    h, c = PROBLEM.hessians[client], PROBLEM.centers[client]
    y = x.copy()
    for _ in range(steps):
        y = y - lr * h @ (y - c)
    return x - y


def test_fedavg_with_eta_one_and_one_step_is_gradient_descent():
    """Sign check (spec pitfall 2): eta = 1, K = 1, full participation gives x - etabar grad F(x)."""
    alg = make_algorithm("fedavg", dict(eta_global=1.0, eta_local=0.1, local_steps=1))
    trace = run(alg, PROBLEM, 1, replicas=1)
    x0 = PROBLEM.x0
    np.testing.assert_allclose(trace.final["x"][0], x0 - 0.1 * PROBLEM.grad(x0), rtol=1e-12)


def test_delayed_rounds_follow_the_stale_model_recursion():
    """Constant delay d: every job starts from w^{max(0, t-d)} (spec §2.7.2, pitfall 13)."""
    d, K, eta, lr, T = 2, 3, 0.7, 0.05, 12
    alg = make_algorithm("fedavg", dict(eta_global=eta, eta_local=lr, local_steps=K, delay=f"constant:{d}"))
    trace = run(alg, PROBLEM, T, replicas=1)
    w = [PROBLEM.x0.copy()]
    for t in range(T):
        start = w[max(0, t - d)]
        update = np.mean([_local_update(start, i, K, lr) for i in range(PROBLEM.num_clients)], axis=0)
        w.append(w[t] - eta * update)
    np.testing.assert_allclose(trace.final["x"][0], w[-1], rtol=1e-12)


def test_a_client_drawn_twice_counts_twice_with_one_update():
    """With replacement: divide by n, weight by multiplicity (spec §2.6(3), pitfall 3)."""
    n, K, eta, lr, seed = 5, 2, 1.0, 0.1, 11
    alg = make_algorithm("defedavg_niid", dict(eta_global=eta, eta_local=lr, local_steps=K,
                                               participation=f"with_replacement:{n}", delay="none"))
    trace = run(alg, PROBLEM, 1, replicas=4, seed=seed)
    stream = ReplicaStream(seed, trace.config.run_key(), range(4), "sampling")
    clients = Participation("with_replacement", n).sample(PROBLEM.num_clients, stream)
    assert any(len(set(row)) < n for row in clients), "seed chosen so that some row has a duplicate"
    for r in range(4):
        update = np.mean([_local_update(PROBLEM.x0, i, K, lr) for i in clients[r]], axis=0)
        np.testing.assert_allclose(trace.final["x"][r], PROBLEM.x0 - eta * update, rtol=1e-12)
    distinct = np.mean([len(set(row)) for row in clients])
    assert trace.counters["vectors_up"][-1] == pytest.approx(distinct)


def test_niid_refuses_sampling_without_replacement():
    alg = make_algorithm("defedavg_niid", dict(participation="without_replacement:3"))
    with pytest.raises(ValueError, match="defedavg_niid needs participation"):
        run(alg, PROBLEM, 1, replicas=1)


def test_client_drift_fixed_point_with_heterogeneous_curvature():
    """Noise-free FedAvg with H_i != H_j and K > 1 converges to (sum M_i)^-1 sum M_i c_i,
    M_i = I - (I - etabar H_i)^K, not to x* (spec §6 P2 'watch out')."""
    K, lr = 5, 0.2
    alg = make_algorithm("fedavg", dict(eta_global=1.0, eta_local=lr, local_steps=K))
    trace = run(alg, PROBLEM, 400, replicas=1)
    eye = np.eye(PROBLEM.dim)
    M = [eye - np.linalg.matrix_power(eye - lr * h, K) for h in PROBLEM.hessians]
    biased = np.linalg.solve(sum(M), sum(m @ c for m, c in zip(M, PROBLEM.centers)))
    np.testing.assert_allclose(trace.final["x"][0], biased, atol=1e-10)
    assert np.linalg.norm(biased - PROBLEM.x_star) > 1e-2  # the bias is real on this instance
