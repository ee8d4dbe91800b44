"""DeFedAvg-nIID's noisy replay (proofs/defedavg/oracles_noise.py): round-off on the code as it is, and a
client drawn twice running two independent jobs (the run's own option 'independent', the bug the noise-free
replay cannot see) is a deviation far above the tolerance."""

import numpy as np

from ratecheck.algorithms import fedavg as fedavg_mod
from ratecheck.claims.trajectory import deviation
from ratecheck.proofs.defedavg import oracles_noise as on
from ratecheck.seeding import Streams
from ratecheck.simulate.engine import run_config
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

test_noisy_replay_passes_on_the_code = kit.passes_on_the_code(on.CLAIMS, inexact={"defedavg_niid_noisy_replay"})


def _deviation():
    config = on.noisy_config(on.ORACLE_T, PROFILE)
    trace = run_config(config)
    return float(np.max(deviation(on.noisy_replay(config, trace.checkpoints), trace, 1e-12)))


def test_the_instance_draws_duplicates_with_noise():
    config = on.noisy_config(on.ORACLE_T, PROFILE)
    n = int(str(config.params["participation"]).split(":")[1])
    assert config.problem_params["sigma"] not in (0.0, 1.0) and n < config.problem_params["clients"]
    assert config.params["local_steps"] > 1 and config.params["eta_global"] != 1
    streams = Streams(int(config.seed), config.run_key(), range(int(config.replicas)))
    draws = np.stack([streams["sampling"].integers(config.problem_params["clients"], (n,))
                      for _ in range(on.ORACLE_T)])  # (T, R, n): the run's own draws, as the replay reads them
    repeated = (np.sort(draws, axis=-1)[..., 1:] == np.sort(draws, axis=-1)[..., :-1]).any(axis=-1)
    assert repeated.mean() > 0.2  # P(a duplicate in 3 draws from 5) = 13/25
    assert _deviation() < on.ORACLE_RTOL


def test_independent_jobs_for_a_client_drawn_twice_fail_the_replay(monkeypatch):
    # the same run (same streams) with each draw its own job: the bug the noise-free replay cannot see
    monkeypatch.setattr(fedavg_mod, "first_occurrence",
                        lambda clients: np.broadcast_to(np.arange(clients.shape[1]), clients.shape).copy())
    assert _deviation() > 1e3 * on.ORACLE_RTOL
