"""Cost claims (issue #23): FedBiO's and FedBiOAcc's recorded oracle calls, communication rounds and floats
sent, iteration by iteration, against the costs of the paper's algorithm boxes (ratecheck.claims.costs),
summarized in spec fedbio §2.5:

* FedBiO (Algorithm 1): per client and iteration one grad_y g on b_y samples and grad_x f, grad_y f, a JVP and
  an HVP on b_x samples each: b_y + 4 b_x oracle calls; every I-th iteration (t + 1 = 0 mod I) the clients
  average x, y, u: one communication round, p + 2d floats up per client and the averages, p + 2d floats, down.
* FedBiOAcc (Algorithm 2): the same oracles at two points (STORM) with one batch size b: 2 (b + 4 b) = 10 b
  per client and iteration; at a sync x, y, u and the momenta omega, nu, q: 2 (p + 2d) floats up per client and
  as many down. The first batch (line 2: the five oracles on b1 samples, 5 b1 calls per client) is counted in
  the first iteration (the run samples it: first_batch 'sampled', b1 = 5).
* FedBiOAcc-Local (Algorithm 4, spec §2.5): one grad_y g on b_y = bM samples and b times (grad_x f, grad_y f, Q
  HVPs, a JVP), at two points: 2 (b M + b (Q + 3)) per client and iteration; x and nu at a sync: 2p floats up.
* FedBiO-Local (Algorithm 3, spec §2.5): one grad_y g on b_y samples and b_x Neumann estimators of eq. (6), each
  grad_x f, grad_y f, a JVP and Q HVPs: b_y + b_x (Q + 3) per client and iteration; at a sync only x: p floats up
  per client.
* MRBO (Algorithm 4 with M = 1; Yang, Ji, Liang 2021): FedBiOAcc-Local's costs at M = 1, b_y = b: 2 (b + b (Q + 3))
  oracle calls an iteration, and Algorithm 4's sync (x and nu, 2p floats) every I-th iteration (I = 3 here).
* StocBiO (Ji, Yang, Liang 2021, Algorithms 1-2; M = 1): D inner steps on b_y samples, then grad_x f, grad_y f,
  a JVP and Q HVPs on b samples each: D b_y + b (Q + 3) oracle calls; no communication.
Test B with M = 3 clients, I = 3, T = 8 (not a multiple of I), b_x = 2 != b_y = 3; Monte Carlo, 3 replicas.
"""

from __future__ import annotations

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .oracles import FAMILY, LOCAL_PROBLEM, LOCAL_STEPS, ORACLE_PROBLEM, ORACLE_STEPS, acc_oracle_config
from .oracles_baselines import CASES as BASELINES
from .oracles_baselines import PROBLEM
from .theorems import src

KEY = "fedbio"
COST_T = 8
COUNTERS = ("oracle_calls", "communication_rounds", "floats_up")
DOWN = ("fedbio", "fedbioacc")  # their boxes' broadcasts are checked too (floats_down)
FIRST_BATCH = 5  # FedBiOAcc's b1 in its cost run


def fedbio_round(config: RunConfig, t: int) -> dict[str, float]:
    prob, q = problem_of(config), config.params
    M, p, d = int(config.problem_params["clients"]), prob.dim_x, prob.dim_y
    sync = float((t + 1) % int(q["I"]) == 0)
    return {"oracle_calls": M * (int(q["by"]) + 4 * int(q["bx"])), "communication_rounds": sync,
            "floats_up": sync * M * (p + 2 * d), "floats_down": sync * M * (p + 2 * d)}


def fedbioacc_round(config: RunConfig, t: int) -> dict[str, float]:
    prob, q = problem_of(config), config.params
    M, p, d = int(config.problem_params["clients"]), prob.dim_x, prob.dim_y
    sync = float((t + 1) % int(q["I"]) == 0)
    first = int(q["b1"]) if t == 0 else 0  # Algorithm 2 line 2: the first batch, five oracles on b1 samples
    return {"oracle_calls": M * (2 * 5 * int(q["b"]) + 5 * first), "communication_rounds": sync,
            "floats_up": sync * M * 2 * (p + 2 * d), "floats_down": sync * M * 2 * (p + 2 * d)}


def fedbioacc_local_round(config: RunConfig, t: int) -> dict[str, float]:
    q, M, p = config.params, int(config.problem_params["clients"]), problem_of(config).dim_x
    b, Q, sync = int(q["b"]), int(q["Q"]), float((t + 1) % int(q["I"]) == 0)
    return {"oracle_calls": M * 2 * (b * M + b * (Q + 3)), "communication_rounds": sync, "floats_up": sync * M * 2 * p}


