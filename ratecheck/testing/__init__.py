"""``ratecheck.testing``: the conformance kit a plugin's tests import (and ratecheck's own run).

For an algorithm and a problem family, registered by entry points or ``@register``::

    from ratecheck import testing

    def test_my_algorithm_conforms():
        algorithm = make_algorithm("fedavgm")
        problem = testing.small_problem("quadratic")
        testing.conforms(algorithm, problem)                 # same seed, replica independence, round trip
        testing.exact_matches_monte_carlo(algorithm, problem)  # where exact mode accepts the run
        testing.fuzz_algorithm("fedavgm")                     # declared parameters, seeded odd values

    def test_my_claim_flags_a_broken_variant():
        testing.assert_flags(MY_CLAIM, algorithms={"fedavgm": DampedMomentum})

``assert_flags`` runs ``ratecheck.check(claim, algorithms=...)`` with the variant in place of the
registered class and requires the claim to come out other than expected.

A paper's trajectory oracles are tested with ``ratecheck.testing.oracles`` (each passes on the code, each
plausible bug monkeypatched in makes one fail) and its cost claims with ``ratecheck.testing.costs``.
"""

from __future__ import annotations

from .conformance import (
    SMALL,
    algorithm_params_round_trip,
    conforms,
    constants_match_finite_differences,
    exact_matches_monte_carlo,
    home_family,
    offers_what_it_declares,
    problem_params_round_trip,
    replica_independent_of_count,
    same_seed_same_numbers,
    small_problem,
)
from .fuzz import algorithm_kinds, fuzz_algorithm, fuzz_problem, plausible, problem_kinds
from .variants import assert_flags

__all__ = [
    "SMALL", "algorithm_kinds", "algorithm_params_round_trip", "assert_flags", "conforms",
    "constants_match_finite_differences", "exact_matches_monte_carlo", "fuzz_algorithm", "fuzz_problem",
    "home_family", "offers_what_it_declares", "plausible", "problem_kinds", "problem_params_round_trip",
    "replica_independent_of_count", "same_seed_same_numbers", "small_problem",
]
