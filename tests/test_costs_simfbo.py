"""simfbo's cost claims (issue #23): each passes on the code, and one count off in any counter it checks (a cost
mutant, monkeypatched into the first round) turns it into a FAIL."""

import pytest

from ratecheck.claims import Verdict
from ratecheck.proofs.simfbo import costs
from ratecheck.testing.costs import count_off, decide, mutants


@pytest.mark.parametrize("claim", costs.CLAIMS, ids=lambda c: c.id)
def test_costs_pass_on_the_code(claim):
    outcome = decide(claim)
    assert outcome.verdict == Verdict.PASS, outcome.reason


@pytest.mark.parametrize("claim, counter", list(mutants(costs.CLAIMS)), ids=lambda x: getattr(x, "id", x))
def test_one_count_off_fails(monkeypatch, claim, counter):
    count_off(monkeypatch, claim, counter)
    outcome = decide(claim)
    assert outcome.verdict == Verdict.FAIL, outcome.reason
