"""Exact-mode cost claims (issue #23): the expected costs that exact mode records, against the paper's.

Exact mode does not run the round: it counts each round's expected local jobs from its own multiplicity
moments, so a wrong expectation there (e.g. the chance that a client is drawn at least once) moves no
Monte-Carlo count. Written from ../shared/seeds/003_2fcc6b9d543c5aab.txt, Algorithm 1 S3-S8 and spec defedavg
§2.6(3): n draws uniform with replacement from N clients; each DISTINCT drawn client runs one job of K local
steps and uploads once; S8 sends w^{t+1} to all N. The number of distinct clients D has
E[D] = N (1 - (1 - 1/N)^n) (each client is missed by all n draws with probability (1 - 1/N)^n). Algorithm 2
draws n distinct clients: D = n.
"""

from __future__ import annotations

from ratecheck.claims.costs import cost_claim, sampling_rule
from ratecheck.trace import RunConfig

from .costs import COUNTERS, defedavg_iid_round
from .oracles import ORACLE_T, oracle_configure
from .theorems import KEY, src


def niid_expected_round(config: RunConfig, t: int) -> dict[str, float]:
    """Algorithm 1's expected costs a round: E[D] K gradients, E[D] up, N down (S3-S8)."""
    mode, n = sampling_rule(str(config.params["participation"]))
    if mode != "with_replacement" or n is None:
        raise ValueError(f"{config.algorithm}: Algorithm 1 draws with replacement, got {config.params['participation']!r}")
    N = int(config.problem_params["clients"])
    jobs = N * (1.0 - (1.0 - 1.0 / N) ** n)
    return {"oracle_calls": jobs * int(config.params["local_steps"]), "vectors_up": jobs, "vectors_down": float(N)}


CASES = {
    "defedavg_niid": (niid_expected_round, "n = 3 draws with replacement from N = 5, K = 3: E[D] = N (1 - (1 - 1/N)^n) "
                      "= 2.44 jobs of K steps, E[D] updates up, N models down a round", src("Algorithm 1, S3-S8",
                                                                                            "spec defedavg §2.6(3)")),
    "defedavg_iid": (defedavg_iid_round, "n = 3 distinct of N = 5, K = 3: n K gradients, n up, N down a round",
                     src("Algorithm 2, S2-S6", "spec defedavg §2.3")),
}

CLAIMS = tuple(
    cost_claim(id=f"defedavg.cost.{name}_exact", paper=KEY,
               title=f"{name}: exact mode's expected costs equal the algorithm box's",
               statement=f"{name} in exact mode on the oracle quadratic: {what}.", source=source,
               configure=oracle_configure(name), per_round=per_round, counters=COUNTERS, measure="grad_norm_sq",
               grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)},
               tolerance_reason="expected counts summed in float64 over 40 rounds: round-off below 1e-12")
    for name, (per_round, what, source) in CASES.items())
