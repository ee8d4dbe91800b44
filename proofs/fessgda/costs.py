"""Cost claims (issue #23): FESS-GDA's and FedGDA-GT's recorded oracle calls and vectors sent, round by round,
against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* FESS-GDA (Algorithm 1, ../shared/seeds, spec §2): each of the P sampled clients runs K local GDA steps, one
  stochastic gradient pair each (K oracle calls), and exchanges one model (x, y) with the server each way.
* FedGDA-GT (Sun & Wei 2022, Algorithm 1): every client evaluates its gradient at the server point once for
  the tracking correction, then K corrected local steps: K + 1 gradient pairs; two rounds of communication
  per round (the global gradient is averaged, then the local models), so 2 m vectors each way.
FSGDA (p = 0) and Local SGDA (unit global steps) cost the same as FESS-GDA.
* Smoothed-AGDA (Zhang et al. 2020; stochastic: Yang et al. 2022b; spec §7), centralized and alternating: every
  iteration takes two stochastic gradients of f = mean of the M clients' f_i, one at (x, y) for the x-step and one
  at (x+, y) for the y-step: 2 M client gradient pairs (the oracle calls only: it is no federated method, so the
  box names no communication).
Run on 4 clients with P = 2 or 3, K = 3, Monte Carlo with 3 replicas (the costs do not depend on draws).
"""

from __future__ import annotations

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim, participants
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS
from .oracles_variants import RUNS as VARIANT_RUNS
from .theorems import KEY, src

COST_T = 7
RUNS = {"fess_gda": ORACLE_STEPS, "fsgda": {**ORACLE_STEPS, "p": 0.0},
        "local_sgda": {**ORACLE_STEPS, "p": 0.0, "eta_x_global": 1.0, "eta_y_global": 1.0,
                       "participation": "without_replacement:3"},
        "smoothed_agda": VARIANT_RUNS["smoothed_agda"],
        "fedgda_gt": {"eta_x_local": 0.12, "eta_y_local": 0.09, "local_steps": 3, "participation": "full"}}


def fess_gda_round(config: RunConfig, t: int) -> dict[str, float]:
    P = participants(config.params["participation"], int(config.problem_params["clients"]))
    return {"oracle_calls": P * int(config.params["local_steps"]), "vectors_up": P, "vectors_down": P}


def fedgda_gt_round(config: RunConfig, t: int) -> dict[str, float]:
    m = int(config.problem_params["clients"])
    return {"oracle_calls": m * (int(config.params["local_steps"]) + 1), "vectors_up": 2 * m, "vectors_down": 2 * m}


def smoothed_agda_round(config: RunConfig, t: int) -> dict[str, float]:
    return {"oracle_calls": 2 * int(config.problem_params["clients"])}


def _configure(name: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(RUNS[name]), "minimax", dict(ORACLE_PROBLEM), int(value), replicas=3,
                         checkpoints=int(value))
    return configure


CASES = {
    "fess_gda": (fess_gda_round, "P = 2 of 4 clients, K = 3: P K gradient pairs, P models up and P down a round",
                 src("Algorithm 1 (lines 4-9)", "spec §2.4")),
    "fsgda": (fess_gda_round, "FSGDA (p = 0), P = 2 of 4, K = 3: the same costs", src("Algorithm 1 with p = 0",
              "spec §2.4")),
    "local_sgda": (fess_gda_round, "Local SGDA, P = 3 of 4, K = 3: the same costs", src("baseline Local SGDA",
                   "spec §7")),
    "fedgda_gt": (fedgda_gt_round, "all 4 clients, K = 3: m (K + 1) gradient pairs (the tracking gradient at the "
                  "server point and K local steps), 2 m vectors each way a round",
                  src("baseline FedGDA-GT: Sun & Wei 2022, Algorithm 1", "spec §2.5")),
    "smoothed_agda": (smoothed_agda_round, "centralized on the mean of the 4 clients, alternating: 2 M gradient pairs "
                      "a round (the x-step's at (x, y), the y-step's at (x+, y))",
                      src("Smoothed-AGDA: Zhang et al. 2020; Yang et al. 2022b", "spec §7")),
}
COUNTERS = {"smoothed_agda": ("oracle_calls",)}  # centralized: no communication in its box

CLAIMS = tuple(
    cost_claim(id=f"fessgda.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the oracle quadratic, {what}.", source=source, configure=_configure(name),
               per_round=per_round, counters=COUNTERS.get(name, ("oracle_calls", "vectors_up", "vectors_down")),
               measure="stat_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, what, source) in CASES.items())