def fedbio_local_round(config: RunConfig, t: int) -> dict[str, float]:
    q, M, p = config.params, int(config.problem_params["clients"]), problem_of(config).dim_x
    sync = float((t + 1) % int(q["I"]) == 0)
    return {"oracle_calls": M * (int(q["by"]) + int(q["bx"]) * (int(q["Q"]) + 3)), "communication_rounds": sync,
            "floats_up": sync * M * p}


def stocbio_round(config: RunConfig, t: int) -> dict[str, float]:
    q = config.params
    return {"oracle_calls": int(q["D"]) * int(q["by"]) + int(q["b"]) * (int(q["Q"]) + 3), "communication_rounds": 0,
            "floats_up": 0}


def _baseline_config(name: str):
    case = BASELINES[name]

    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(case["steps"]), FAMILY, {**PROBLEM, **case["problem"]}, int(value), replicas=3,
                         checkpoints=int(value))
    return configure


def _fedbio_local_config(value: float, profile: Profile) -> RunConfig:
    return RunConfig("fedbio_local", dict(LOCAL_STEPS), FAMILY, dict(LOCAL_PROBLEM), int(value), replicas=3,
                     checkpoints=int(value))


def _mrbo_config(value: float, profile: Profile) -> RunConfig:  # I = 3: the sync schedule is not every iteration
    case = BASELINES["mrbo_like"]
    return RunConfig("mrbo_like", {**case["steps"], "I": 3}, FAMILY, {**PROBLEM, **case["problem"]}, int(value),
                     replicas=3, checkpoints=int(value))


def _fedbio_config(value: float, profile: Profile) -> RunConfig:
    return RunConfig("fedbio", dict(ORACLE_STEPS), FAMILY, dict(ORACLE_PROBLEM), int(value), replicas=3,
                     checkpoints=int(value))


def _fedbioacc_config(value: float, profile: Profile) -> RunConfig:
    config = acc_oracle_config(value, profile)
    return config.with_(mode="monte_carlo", replicas=3,
                        params={**config.params, "first_batch": "sampled", "b1": FIRST_BATCH})


CASES = {
    "fedbio": (fedbio_round, _fedbio_config, "b_y + 4 b_x oracle calls per client and iteration, one "
               "communication round of p + 2d floats per client up and down every I-th iteration",
               src("Algorithm 1", "spec §2.1, §2.5")),
    "fedbioacc": (fedbioacc_round, _fedbioacc_config, "10 b oracle calls per client and iteration (FedBiO's five "
                  "oracles at two points) and 5 b1 for the first batch (b1 = 5) in the first, one communication round "
                  "of 2 (p + 2d) floats per client up and down every I-th iteration",
                  src("Algorithm 2", "spec §2.2, §2.5")),
    "fedbioacc_local": (fedbioacc_local_round, _baseline_config("fedbioacc_local"), "2 (b M + b (Q + 3)) oracle calls "
                        "per client and iteration (b = 2, Q = 3), 2p floats per client every I-th iteration",
                        src("Algorithm 4", "spec §2.4, §2.5")),
    "fedbio_local": (fedbio_local_round, _fedbio_local_config, "b_y + b_x (Q + 3) oracle calls per client and "
                     "iteration (b_y = 3, b_x = 2, Q = 4), p floats per client (x only) every I-th iteration",
                     src("Algorithm 3, eq. (6)", "spec §2.3, §2.5")),
    "mrbo_like": (fedbioacc_local_round, _mrbo_config, "Algorithm 4 at M = 1 (b_y = b = 2, Q = 3): 2 (b + b (Q + 3)) "
                  "oracle calls an iteration, 2p floats every I-th iteration (I = 3)",
                  src("Algorithm 4 with M = 1; MRBO: Yang, Ji, Liang 2021, Algorithm 1", "spec §2.4, §2.5, §7")),
    "stocbio": (stocbio_round, _baseline_config("stocbio"), "M = 1, D b_y + b (Q + 3) oracle calls an iteration (D = 3, "
                "b_y = 3, b = 2, Q = 2), no communication", src("StocBiO: Ji, Yang, Liang 2021, Algorithms 1-2", "spec §7")),
}


def _clients(name: str) -> int:
    return 1 if name in ("mrbo_like", "stocbio") else 3


CLAIMS = tuple(
    cost_claim(id=f"fedbio.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on test B or C2 (M = {_clients(name)}, I = 3): {what}.", source=source,
               configure=configure, per_round=per_round,
               counters=COUNTERS + (("floats_down",) if name in DOWN else ()), measure="grad_norm_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, configure, what, source) in CASES.items())
