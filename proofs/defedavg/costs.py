"""Cost claims (issue #23): the recorded gradient evaluations and models sent of FedAvg and DeFedAvg-IID,
round by round, against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* FedAvg (the synchronous baseline, spec defedavg §2.7): the server sends w^t to the n selected clients, each
  runs K local SGD steps (one stochastic gradient each) and sends its model back: n K gradients, n up, n down.
* DeFedAvg-IID (Algorithm 2, S2-S6): n distinct clients' (possibly delayed) updates of K local steps each
  arrive, and S6 broadcasts w^{t+1} to ALL N clients: n K gradients, n up, N down.
N = 5 clients, n = 2 (FedAvg) or 3 (DeFedAvg-IID) without replacement, K = 3, delays on; Monte Carlo, 3
replicas. DeFedAvg-nIID samples with replacement (its distinct clients are random), so it is not here.
"""

from __future__ import annotations

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim, participants
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_RUNS
from .theorems import KEY, src

COST_T = 6
COUNTERS = ("oracle_calls", "vectors_up", "vectors_down")


def _sampled(config: RunConfig) -> tuple[int, int]:
    N = int(config.problem_params["clients"])
    return participants(str(config.params["participation"]), N), N


def fedavg_round(config: RunConfig, t: int) -> dict[str, float]:
    n, _ = _sampled(config)
    return {"oracle_calls": n * int(config.params["local_steps"]), "vectors_up": n, "vectors_down": n}


def defedavg_iid_round(config: RunConfig, t: int) -> dict[str, float]:
    n, N = _sampled(config)
    return {"oracle_calls": n * int(config.params["local_steps"]), "vectors_up": n, "vectors_down": N}


def _configure(name: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(ORACLE_RUNS[name]), "quadratic", dict(ORACLE_PROBLEM), int(value), replicas=3,
                         checkpoints=int(value))
    return configure


CASES = {
    "fedavg": (fedavg_round, "n = 2 of N = 5, K = 3: n K gradients, n models up and n down a round",
               src("FedAvg baseline", "spec defedavg §2.7")),
    "defedavg_iid": (defedavg_iid_round, "n = 3 of N = 5, K = 3, uniform delays up to 2: n K gradients, n updates "
                     "up, w^{t+1} down to all N clients (S6)", src("Algorithm 2, S2-S6", "spec defedavg §2.3")),
}

CLAIMS = tuple(
    cost_claim(id=f"defedavg.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the oracle quadratic (N = 5): {what}.", source=source, configure=_configure(name),
               per_round=per_round, counters=COUNTERS, measure="grad_norm_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, what, source) in CASES.items())
