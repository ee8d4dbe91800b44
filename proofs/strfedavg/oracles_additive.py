"""StR-FedAvg's trajectory oracle where exact mode averages the client sampling through its additive design.

Exact mode enumerates every client set when a round has few (C(N, S) <= N + ratecheck.exact's
SAMPLING_CHECKS); beyond that it reads the round's per-client maps off a design of N sets and averages them
with the multiplicities' exact moments E n_i and E n_i n_k (Participation.multiplicity_moments). The oracle
of proofs/strfedavg/oracles.py runs N = 4, S = 2 (6 sets): the enumerated path only. Here the same
recursion of Algorithm 1 (written from the paper, enumerating all C(7, 3) = 35 sets with probability 1/35
each, no multiplicity moments) is compared with exact mode at N = 7, S = 3, so that a wrong pair-inclusion
probability m(m-1)/(N(N-1)) or a wrong per-client map of the design moves the second moments the claim
compares at round-off.
"""

from __future__ import annotations

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import trajectory_oracle
from ratecheck.trace import RunConfig

from .oracles import KEY, MEASURES, ORACLE_PROBLEM, ORACLE_RTOL, ORACLE_STEPS, ORACLE_T, _oracle
from .theorems import src

# the oracle's TP1 instance with 7 clients; 3 of them a round: C(7, 3) = 35 sets > 7 + 8 (the additive design)
ADDITIVE_PROBLEM = {**ORACLE_PROBLEM, "clients": 7}
ADDITIVE_STEPS = {**ORACLE_STEPS, "participation": "without_replacement:3"}


def additive_config(value: float, profile: Profile) -> RunConfig:
    return RunConfig("strfedavg", dict(ADDITIVE_STEPS), "least_squares", dict(ADDITIVE_PROBLEM), int(value),
                     replicas=1, checkpoints=int(value), mode="exact")


ADDITIVE = trajectory_oracle(
    id="strfedavg.oracle.strfedavg_sampling_moments", paper=KEY,
    title="strfedavg: exact expectations equal Algorithm 1's recursion over 35 client sets (exact mode's "
          "additive sampling design)",
    statement="StR-FedAvg with S = 3 of N = 7 clients without replacement, K = 3, gamma_g = 1.5, Theorem 1's "
              "schedule at R = 40 (mu_f = 0.5, p = 1.5) on TP1 with an inconsistent system (delta = 0.3), row "
              "spectrum 0.2..1, heterogeneous centres (rho = 0.5), sigma_h = 0.6, sigma_f = 0.4: exact mode, which "
              "averages 35 sets through a design of 7 and the multiplicities' moments, gives the exact "
              "E||x^ - x*||^2, E[h(x^) - h*] and E||x^r - x*||^2 of the recursion of Algorithm 1 over all 35 sets "
              "(proofs/strfedavg/oracles.py's recursion; proofs/strfedavg/oracles_additive.py).",
    source=src("Algorithm 1 (I1, I2 fixed), Theorem 1's gamma_tilde, eta, theta; S of N clients without "
               "replacement", "spec §2.1, §6 TP1"),
    configure=additive_config, oracle=_oracle, measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="both sides are exact; the gap is float64 round-off over 40 rounds; a pair-inclusion "
                     "probability or a design map off by a factor moves the second moments by far more.",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})

CLAIMS = (ADDITIVE,)
