"""Exact run mode (issue #8): exact expectations against Monte Carlo, closed forms and broken code."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from scipy import stats

from ratecheck.algorithms.fedavg import DelaySchedule, FedAvg
from ratecheck.algorithms.minimax import FessGDA, MinimaxState
from ratecheck.claims import PROFILES
from ratecheck.exact import NotExact, delay_table, probe_client_update, slot_moments
from ratecheck.model.participation import Participation
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p2
from ratecheck.registry import make_algorithm
from ratecheck.seeding import stable_hash
from ratecheck.simulate.engine import run, run_config
from ratecheck.trace import RunConfig, Trace

# Small heterogeneous instance: per-client curvature (client drift), random centres, noise.
SMALL = p2(dim=4, clients=8, curvature="per_client", zeta=2.0, heterogeneity="random", sigma=0.8)
ROUNDS = 40
MC_REPLICAS = 1024

# (algorithm, parameters): every participation mode, every delay kind, both duplicate conventions
SETTINGS = [
    ("fedavg", dict(participation="full")),
    ("fedavg", dict(participation="full", delay="uniform:2", eta_global=0.8)),
    ("fedavg", dict(participation="without_replacement:3", delay="cyclic:2")),
    ("fedavg", dict(participation="with_replacement:5", duplicates="independent", delay="per_client:1")),
    ("defedavg_niid", dict(participation="with_replacement:5", delay="uniform:2")),
    ("defedavg_niid", dict(participation="with_replacement:3", delay="cyclic:1")),
    ("defedavg_iid", dict(participation="without_replacement:3", delay="constant:2")),
    ("defedavg_iid", dict(participation="full", delay="per_client:2")),
]


def _algorithm(name: str, params: dict):
    return make_algorithm(name, {"eta_local": 0.15, "local_steps": 3, **params})


@pytest.mark.parametrize("name,params", SETTINGS, ids=[f"{a}-{'-'.join(map(str, p.values()))}" for a, p in SETTINGS])
def test_exact_inside_monte_carlo_ci(name, params):
    """Exact expectations lie in the 99% CI of a 1024-replica Monte-Carlo mean at every checkpoint.

    The band is simultaneous over the checkpoints (Bonferroni: each checkpoint at 1 - 0.01/C), so one
    (setting, measure) fails by chance with probability <= 1%. Per-checkpoint 99% intervals over 20
    correlated checkpoints x 5 measures x 8 settings fail by chance alone (seen: z = 3.2 at one
    checkpoint, where the hand recursion agrees with the exact values to 1e-16 and two 16384-replica
    runs give |z| < 1.8). A wrong factor moves the values by far more (see the broken doubles)."""
    problem = make_problem("quadratic", SMALL)
    algorithm = _algorithm(name, params)
    exact = run(algorithm, problem, ROUNDS, mode="exact")
    mc = run(algorithm, problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    assert exact.exact and not mc.exact and exact.replicas == 1
    np.testing.assert_array_equal(exact.checkpoints, mc.checkpoints)
    z = stats.norm.ppf(1 - 0.005 / exact.checkpoints.size)
    for measure in ("grad_norm_sq", "dist_sq", "gap", "avg:grad_norm_sq", "avg:dist_sq"):
        value = exact.measures[measure][:, 0]
        samples = mc.measures[measure]
        mean = samples.mean(axis=1)
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        ok = np.isnan(value) & np.isnan(mean) | (np.abs(value - mean) <= half + 1e-12 * np.abs(mean))
        assert ok.all(), (measure, exact.checkpoints[~ok], value[~ok], mean[~ok], half[~ok])
    # expected costs are the Monte-Carlo costs' expectation (exact when nothing is random)
    for counter in ("oracle_calls", "vectors_up", "vectors_down"):
        assert exact.counters[counter][-1] == pytest.approx(mc.counters[counter][-1], rel=0.01)
    assert exact.info["lambda_used"] == mc.info["lambda_used"]


def test_lyapunov_noise_floor_reproduced():
    """DeFedAvg-IID at a fixed step from x*: the exact E||grad F||^2 converges to the closed-form
    Lyapunov floor (ratecheck.proofs.defedavg.lyapunov_noise_floor) to relative 1e-9."""
    from ratecheck.proofs import defedavg

    for n in (1, 4):
        config = defedavg.floor_config(n, PROFILES["quick"]).with_(mode="exact", rounds=1500)
        trace = run_config(config)
        floor = defedavg.predicted_floor(config)
        assert trace.measures["grad_norm_sq"][-1, 0] == pytest.approx(floor, rel=1e-9)


def test_fedavg_drift_fixed_point_reproduced():
    """FedAvg with client drift: the exact mean converges to x~ = (sum M_i)^-1 sum M_i c_i (1e-9)."""
    from ratecheck.proofs import defedavg

    for eta_local in (0.1, 0.4):
        config = defedavg.drift_config(eta_local, PROFILES["quick"]).with_(mode="exact")
        trace = run_config(config)
        target = defedavg.drift_fixed_point(config)
        np.testing.assert_allclose(trace.final["x"][0], target, rtol=1e-9, atol=1e-9 * np.abs(target).max())


@dataclass(frozen=True)
class MissingServerRate(FedAvg):
    """Broken test double: the server step lacks the factor eta: w^{t+1} = w^t - direction."""

    name: ClassVar[str] = "fedavg_broken_server_rate"

    def server_step(self, x, direction, server, t):
        return x - direction, server


@dataclass(frozen=True)
class SumNotMean(FedAvg):
    """Broken test double: the aggregate lacks the factor 1/m (sums the updates)."""

    name: ClassVar[str] = "fedavg_broken_aggregate"

    def aggregate(self, updates, clients):
        return updates.sum(axis=1)


@dataclass(frozen=True)
class SmoothingOnce(FessGDA):
    """Broken test double: FESS-GDA whose smoothing term lacks the factor K (line 13)."""

    name: ClassVar[str] = "fess_gda_broken_smoothing"

    def round(self, state, problem, t, streams):
        new, costs = super().round(state, problem, t, streams)
        # undo (K - 1)/K of the smoothing: eta_xl eta_xg p (x - z) instead of eta_xl eta_xg K p (x - z)
        fix = self.eta_x_local * self.eta_x_global * (self.local_steps - 1) * self.p * (state.x - state.z)
        x = new.x + fix
        return MinimaxState(x, new.y, new.z + self.beta * fix), costs


def test_broken_fess_gda_changes_exact_values():
    problem = make_problem("minimax", MINIMAX)
    params = dict(MINIMAX_STEPS, p=1.0, beta=0.5)
    good = run(FessGDA(**params), problem, 40, mode="exact")
    bad = run(SmoothingOnce(**params), problem, 40, mode="exact")
    assert good.exact and bad.exact
    assert abs(bad.measures["W"][-1, 0] / good.measures["W"][-1, 0] - 1) > 0.05


@pytest.mark.parametrize("broken", [MissingServerRate, SumNotMean])
def test_broken_algorithm_changes_exact_values(broken):
    """Exact mode reads the algorithm's own code: a missing factor changes the exact values."""
    problem = make_problem("quadratic", SMALL)
    params = dict(eta_local=0.05, local_steps=3, participation="without_replacement:3", eta_global=0.5)
    good = run(FedAvg(**{**params, "participation": Participation.parse(params["participation"])}), problem, 40,
               mode="exact")
    bad = run(broken(**{**params, "participation": Participation.parse(params["participation"])}), problem, 40,
              mode="exact")
    assert good.exact and bad.exact
    relative = np.abs(bad.measures["dist_sq"][-1, 0] / good.measures["dist_sq"][-1, 0] - 1)
    assert relative > 0.05


