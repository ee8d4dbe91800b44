"""StR-FedAvg's trajectory oracle on exact mode's additive sampling design (proofs/strfedavg/oracles_additive.py):
it passes on the code, its instance is past the enumeration limit, and a wrong pair-inclusion probability of
sampling without replacement (the second moments E n_i n_k the design averages with) turns it into a FAIL."""

import math

import numpy as np

from ratecheck.exact.round_model import SAMPLING_CHECKS
from ratecheck.model.participation import Participation
from ratecheck.proofs.strfedavg import oracles_additive as additive
from ratecheck.testing import oracles as kit

test_oracle_passes_on_the_code = kit.passes_on_the_code(additive.CLAIMS)


def test_the_instance_averages_its_sampling_through_the_additive_design():
    N, S = additive.ADDITIVE_PROBLEM["clients"], int(additive.ADDITIVE_STEPS["participation"].split(":")[1])
    assert 1 < S < N and math.comb(N, S) > N + SAMPLING_CHECKS  # not enumerated: E n_i n_k are used


def _patch(monkeypatch, mutation):
    original = Participation.multiplicity_moments
    if mutation == "pair_probability_m_squared":  # m^2/N^2, the with-replacement pair term, without replacement

        def moments(self, num_clients):
            first, second = original(self, num_clients)
            if self.mode != "without_replacement":
                return first, second
            m, N = self.per_round(num_clients), num_clients
            off = np.full_like(second, m * m / N**2)
            np.fill_diagonal(off, np.diag(second))
            return first, off
        monkeypatch.setattr(Participation, "multiplicity_moments", moments)


test_plausible_bugs_fail = kit.bugs_fail(additive.CLAIMS, _patch, [
    ("pair_probability_m_squared", kit.short_name(additive.ADDITIVE))])
