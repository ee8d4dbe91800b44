"""Cost claims (issue #23): the recorded gradient evaluations and vectors sent of StR-FedAvg and SCAFFOLD,
round by round, against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* StR-FedAvg (Algorithm 1, spec strfedavg §2 "communication per round"): x-bar to each of the S sampled
  clients, one Delta y_i back from each; K local steps, one stochastic gradient of f_eta each: S K oracle
  calls, S vectors up, S down.
* Tikhonov FedAvg (fixed eta) costs the same.
* SCAFFOLD (Karimireddy et al. 2020, Algorithm 1): the server sends (x, c) to each sampled client, which sends
  (Delta y_i, Delta c_i) back: 2 S vectors each way; K local steps of one gradient each (option II reuses them
  for c_i+): S K oracle calls.
* IPIR-FedAvg (Algorithm 2; spec §2.2 "Communication"): outer iteration t runs R_t = t + R0 rounds of Algorithm 1
  (I20: R_t = t + R0, not t), each S K oracle calls, S vectors up and S down, then broadcasts y^{t+1} to all N
  clients (line 4 of the spec's box: the clients need y^t for the proximal gradient): R_t S K oracle calls, R_t S
  vectors up, R_t S + N down, R_t inner rounds.
* IR-SGD (spec §7 table): one stochastic gradient of the composite h~ + eta_k f~ per iteration, centralized (the
  box names no communication).
* Exact-projection GD (Algorithm 2 with Pi in closed form, spec §7): one projection onto X*_h per iteration and
  no inner rounds.
N = 4 clients, S = 2 without replacement, K = 3 (IPIR: R0 = 3, K = 2); Monte Carlo, 3 replicas.
"""

from __future__ import annotations

from typing import Any

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim, participants
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS
from .oracles import RUNS as ORACLE_RUNS
from .oracles_baselines import PROBLEMS as BASELINE_PROBLEMS
from .oracles_baselines import RUNS as BASELINE_RUNS
from .theorems import src

KEY = "strfedavg"
COST_T = 6
TIKHONOV = ORACLE_RUNS["tikhonov_fedavg"]
COUNTERS = ("oracle_calls", "vectors_up", "vectors_down")
RUNS: dict[str, dict[str, Any]] = {"strfedavg": ORACLE_STEPS, "scaffold": BASELINE_RUNS["scaffold"],
                                   "tikhonov_fedavg": TIKHONOV, "ipir_fedavg": BASELINE_RUNS["ipir_fedavg"],
                                   "ir_sgd": BASELINE_RUNS["ir_sgd"],
                                   "exact_projection_gd": BASELINE_RUNS["exact_projection_gd"]}
PROBLEMS = {name: BASELINE_PROBLEMS.get(name, ORACLE_PROBLEM) for name in RUNS}
MEASURES = {"ipir_fedavg": "stat_sq", "exact_projection_gd": "stat_sq"}  # Algorithm 2 records no dist_sq


def _work(config: RunConfig) -> tuple[int, int]:
    S = participants(str(config.params["participation"]), int(config.problem_params["clients"]))
    return S, S * int(config.params["local_steps"])


def strfedavg_round(config: RunConfig, t: int) -> dict[str, float]:
    S, calls = _work(config)
    return {"oracle_calls": calls, "vectors_up": S, "vectors_down": S}


def scaffold_round(config: RunConfig, t: int) -> dict[str, float]:
    S, calls = _work(config)
    return {"oracle_calls": calls, "vectors_up": 2 * S, "vectors_down": 2 * S}


def ipir_round(config: RunConfig, t: int) -> dict[str, float]:
    R = t + int(config.params["R0"])  # R_t = t + R0 (I20)
    S, calls = _work(config)
    N = int(config.problem_params["clients"])
    return {"oracle_calls": R * calls, "vectors_up": R * S, "vectors_down": R * S + N, "inner_rounds": R}


def ir_sgd_round(config: RunConfig, t: int) -> dict[str, float]:
    return {"oracle_calls": 1}


def exact_projection_round(config: RunConfig, t: int) -> dict[str, float]:
    return {"projections": 1, "inner_rounds": 0}


def _configure(name: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(RUNS[name]), "least_squares", dict(PROBLEMS[name]), int(value), replicas=3,
                         checkpoints=int(value))
    return configure


CASES = {
    "strfedavg": (strfedavg_round, "S = 2 of N = 4, K = 3: S K gradients, S vectors each way",
                  src("Algorithm 1", "spec strfedavg §2, communication per round")),
    "tikhonov_fedavg": (strfedavg_round, "FedAvg on f_eta with a fixed eta, S = 2 of N = 4, K = 3: S K gradients, S "
                        "vectors each way", src("Tikhonov FedAvg baseline", "spec strfedavg §7")),
    "scaffold": (scaffold_round, "S = 2 of N = 4, K = 3: S K gradients, 2 S vectors each way (model and control "
                 "variate)", src("SCAFFOLD: Karimireddy et al. ICML 2020, Algorithm 1", "spec strfedavg §7")),
    "ipir_fedavg": (ipir_round, "R0 = 3, S = 2 of N = 4, K = 2: outer iteration t runs R_t = t + R0 rounds of Algorithm 1 "
                    "(R_t S K gradients, R_t S vectors up) and broadcasts y to the N clients (R_t S + N down)",
                    src("Algorithm 2 (R_t = t + R0, I20)", "spec strfedavg §2.2, communication")),
    "ir_sgd": (ir_sgd_round, "one stochastic gradient of h + eta_k f an iteration",
               src("IR-SGD, refs. [1, 15, 26, 27, 9]", "spec strfedavg §7 table")),
    "exact_projection_gd": (exact_projection_round, "one projection onto X*_h an iteration, no inner rounds",
                            src("Algorithm 2 with Pi in closed form", "spec strfedavg §7")),
}
COUNTERS_OF = {"ipir_fedavg": (*COUNTERS, "inner_rounds"), "ir_sgd": ("oracle_calls",),
               "exact_projection_gd": ("projections", "inner_rounds")}  # centralized: no communication

CLAIMS = tuple(
    cost_claim(id=f"strfedavg.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the oracle least-squares instance: {what}.", source=source,
               configure=_configure(name), per_round=per_round, counters=COUNTERS_OF.get(name, COUNTERS),
               measure=MEASURES.get(name, "dist_sq"),
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, what, source) in CASES.items())