@dataclass(frozen=True)
class ClippedUpdate(FedAvg):
    """A nonlinear client update (clipping): exact mode must refuse it."""

    name: ClassVar[str] = "fedavg_clipped"

    def client_update(self, problem, batch, start, streams):
        return np.clip(super().client_update(problem, batch, start, streams), -0.05, 0.05)


def test_nonlinear_piece_falls_back_or_raises():
    problem = make_problem("quadratic", SMALL)
    algorithm = ClippedUpdate()
    with pytest.raises(NotExact, match="client_update is not affine"):
        run(algorithm, problem, 5, mode="exact")
    trace = run(algorithm, problem, 5, replicas=4, mode="auto")
    assert not trace.exact and "client_update is not affine" in trace.info["exact_fallback"]
    plain = run(algorithm, problem, 5, replicas=4)  # the fallback draws the same numbers
    np.testing.assert_array_equal(trace.measures["dist_sq"], plain.measures["dist_sq"])


def test_sampling_inside_round_is_exact_or_refused_with_the_count():
    """FESS-GDA samples inside round() (no seams): exact over its sampling now; a round that draws
    anything else uniform, or several client draws a round, still falls back with the reason."""
    problem = make_problem("minimax", {"clients": 8})
    algorithm = make_algorithm("fess_gda", {"participation": "without_replacement:4"})
    assert run(algorithm, problem, 3, mode="auto").exact
    bilevel = make_problem("quadratic_bilevel", dict(dim_x=2, dim_y=2, clients=4))
    uniform_tau = make_algorithm("simfbo", {"local_steps": "uniform:1:3", "participation": "without_replacement:2"})
    trace = run(uniform_tau, bilevel, 3, replicas=2, mode="auto")
    assert not trace.exact and "'local_steps' drew uniform numbers" in trace.info["exact_fallback"]


