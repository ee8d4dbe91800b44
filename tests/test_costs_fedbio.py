"""fedbio's cost claims (issue #23): each passes on the code, and one count off in any counter it checks (a cost
mutant, monkeypatched into the first round) turns it into a FAIL (ratecheck.testing.costs)."""

from ratecheck.proofs.fedbio import costs
from ratecheck.testing.costs import cost_tests

test_costs_pass_on_the_code, test_one_count_off_fails, test_replica_changes_fail = cost_tests(costs.CLAIMS)
