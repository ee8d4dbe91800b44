"""DeFedAvg-nIID's noisy replay (proofs/defedavg/oracles_noise.py): round-off on the code as it is, and a
client drawn twice running two independent jobs (the run's own option 'independent', the bug the noise-free
replay cannot see) is a deviation far above the tolerance."""

import dataclasses

import numpy as np

from ratecheck.claims.trajectory import deviation
from ratecheck.proofs.defedavg import oracles_noise as on
from ratecheck.simulate.engine import run_config
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

test_noisy_replay_passes_on_the_code = kit.passes_on_the_code(on.CLAIMS, inexact={"defedavg_niid_noisy_replay"})


def _deviation(**params):
    shared = on.noisy_config(on.ORACLE_T, PROFILE)
    run = dataclasses.replace(shared, params={**shared.params, **params})
    marks = run_config(run).checkpoints
    return float(np.max(deviation(on.noisy_replay(shared, marks), run_config(run), 1e-12)))


def test_the_instance_draws_duplicates_with_noise():
    config = on.noisy_config(on.ORACLE_T, PROFILE)
    n = int(str(config.params["participation"]).split(":")[1])
    assert config.problem_params["sigma"] not in (0.0, 1.0) and n < config.problem_params["clients"]
    assert config.params["local_steps"] > 1 and config.params["eta_global"] != 1
    # 40 rounds of 3 draws from 5 clients: P(no duplicate in a round) = 12/25, so duplicates occur
    assert _deviation() < on.ORACLE_RTOL


def test_independent_jobs_for_a_client_drawn_twice_fail_the_replay():
    assert _deviation(duplicates="independent") > 1e3 * on.ORACLE_RTOL