def test_nonlinear_problem_falls_back():
    problem = make_problem("minimax", {"kind": "tanh"})
    trace = run(make_algorithm("fess_gda", {}), problem, 3, replicas=2, mode="auto")
    assert not trace.exact and "not affine" in trace.info["exact_fallback"]


# FESS-GDA and its settings on the quadratic minimax kind (full participation: the whole round is probed)
MINIMAX = {"clients": 8, "noise": 0.5, "zeta": 0.5, "spread": 0.2}
MINIMAX_STEPS = dict(local_steps=3, eta_x_local=0.1, eta_y_local=0.1)
MINIMAX_SETTINGS = [
    ("fess_gda", dict(MINIMAX_STEPS, p=1.0, beta=0.5, eta_x_global=0.8)),
    ("fsgda", dict(MINIMAX_STEPS, eta_x_global=0.8, eta_y_global=0.9)),
    ("local_sgda", MINIMAX_STEPS),
    ("fedgda_gt", MINIMAX_STEPS),
    ("smoothed_agda", dict(eta_x_local=0.1, eta_y_local=0.1, p=1.0)),
    ("fess_gda_swapped", dict(MINIMAX_STEPS, p=1.0)),
]


@pytest.mark.parametrize("name,params", MINIMAX_SETTINGS, ids=[a for a, _ in MINIMAX_SETTINGS])
def test_minimax_exact_inside_monte_carlo_ci(name, params):
    """As for FedAvg: a simultaneous 99% band over the checkpoints of a 1024-replica mean."""
    problem = make_problem("minimax", MINIMAX)
    algorithm = make_algorithm(name, params)
    exact = run(algorithm, problem, ROUNDS, mode="exact")
    mc = run(algorithm, problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    assert exact.exact
    z = stats.norm.ppf(1 - 0.005 / exact.checkpoints.size)
    for measure in ("W", "dist_sq", "stat_sq", "avg:stat_sq"):
        value, samples = exact.measures[measure][:, 0], mc.measures[measure]
        mean = samples.mean(axis=1)
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        ok = np.isnan(value) & np.isnan(mean) | (np.abs(value - mean) <= half + 1e-12 * np.abs(mean))
        assert ok.all(), (measure, exact.checkpoints[~ok], value[~ok], mean[~ok], half[~ok])
    assert set(exact.final) == set(mc.final)


def test_fsgda_stationary_potential_reproduced():
    """FSGDA at full participation: exact E W converges to the problem's closed-form floor (1e-9)."""
    problem = make_problem("minimax", {"clients": 8, "noise": 0.5, "zeta": 0.5})
    steps = dict(eta_x_local=0.1, eta_y_local=0.1, eta_x_global=0.8, eta_y_global=0.9, local_steps=3)
    trace = run(make_algorithm("fsgda", steps), problem, 3000, mode="exact")
    floor = problem.stationary_potential(**steps, m=problem.num_clients)
    assert trace.measures["W"][-1, 0] == pytest.approx(floor, rel=1e-9)


def test_probed_client_maps_match_hand_recursion():
    """Delta_i = (I - (I - eta H_i)^K)(start - c_i) + noise with Cov = eta^2 sigma^2/d sum_k (I - eta H_i)^{2k}."""
    problem = make_problem("quadratic", SMALL)
    algorithm = _algorithm("fedavg", {})
    maps = probe_client_update(algorithm, problem)
    eye = np.eye(problem.dim)
    lr, K = algorithm.eta_local, algorithm.local_steps
    for i in range(problem.num_clients):
        q = eye - lr * problem.hessians[i]
        A = eye - np.linalg.matrix_power(q, K)
        np.testing.assert_allclose(maps.A[i], A, atol=1e-13)
        np.testing.assert_allclose(maps.b[i], -A @ problem.centers[i], atol=1e-13)
        cov = lr**2 * problem.sigma**2 / problem.dim * sum(np.linalg.matrix_power(q, 2 * k) for k in range(K))
        np.testing.assert_allclose(maps.cov[i], cov, atol=1e-13)
    assert maps.draws == K * problem.dim


@pytest.mark.parametrize("mode,m", [("full", None), ("without_replacement", 2), ("with_replacement", 3)])
def test_slot_moments_by_enumeration(mode, m):
    """E n_i, E n_i^2, E n_i n_k of the multiplicities against all equally likely draws (N = 4)."""
    N = 4
    participation = Participation(mode, m)
    if mode == "full":
        draws = [tuple(range(N))]
    elif mode == "without_replacement":
        draws = list(itertools.combinations(range(N), m))
    else:
        draws = list(itertools.product(range(N), repeat=m))
    counts = np.array([np.bincount(d, minlength=N) for d in draws], dtype=float)
    moments = slot_moments(participation, N, "shared")
    assert counts[:, 0].mean() == pytest.approx(moments.first)
    assert (counts[:, 0] ** 2).mean() == pytest.approx(moments.single)
    assert (counts[:, 0] * counts[:, 1]).mean() == pytest.approx(moments.pair)
    assert moments.same == -moments.pair
    assert (counts > 0).sum(axis=1).mean() == pytest.approx(moments.expected_jobs)


def test_delay_tables_read_off_the_schedule():
    clients = np.arange(5)
    np.testing.assert_allclose(delay_table(DelaySchedule("uniform", 2), clients, 7, 2), np.full((5, 3), 1 / 3))
    cyclic = delay_table(DelaySchedule("cyclic", 2), clients, 7, 2)
    np.testing.assert_array_equal(cyclic.argmax(axis=1), (clients + 7) % 3)
    np.testing.assert_array_equal(delay_table(DelaySchedule("constant", 1), clients, 0, 1)[:, 1], 1.0)


def test_mode_in_config_key_and_trace_roundtrip():
    base = RunConfig("fedavg", {}, "quadratic", dict(SMALL), rounds=5)
    assert base.run_key() == stable_hash(base.identity())  # default mode: the streams are unchanged
    assert "mode" not in base.identity()
    exact = base.with_(mode="exact")
    assert exact.key() != base.key() and exact.identity()["mode"] == "exact"
    with pytest.raises(ValueError, match="parameter mode = 'precise' is invalid"):
        base.with_(mode="precise")
    trace = run_config(exact)
    again = Trace.from_arrays(*trace.to_arrays())
    assert again.exact and again.config.mode == "exact" and again.config.key() == exact.key()


def test_cli_run_exact(capsys):
    from ratecheck.interfaces.cli import main

    assert main(["run", "fedavg", "--problem", "quadratic", "--rounds", "5", "--exact", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"exact": true' in out and '"mode": "exact"' in out
    assert main(["run", "simfbo", "--problem", "quadratic_bilevel", "--rounds", "3", "--replicas", "2",
                 "--set", "local_steps=uniform:1:3", "--auto"]) == 0
    assert "Monte Carlo instead of exact" in capsys.readouterr().out


@dataclass(frozen=True)
class ServerMomentum(FedAvg):
    """A FedAvg variant through the server seam only (heavy-ball momentum on the direction): exact mode
    carries the server state in the augmented state, nothing else to write."""

    name: ClassVar[str] = "fedavg_server_momentum"

    def server_init(self, x0):
        return np.zeros_like(x0)

    def server_step(self, x, direction, server, t):
        momentum = 0.5 * server + direction
        return x - self.eta_global * momentum, momentum


def test_server_state_seam_exact_inside_monte_carlo_ci():
    problem = make_problem("quadratic", SMALL)
    algorithm = ServerMomentum(eta_global=0.5, eta_local=0.15, local_steps=3,
                               participation=Participation.parse("without_replacement:3"),
                               delay=DelaySchedule.parse("uniform:1"))
    exact = run(algorithm, problem, ROUNDS, mode="exact")
    mc = run(algorithm, problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    z = stats.norm.ppf(1 - 0.005 / exact.checkpoints.size)
    for measure in ("grad_norm_sq", "dist_sq", "avg:grad_norm_sq"):
        value, samples = exact.measures[measure][:, 0], mc.measures[measure]
        mean = samples.mean(axis=1)
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        ok = np.isnan(value) & np.isnan(mean) | (np.abs(value - mean) <= half + 1e-12 * np.abs(mean))
        assert ok.all(), (measure, exact.checkpoints[~ok], value[~ok], mean[~ok], half[~ok])


# Algorithms probed through their whole round (RoundModel) whose state carries bookkeeping (a step
# counter, a sum of step sizes, the theta-weighted output average's weight), dict fields (STORM
# momenta) or monitors (running maxima): small noisy instances of the FedBiO, SimFBO and StR-FedAvg
# families, checked as FedAvg is: a simultaneous 99% band over the checkpoints of a 1024-replica mean.
ROUND_MODEL_SETTINGS = [
    ("fedbio", dict(I=3, eta=0.05, gamma=0.1, tau=0.1), "fedbio_bilevel", dict(test="B", clients=3, sigma_f=1.0, sigma_g=1.0)),
    ("fedbioacc", dict(I=3, eta=0.3, gamma=0.3, tau=0.15, alpha_gain=0.5, u_bar=1.0, c_nu=0.5, c_om=0.5, c_u=0.5),
     "fedbio_bilevel", dict(test="A", clients=3, sigma_f=1.0, sigma_g=1.0)),
    ("fedbio_local", dict(I=3, eta=0.3, gamma=0.2, Q=2, tau_N=0.2), "fedbio_bilevel", dict(test="C1", clients=3)),
    ("simfbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="full", radius="off"),
     "quadratic_bilevel", dict(dim_x=2, dim_y=2, clients=4, sigma_f=0.5, sigma_g=0.5, zeta=1.0)),
    ("shrofbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="full", radius="off", local_steps=[1, 2, 3, 1]),
     "quadratic_bilevel", dict(dim_x=2, dim_y=2, clients=4, sigma_f=0.5, sigma_g=0.5, zeta=1.0)),
    ("strfedavg", dict(horizon=40, schedule="strongly_convex", local_steps=2, participation="full"),
     "least_squares", dict(dim=8, rank=4, outer="tp1", mu=0.5, delta=0.1, rho=0.5, sigma_f=0.5, sigma_h=0.5)),
]


@pytest.mark.parametrize("name,params,family,problem_params", ROUND_MODEL_SETTINGS,
                         ids=[a for a, *_ in ROUND_MODEL_SETTINGS])
def test_round_model_exact_inside_monte_carlo_ci(name, params, family, problem_params):
    problem = make_problem(family, problem_params)
    algorithm = make_algorithm(name, params)
    exact = run(algorithm, problem, ROUNDS, mode="exact")
    mc = run(algorithm, problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    assert exact.exact and exact.replicas == 1
    z = stats.norm.ppf(1 - 0.005 / exact.checkpoints.size)
    checked = 0
    for measure, samples in mc.measures.items():
        if measure.removeprefix("avg:") in exact.info.get("exact_omitted", {}):
            assert np.isnan(exact.measures[measure]).all()  # a norm, not a quadratic form: no expectation
            continue
        value = exact.measures[measure][:, 0]
        mean = samples.mean(axis=1)
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        ok = np.isnan(value) & np.isnan(mean) | (np.abs(value - mean) <= half + 1e-10 * np.abs(mean))
        assert ok.all(), (measure, exact.checkpoints[~ok], value[~ok], mean[~ok], half[~ok])
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name,params,family,problem_params",
                         [s for s in ROUND_MODEL_SETTINGS if s[0] in ("fedbioacc", "strfedavg")], ids=["fedbioacc", "strfedavg"])
def test_one_call_probe_of_a_new_map_equals_the_three_call_probe(name, params, family, problem_params, monkeypatch):
    """Rounds whose map changes every round (alpha_t, an output weight) are probed from the check call that
    matched no known map plus ONE call (RoundModel._probe_seen); the three-call probe gives the same moments."""
    from ratecheck.exact import RoundModel

    problem = make_problem(family, problem_params)
    algorithm = make_algorithm(name, params)
    calls = {"seen": 0}
    original = RoundModel._probe_seen

    def counted(self, *args):
        calls["seen"] += 1
        return original(self, *args)

    monkeypatch.setattr(RoundModel, "_probe_seen", counted)
    fast = run(algorithm, problem, ROUNDS, mode="exact")
    assert calls["seen"] >= ROUNDS // 2  # the map did change from round to round
    monkeypatch.setattr(RoundModel, "_probe_seen", lambda self, t, book, seen: RoundModel._probe(self, t, book))
    slow = run(algorithm, problem, ROUNDS, mode="exact")
    for measure, values in slow.measures.items():
        np.testing.assert_allclose(fast.measures[measure], values, rtol=1e-10, atol=1e-14, err_msg=measure)


def test_one_call_probe_still_refuses_a_round_that_turns_nonlinear():
    """The one-call probe checks the new map on the random call that missed every known one: a round that
    is nonlinear from round 5 on (after affine rounds with a changing map) is refused, not mis-modelled."""
    from ratecheck.algorithms.fedbio import FedBiOAcc

    @dataclass(frozen=True)
    class LateNonlinear(FedBiOAcc):
        def round(self, state, problem, t, streams):
            new, costs = super().round(state, problem, t, streams)
            if t >= 5:
                new = dataclasses.replace(new, x=new.x + 0.1 * new.x**2)
            return new, costs

    name, params, family, problem_params = ROUND_MODEL_SETTINGS[1]
    algorithm = LateNonlinear(**params)
    with pytest.raises(NotExact, match="not affine"):
        run(algorithm, make_problem(family, problem_params), 12, mode="exact")


def test_round_model_bookkeeping_that_depends_on_the_iterates_is_refused():
    """A non-array field that follows the iterates is not a moment: NotExact naming it (not a wrong value)."""
    from ratecheck.algorithms.bilevel import SimFBO
    from ratecheck.exact import RoundModel

    @dataclass(frozen=True)
    class Unmonitored(SimFBO):
        name: ClassVar[str] = "simfbo_unmonitored_test_double"
        monitors: ClassVar[tuple[str, ...]] = ()

    problem = make_problem("quadratic_bilevel", dict(dim_x=2, dim_y=2, clients=4, sigma_f=0.5, sigma_g=0.5))
    algorithm = Unmonitored(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="full", radius="off")
    with pytest.raises(NotExact, match="local_v_max"):
        RoundModel(algorithm, problem, 10)


# ------------------------------------------------------------------------------------------------
# Client sampling inside a whole round (RoundModel): outcomes enumerated or additive over the clients


@pytest.mark.parametrize("spec,N", [("without_replacement:2", 5), ("with_replacement:3", 4), ("without_replacement:4", 4)])
def test_enumerated_outcomes_are_the_sampler_distribution(spec, N):
    """Participation.outcomes against 40000 draws of Participation.sample (fixed seed; 8 replicas x 5000 rounds): a chi-square
    test at 0.1% (a wrong multinomial weight moves a cell by far more than sampling noise), exact
    moments against the enumeration, and draws_for making sample() return each outcome."""
    from ratecheck.exact import ProbeStream
    from ratecheck.seeding import ReplicaStream

    participation = Participation.parse(spec)
    clients, probability = participation.outcomes(N)
    assert clients.shape[0] == participation.outcome_count(N) and probability.sum() == pytest.approx(1.0, abs=1e-12)
    index = {tuple(row): k for k, row in enumerate(clients)}
    stream = ReplicaStream(5, "ab" * 32, range(8), "sampling")
    draws = np.vstack([participation.sample(N, stream) for _ in range(5000)])
    counts = np.bincount([index[tuple(sorted(row))] for row in draws], minlength=clients.shape[0])
    if clients.shape[0] > 1:
        assert stats.chisquare(counts, probability * counts.sum()).pvalue > 1e-3
    else:
        assert counts[0] == counts.sum()
    multiplicity = np.stack([np.bincount(row, minlength=N) for row in clients]).astype(float)
    first, second = participation.multiplicity_moments(N)
    np.testing.assert_allclose(probability @ multiplicity, first, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("k,ki,kj->ij", probability, multiplicity, multiplicity), second, rtol=1e-12)
    keys = participation.draws_for(clients, N)
    served = participation.sample(N, ProbeStream(clients.shape[0], None, lambda i, shape: keys, purpose="sampling"))
    np.testing.assert_array_equal(np.sort(served, axis=1), clients)


SAMPLED_BILEVEL = dict(dim_x=2, dim_y=2, clients=6, sigma_f=0.5, sigma_g=0.5, zeta=1.0)
SAMPLED_LEAST_SQUARES = dict(outer="tp1", mu=0.5, delta=0.1, rho=0.5, sigma_f=0.5, sigma_h=0.5, dim=8, rank=4,
                             clients=6, rows=2)
SAMPLED_SETTINGS = [  # (route the model takes: 'enumerated' or 'additive')
    ("simfbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="without_replacement:3", radius="off"),
     "quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=12), "additive"),
    ("shrofbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="without_replacement:2", radius="off",
                     local_steps=[1, 2, 3, 1, 2]), "quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=5), "enumerated"),
    ("simfbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, participation="with_replacement:2", radius="off",
                    local_steps=2), "quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=4), "enumerated"),
    ("fsgda", dict(MINIMAX_STEPS, participation="without_replacement:3", eta_x_global=0.8), "minimax", MINIMAX,
     "additive"),
    ("fess_gda", dict(MINIMAX_STEPS, participation="without_replacement:5", p=1.0, beta=0.5), "minimax", MINIMAX,
     "additive"),
    ("tikhonov_fedavg", dict(local_steps=2, participation="without_replacement:2"), "least_squares",
     SAMPLED_LEAST_SQUARES, "additive"),
]


@pytest.mark.parametrize("name,params,family,problem_params,route", SAMPLED_SETTINGS,
                         ids=[f"{a}-{p['participation']}" for a, p, *_ in SAMPLED_SETTINGS])
def test_sampled_round_exact_inside_monte_carlo_ci(name, params, family, problem_params, route):
    """Sampling inside round(): the exact expectations (over the clients drawn too) lie in a 99% band
    of a 1024-replica Monte-Carlo mean simultaneous over the checkpoints AND the measures (Bonferroni
    over both: up to ten strongly correlated measures per setting; with the band per measure alone,
    Tikhonov FedAvg's dist_sq left it at z = 3.0 with seed 3 and sat at -2 sigma with seed 4 on 4096
    replicas, i.e. chance). A wrong sampling distribution moves the values by far more (see the double)."""
    from ratecheck.exact import RoundModel

    problem = make_problem(family, problem_params)
    algorithm = make_algorithm(name, params)
    model = RoundModel(algorithm, problem, ROUNDS)
    assert (model.sampling.weights is not None) == (route == "enumerated")
    exact = run(algorithm, problem, ROUNDS, mode="exact")
    mc = run(algorithm, problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    assert exact.exact and exact.replicas == 1 and not mc.exact
    compared = [m for m in mc.measures if m.removeprefix("avg:") not in exact.info.get("exact_omitted", {})]
    assert len(compared) >= 2
    z = stats.norm.ppf(1 - 0.005 / (exact.checkpoints.size * len(compared)))
    for measure in compared:
        value, samples = exact.measures[measure][:, 0], mc.measures[measure]
        mean = samples.mean(axis=1)
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        ok = np.isnan(value) & np.isnan(mean) | (np.abs(value - mean) <= half + 1e-10 * np.abs(mean))
        assert ok.all(), (measure, exact.checkpoints[~ok], value[~ok], mean[~ok], half[~ok])
    for counter in ("oracle_calls", "vectors_up"):
        assert exact.counters[counter][-1] == pytest.approx(mc.counters[counter][-1], rel=0.02)


def test_additive_route_equals_enumeration():
    """The additive route (design outcomes + multiplicity moments) and the enumeration of all C(9, 4)
    outcomes give the same expectations (to rounding) and the same expected costs."""
    from ratecheck.exact import RoundModel

    problem = make_problem("quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=9))
    algorithm = make_algorithm("simfbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, radius="off",
                                              participation="without_replacement:4",
                                              local_steps=[1, 2, 3, 1, 2, 2, 1, 1, 3]))
    additive = run(algorithm, problem, 30, mode="exact")
    plan = RoundModel._sampling_plan
    try:
        RoundModel._sampling_plan = lambda self, enumerate_all=False: plan(self, True)
        enumerated = run(algorithm, problem, 30, mode="exact")
    finally:
        RoundModel._sampling_plan = plan
    for name, value in additive.measures.items():
        np.testing.assert_allclose(value, enumerated.measures[name], rtol=1e-9)
    assert additive.counters["oracle_calls"][-1] == pytest.approx(enumerated.counters["oracle_calls"][-1], rel=1e-12)


@dataclass(frozen=True)
class DrawsWithReplacement(FessGDA):
    """Broken test double: FSGDA-style round that draws its m clients WITH replacement where
    Algorithm 1 line 2 says without (its participation field still says without)."""

    name: ClassVar[str] = "fess_gda_broken_sampling"

    def round(self, state, problem, t, streams):
        wrong = Participation("with_replacement", self.participation.per_round(problem.num_clients))
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return FessGDA.round(_Unchecked(**{**fields, "participation": wrong}), state, problem, t, streams)


@dataclass(frozen=True)
class _Unchecked(FessGDA):
    name: ClassVar[str] = "fess_gda_unchecked"
    allowed_modes: ClassVar[tuple[str, ...]] = ("full", "without_replacement", "with_replacement")


def test_wrong_sampling_changes_exact_values():
    """Exact mode averages the sampling the round really does: a double that samples with replacement
    gives the with-replacement values (not the declared ones), a relative change of over 5% here."""
    problem = make_problem("minimax", dict(MINIMAX, clients=6))
    params = dict(MINIMAX_STEPS, participation=Participation.parse("without_replacement:4"), eta_x_global=0.8)
    good = run(FessGDA(**params), problem, 40, mode="exact")
    bad = run(DrawsWithReplacement(**params), problem, 40, mode="exact")
    declared = run(_Unchecked(**{**params, "participation": Participation.parse("with_replacement:4")}), problem, 40,
                   mode="exact")
    for measure in ("W", "stat_sq"):
        np.testing.assert_allclose(bad.measures[measure], declared.measures[measure], rtol=1e-9)
        assert abs(bad.measures[measure][-1, 0] / good.measures[measure][-1, 0] - 1) > 0.05


def test_too_many_outcomes_for_a_non_additive_round_is_refused_with_the_count():
    """ShroFBO with rho estimated over the sampled clients is not additive over them; with more outcomes
    than the cap the run is refused, naming the count (bookkeeping that follows the clients monitored)."""
    from ratecheck.algorithms.bilevel import ShroFBO

    @dataclass(frozen=True)
    class SampledRho(ShroFBO):
        name: ClassVar[str] = "shrofbo_sampled_rho_test_double"
        monitors: ClassVar[tuple[str, ...]] = ("local_v_max", "rho_sum", "rho_min", "rho_max")

    steps = dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, radius="off", rho="sampled")
    small = make_problem("quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=5))
    taus = LocalStepsParse([1, 2, 3, 1, 2])
    assert run(SampledRho(**steps, local_steps=taus, participation=Participation.parse("without_replacement:2")),
               small, 5, mode="exact").exact  # 10 outcomes: enumerated
    big = make_problem("quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=16))
    algorithm = SampledRho(**steps, local_steps=LocalStepsParse([1, 2, 3, 4] * 4),
                           participation=Participation.parse("without_replacement:8"))
    with pytest.raises(NotExact, match="12870 outcomes"):
        run(algorithm, big, 5, mode="exact")


def LocalStepsParse(values):
    from ratecheck.algorithms.bilevel import LocalSteps

    return LocalSteps.parse(values)


# ------------------------------------------------------------------------------------------------
# An overridden schedule() of the FedAvg family: its delays are read off it, its clients checked


def _defedavg_doubles():
    from ratecheck.algorithms.fedavg import DeFedAvgNIID

    @dataclass(frozen=True)
    class DelayOffByOne(DeFedAvgNIID):
        """Broken test double: jobs start one round staler than the schedule says."""

        name: ClassVar[str] = "defedavg_niid_delay_off_by_one_test_double"

        def schedule(self, state, problem, t, streams):
            clients, delays, shared, wall = super().schedule(state, problem, t, streams)
            return clients, delays + 1, shared, wall

        def init(self, problem, streams):
            return self._room_for(super().init(problem, streams), self.delay.lam + 1)

    @dataclass(frozen=True)
    class DistinctClients(DeFedAvgNIID):
        """Broken test double: n distinct clients where the paper draws with replacement."""

        name: ClassVar[str] = "defedavg_niid_without_replacement_test_double"

        def schedule(self, state, problem, t, streams):
            clients, delays, shared, wall = super().schedule(state, problem, t, streams)
            clients = Participation("without_replacement", clients.shape[1]).sample(problem.num_clients,
                                                                                     streams["sampling"])
            return clients, delays, False, wall

    return DeFedAvgNIID, DelayOffByOne, DistinctClients


@pytest.mark.claims  # 1,024 Monte-Carlo replicas: the exact values inside their simultaneous 99% band
def test_overridden_schedule_delays_change_exact_values():
    """A delay off by one inside schedule() changes the exact values (they follow the double's own
    delays: inside the double's simultaneous 99% Monte-Carlo band, lambda_used included); a schedule
    that draws other clients is refused (auto: Monte Carlo), not averaged as the participation says."""
    paper, off_by_one, distinct = _defedavg_doubles()
    problem = make_problem("quadratic", SMALL)
    params = dict(eta_local=0.15, local_steps=3, participation=Participation.parse("with_replacement:5"),
                  delay=DelaySchedule.parse("uniform:2"))
    good = run(paper(**params), problem, ROUNDS, mode="exact")
    bad = run(off_by_one(**params), problem, ROUNDS, mode="exact")
    mc = run(off_by_one(**params), problem, ROUNDS, replicas=MC_REPLICAS, seed=3)
    z = stats.norm.ppf(1 - 0.005 / (bad.checkpoints.size * 2))
    for measure in ("grad_norm_sq", "dist_sq"):
        assert abs(bad.measures[measure][-1, 0] / good.measures[measure][-1, 0] - 1) > 0.1
        value, samples = bad.measures[measure][:, 0], mc.measures[measure]
        half = z * samples.std(axis=1, ddof=1) / np.sqrt(MC_REPLICAS)
        assert (np.abs(value - samples.mean(axis=1)) <= half + 1e-12).all(), measure
    assert bad.info["lambda_used"] == mc.info["lambda_used"] == 3
    with pytest.raises(NotExact, match="draws other clients"):
        run(distinct(**params), problem, 5, mode="exact")
    assert not run(distinct(**params), problem, 5, replicas=2, mode="auto").exact


def test_vouched_t_free_round_equals_verifying_every_round(monkeypatch):
    """A round its algorithm vouches ignores t is probed once and its bookkeeping carried by constant
    steps; the values (and the bookkeeping-based info, rho_bar) equal those of verifying every round."""
    from ratecheck.algorithms.bilevel import SimFBO

    problem = make_problem("quadratic_bilevel", dict(SAMPLED_BILEVEL, clients=8))
    algorithm = make_algorithm("shrofbo", dict(gamma_x=0.1, gamma_y=0.4, gamma_v=0.4, radius="off",
                                               participation="without_replacement:3",
                                               local_steps=[1, 2, 3, 1, 2, 2, 1, 3]))
    carried = run(algorithm, problem, 60, mode="exact")
    monkeypatch.setattr(SimFBO, "t_free_rounds", ())
    verified = run(algorithm, problem, 60, mode="exact")
    for name, value in verified.measures.items():
        np.testing.assert_allclose(carried.measures[name], value, rtol=1e-12, atol=1e-300)
    for key in ("rho_bar", "rho_min", "rho_max"):
        assert carried.info[key] == pytest.approx(verified.info[key], rel=1e-12)
