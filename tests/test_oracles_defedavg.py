"""DeFedAvg's and FedAvg's trajectory oracles (issue #23 item 2): they pass on the code, and plausible single
bugs in sampling, duplicates, delays, local steps or the noise scale turn them into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import fedavg as fedavg_mod
from ratecheck.problem import SmoothFederatedProblem
from ratecheck.proofs.defedavg import oracles
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

BY_NAME = kit.by_name(oracles.CLAIMS)  # + "defedavg_niid_replay"

# the replay is decided on Monte-Carlo replicas of the event timeline, the others on their exact recursions
test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles.CLAIMS, inexact={"defedavg_niid_replay"})


def test_the_instance_has_every_factor_non_trivial():
    prob = oracles.problem_of(BY_NAME["defedavg_niid"].configure(oracles.ORACLE_T, PROFILE))
    eig = np.linalg.eigvalsh(prob.hessians)
    assert prob.hessians.ndim == 3 and np.ptp(prob.hessians, axis=0).max() > 0.1  # per-client curvature
    assert eig.max() / eig.min() > 3 and prob.sigma not in (0.0, 1.0) and np.ptp(prob.centers) > 0
    assert set(BY_NAME) == {*oracles.ORACLE_RUNS, "defedavg_niid_replay"}
    for run in oracles.ORACLE_RUNS.values():
        assert run["local_steps"] > 1 and run["eta_global"] != 1 and run["delay"] != "none"
        assert int(run["participation"].split(":")[1]) < prob.num_clients  # P < n


def _patch(monkeypatch, mutation):
    if mutation == "duplicates_independent":  # a client drawn twice counted once per distinct draw
        monkeypatch.setattr(fedavg_mod, "first_occurrence", lambda clients: np.broadcast_to(
            np.arange(clients.shape[1]), clients.shape).copy())
    elif mutation == "local_steps_off_by_one":
        original = fedavg_mod.local_sgd
        monkeypatch.setattr(fedavg_mod, "local_sgd", lambda p, b, s, k, lr, n: original(p, b, s, k - 1, lr, n))
    elif mutation == "delay_range":  # U{0..lam-1} instead of U{0..lam}
        original = fedavg_mod.DelaySchedule.sample

        def sample(self, clients, t, stream):
            if self.kind == "uniform":
                return stream.integers(self.lam, clients.shape[1:])
            return original(self, clients, t, stream)
        monkeypatch.setattr(fedavg_mod.DelaySchedule, "sample", sample)
    elif mutation == "noise_scale":  # sigma per coordinate instead of sigma / sqrt(d)
        def stochastic_grad(self, batch, w, noise):
            return self.local_grad(batch, w) + self.sigma * noise.normal(w.shape[1:])
        monkeypatch.setattr(SmoothFederatedProblem, "stochastic_grad", stochastic_grad)
    elif mutation == "cyclic_phase":  # d = (i + t + 1) mod (lam + 1)
        original = fedavg_mod.DelaySchedule.sample

        def sample(self, clients, t, stream):
            return original(self, clients, t + 1 if self.kind == "cyclic" else t, stream)
        monkeypatch.setattr(fedavg_mod.DelaySchedule, "sample", sample)


test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    ("duplicates_independent", "defedavg_niid_replay"), ("delay_range", "defedavg_niid_replay"), ("local_steps_off_by_one", "defedavg_iid"),
    ("delay_range", "defedavg_niid"), ("delay_range", "defedavg_iid"), ("noise_scale", "fedavg"),
    ("cyclic_phase", "fedavg")])
