"""Cost claims (issue #23): the recorded gradient evaluations and vectors sent of StR-FedAvg and SCAFFOLD,
round by round, against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* StR-FedAvg (Algorithm 1, spec strfedavg §2 "communication per round"): x-bar to each of the S sampled
  clients, one Delta y_i back from each; K local steps, one stochastic gradient of f_eta each: S K oracle
  calls, S vectors up, S down.
* Tikhonov FedAvg (fixed eta) costs the same.
* SCAFFOLD (Karimireddy et al. 2020, Algorithm 1): the server sends (x, c) to each sampled client, which sends
  (Delta y_i, Delta c_i) back: 2 S vectors each way; K local steps of one gradient each (option II reuses them
  for c_i+): S K oracle calls.
N = 4 clients, S = 2 without replacement, K = 3; Monte Carlo, 3 replicas.
"""

from __future__ import annotations

from typing import Any

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim, participants
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS
from .oracles import RUNS as ORACLE_RUNS
from .oracles_baselines import RUNS as BASELINE_RUNS
from .theorems import src

KEY = "strfedavg"
COST_T = 6
TIKHONOV = ORACLE_RUNS["tikhonov_fedavg"]
COUNTERS = ("oracle_calls", "vectors_up", "vectors_down")
RUNS: dict[str, dict[str, Any]] = {"strfedavg": ORACLE_STEPS, "scaffold": BASELINE_RUNS["scaffold"],
                                   "tikhonov_fedavg": TIKHONOV}


def _work(config: RunConfig) -> tuple[int, int]:
    S = participants(str(config.params["participation"]), int(config.problem_params["clients"]))
    return S, S * int(config.params["local_steps"])


def strfedavg_round(config: RunConfig, t: int) -> dict[str, float]:
    S, calls = _work(config)
    return {"oracle_calls": calls, "vectors_up": S, "vectors_down": S}


def scaffold_round(config: RunConfig, t: int) -> dict[str, float]:
    S, calls = _work(config)
    return {"oracle_calls": calls, "vectors_up": 2 * S, "vectors_down": 2 * S}


def _configure(name: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(RUNS[name]), "least_squares", dict(ORACLE_PROBLEM), int(value), replicas=3,
                         checkpoints=int(value))
    return configure


CASES = {
    "strfedavg": (strfedavg_round, "S = 2 of N = 4, K = 3: S K gradients, S vectors each way",
                  src("Algorithm 1", "spec strfedavg §2, communication per round")),
    "tikhonov_fedavg": (strfedavg_round, "FedAvg on f_eta with a fixed eta, S = 2 of N = 4, K = 3: S K gradients, S "
                        "vectors each way", src("Tikhonov FedAvg baseline", "spec strfedavg §7")),
    "scaffold": (scaffold_round, "S = 2 of N = 4, K = 3: S K gradients, 2 S vectors each way (model and control "
                 "variate)", src("SCAFFOLD: Karimireddy et al. ICML 2020, Algorithm 1", "spec strfedavg §7")),
}

CLAIMS = tuple(
    cost_claim(id=f"strfedavg.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the oracle least-squares instance: {what}.", source=source,
               configure=_configure(name), per_round=per_round, counters=COUNTERS, measure="dist_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, what, source) in CASES.items())
