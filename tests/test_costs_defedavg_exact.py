"""defedavg's exact-mode cost claims (proofs/defedavg/costs_exact.py): they pass on the code, and a relative error
of 1e-6 in exact mode's expected jobs a round (its multiplicity moments) turns each into a FAIL."""

import dataclasses

import pytest

from ratecheck.claims import Verdict
from ratecheck.exact import fedavg as exact_fedavg
from ratecheck.proofs.defedavg import costs_exact
from ratecheck.testing.costs import decide

BY_ID = {claim.id: claim for claim in costs_exact.CLAIMS}

pytestmark = pytest.mark.claims


@pytest.mark.parametrize("claim_id", sorted(BY_ID))
def test_exact_costs_pass_on_the_code(claim_id):
    outcome = decide(BY_ID[claim_id])
    assert outcome.verdict == Verdict.PASS, outcome.reason


@pytest.mark.parametrize("claim_id", sorted(BY_ID))
def test_expected_jobs_off_fails(monkeypatch, claim_id):
    original = exact_fedavg.slot_moments

    def off(*args, **kwargs):  # 1e-6 relative: about 1e-4 of a count over 40 rounds, 1e5 times the tolerance
        moments = original(*args, **kwargs)
        return dataclasses.replace(moments, expected_jobs=moments.expected_jobs * (1 + 1e-6))

    monkeypatch.setattr(exact_fedavg, "slot_moments", off)
    outcome = decide(BY_ID[claim_id])
    assert outcome.verdict == Verdict.FAIL, outcome.reason
