"""Cost claims (issue #23): the recorded oracle calls, communication rounds and vectors of SimFBO and its
baselines, round by round, against per-round costs written from each algorithm box (ratecheck.claims.costs).

* SimFBO (spec simfbo §2.5): one communication round per iteration; each sampled client receives (x, y, v) and
  sends its three local directions back: one message each way per sampled client, P a round. Client i runs
  tau_i local steps, one oracle call per step (its gradients of y, v and x at one sample): sum_i tau_i with
  full participation.
* FedNova (Wang et al. 2020, eq. (8); here ShroFBO with B = 0): one round, one message each way per sampled
  client.
* FedNest (Tarzanagh et al. 2022, Algorithms 1-4): one outer iteration is I FedInn rounds of two
  communications each (the aggregated snapshot gradient, then the models), N FedIHGP communications (one per
  Neumann term, the global Hessian) and two FedOut communications: 2 I + N + 2, each with every sampled client
  both ways. Oracle calls per client: each FedInn round and FedOut evaluate the snapshot gradient once and
  then, per local step, the SVRG difference at one minibatch on two points (2 K + 1), and one HVP per Neumann
  term: (I + 1)(2 K + 1) + N.
* The naive local-hypergradient average (spec §7.2): one communication, one message each way per client.
* LFedNest (§4): plain local SGD in FedInn and FedOut (one communication each: I + 1), the Neumann terms on the
  client (none); oracle calls (I + 1) K + N.
  Both with FedIHGP as the deterministic series (``neumann='series'``, set explicitly: its N terms make the counts
  the same in every draw). With Algorithm 3's default random truncation N' (uniform on {0..N-1}, one draw an outer
  iteration) FedIHGP costs N' + 1 communications (p_0, then one per factor) and N' + 1 oracle calls per client
  (grad_y f, then N' HVPs): 2 I + N' + 3 communications and (I + 1)(2 K + 1) + N' + 1 calls (FedNest), (I + 1) K +
  N' + 1 calls (LFedNest), each replica's N' replayed from the run's own draws (oracles_baselines.truncation_depths).
* ShroFBO (eqs. (6)-(8)): SimFBO's round: sum_{i in C} tau_i oracle calls, one message each way per sampled
  client; with P = 2 of 4 and uneven tau the sum depends on the draw, replayed replica by replica from the run's
  'sampling' stream by the paper's rule (a uniform P-subset; ratecheck.claims.costs.sampled_clients, not the
  participation sampler under test).
* SOBA (Dagreou et al. 2022, Algorithm 1; SimFBO with n = 1, tau = 1): one step, one oracle call (its gradient
  triple at one sample), one message each way.
P = 2 or 3 of n = 4 clients without replacement, K = 3, I = 2, N = 4, uneven tau = (1, 3, 2, 4); Monte Carlo,
3 replicas (6 for the replayed draws).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.algorithms.bilevel import LocalSteps
from ratecheck.claims import Profile
from ratecheck.claims.costs import PerRound, cost_claim, participants, sampled_clients
from ratecheck.theory import Source
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS
from .oracles_baselines import BASE_PROBLEM, truncation_depths
from .oracles_baselines import CASES as ORACLE_CASES
from .theorems import KEY, src

COST_T = 5
VECTORS = ("vectors_up", "vectors_down")


def _sampled(config: RunConfig) -> int:
    return participants(str(config.params.get("participation", "full")), int(config.problem_params["clients"]))


def one_message_round(config: RunConfig, t: int) -> dict[str, float]:
    P = _sampled(config)
    return {"vectors_up": P, "vectors_down": P}


def per_client_steps(config: RunConfig) -> list[int]:
    """tau_i of every client, through the local_steps spec's one parser (these instances give one per client)."""
    steps = LocalSteps.parse(config.params["local_steps"])
    if steps.kind != "per_client":
        raise ValueError(f"the cost replay needs local_steps 'per_client:...', got {config.params['local_steps']!r}")
    return [int(k) for k in steps.values]


def simfbo_full_round(config: RunConfig, t: int) -> dict[str, float]:
    """Full participation: every client's tau_i local steps, one oracle call each."""
    tau = per_client_steps(config)
    return {"oracle_calls": sum(tau), **one_message_round(config, t)}


def naive_round(config: RunConfig, t: int) -> dict[str, float]:
    return {"communication_rounds": 1, **one_message_round(config, t)}


def fednest_round(config: RunConfig, t: int) -> dict[str, float]:
    q, P = config.params, _sampled(config)
    I, K, N = int(q["inner_rounds"]), int(q["local_steps"]), int(q["neumann_terms"])
    comms = 2 * I + N + 2
    return {"communication_rounds": comms, "vectors_up": P * comms, "vectors_down": P * comms,
            "oracle_calls": P * ((I + 1) * (2 * K + 1) + N)}


def lfednest_round(config: RunConfig, t: int) -> dict[str, float]:
    q, P = config.params, _sampled(config)
    I, K, N = int(q["inner_rounds"]), int(q["local_steps"]), int(q["neumann_terms"])
    return {"communication_rounds": I + 1, "vectors_up": P * (I + 1), "vectors_down": P * (I + 1),
            "oracle_calls": P * ((I + 1) * K + N)}


def fednest_random_round(config: RunConfig, t: int) -> dict[str, np.ndarray]:
    """Algorithm 3's N' + 1 FedIHGP communications and oracle calls, N' the replica's own draw of round t."""
    q, P = config.params, _sampled(config)
    I, K = int(q["inner_rounds"]), int(q["local_steps"])
    terms = truncation_depths(config)[:, t] + 1
    light = config.algorithm == "lfednest"
    comms = np.full(terms.shape, I + 1.0) if light else 2 * I + terms + 2.0
    calls = (I + 1) * K + terms if light else (I + 1) * (2 * K + 1) + terms
    return {"communication_rounds": comms, "vectors_up": P * comms, "vectors_down": P * comms,
            "oracle_calls": P * calls}


def sampled_steps_round(config: RunConfig, t: int) -> dict[str, float | np.ndarray]:
    """sum_{i in C} tau_i oracle calls over each replica's own client draw of round t (replayed by the paper's
    rule, ratecheck.claims.costs.sampled_clients), P messages each way."""
    tau = np.array(per_client_steps(config))
    return {"oracle_calls": tau[sampled_clients(config)[t]].sum(axis=1), **one_message_round(config, t)}


def soba_round(config: RunConfig, t: int) -> dict[str, float]:
    return {"oracle_calls": 1, "vectors_up": 1, "vectors_down": 1}


NEST = {"eta_y": 0.15, "eta_x": 0.07, "neumann_step": 0.3, "inner_rounds": 2, "local_steps": 3, "neumann_terms": 4,
        "neumann": "series"}
RANDOM_NEST = {k: v for k, v in NEST.items() if k != "neumann"}  # the default: Algorithm 3's random N'
RUNS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "simfbo": ("simfbo", dict(ORACLE_STEPS), dict(ORACLE_PROBLEM)),
    "simfbo_full": ("simfbo", {**ORACLE_STEPS, "participation": "full"}, dict(ORACLE_PROBLEM)),
    "fednova": ("fednova", dict(ORACLE_CASES["fednova"]["steps"]), {**BASE_PROBLEM, **ORACLE_CASES["fednova"]["problem"]}),
    "naive_hypergrad": ("naive_hypergrad", {"gamma_x": 0.3, "participation": "without_replacement:3"}, dict(BASE_PROBLEM)),
    "fednest": ("fednest", {**NEST, "participation": "without_replacement:3"}, dict(BASE_PROBLEM)),
    "lfednest": ("lfednest", {**NEST, "participation": "without_replacement:2"}, dict(BASE_PROBLEM)),
    "fednest_random": ("fednest", {**RANDOM_NEST, "participation": "without_replacement:3"}, dict(BASE_PROBLEM)),
    "lfednest_random": ("lfednest", {**RANDOM_NEST, "participation": "without_replacement:2"}, dict(BASE_PROBLEM)),
    "shrofbo": ("shrofbo", dict(ORACLE_STEPS), dict(ORACLE_PROBLEM)),
    "soba": ("soba", dict(ORACLE_CASES["soba"]["steps"]), {**BASE_PROBLEM, **ORACLE_CASES["soba"]["problem"]}),
}
REPLICAS = {"fednest_random": 6, "lfednest_random": 6, "shrofbo": 6}  # replayed draws: several replicas differ
CASES: dict[str, tuple[PerRound, tuple[str, ...], str, Source]] = {
    "simfbo": (one_message_round, VECTORS, "P = 2 of 4 clients: one message each way per sampled client",
               src("§2.5 communication per round", "spec simfbo §2.5")),
    "simfbo_full": (simfbo_full_round, ("oracle_calls",) + VECTORS, "all 4 clients, tau = (1, 3, 2, 4): sum_i "
                    "tau_i oracle calls, one message each way per client", src("Algorithm 1, §2.5", "spec simfbo §2.5")),
    "fednova": (one_message_round, VECTORS, "P = 2 of 4 clients: one message each way per sampled client",
                src("FedNova: Wang et al. NeurIPS 2020, eq. (8)", "spec simfbo §7.2")),
    "naive_hypergrad": (naive_round, ("communication_rounds",) + VECTORS, "P = 3 of 4: one communication, each "
                        "sampled client's hypergradient up and the model down", src("naive local-hypergradient "
                        "average", "spec simfbo §7.2, §1.2")),
    "fednest": (fednest_round, ("communication_rounds", "oracle_calls") + VECTORS, "P = 3 of 4, I = 2, K = 3, N = 4: "
                "2 I + N + 2 communications with every sampled client, (I + 1)(2 K + 1) + N oracle calls per client",
                src("FedNest: Tarzanagh et al. ICML 2022, Algorithms 1-4", "spec simfbo §7.2")),
    "lfednest": (lfednest_round, ("communication_rounds", "oracle_calls") + VECTORS, "P = 2 of 4, I = 2, K = 3, N = 4: "
                 "I + 1 communications, (I + 1) K + N oracle calls per client",
                 src("LFedNest: Tarzanagh et al. ICML 2022, §4", "spec simfbo §7.2")),
    "fednest_random": (fednest_random_round, ("communication_rounds", "oracle_calls") + VECTORS, "its default "
                       "FedIHGP (Algorithm 3, N' uniform on {0..3}), P = 3 of 4, I = 2, K = 3: 2 I + N' + 3 "
                       "communications with every sampled client, (I + 1)(2 K + 1) + N' + 1 oracle calls per client, "
                       "N' of each replica and iteration replayed from the run's own draws",
                       src("FedNest: Tarzanagh et al. ICML 2022, Algorithms 1-4 (Algorithm 3)", "spec simfbo §7.2")),
    "lfednest_random": (fednest_random_round, ("communication_rounds", "oracle_calls") + VECTORS, "its default "
                        "client-local FedIHGP (N' uniform on {0..3}), P = 2 of 4, I = 2, K = 3: I + 1 "
                        "communications, (I + 1) K + N' + 1 oracle calls per client, N' replayed from the run's draws",
                        src("LFedNest: Tarzanagh et al. ICML 2022, §4 (Algorithm 3)", "spec simfbo §7.2")),
    "shrofbo": (sampled_steps_round, ("oracle_calls",) + VECTORS, "P = 2 of 4 clients, tau = (1, 3, 2, 4): sum_{i in "
                "C} tau_i oracle calls over each replica's own client draw, one message each way per sampled client",
                src("Algorithm 1 (ShroFBO), eqs. (6)-(8), §2.5", "spec simfbo §2.5")),
    "soba": (soba_round, ("oracle_calls",) + VECTORS, "n = 1, tau = 1: one oracle call (the step's gradient "
             "triple) and one message each way an iteration",
             src("SOBA: Dagreou et al. NeurIPS 2022, Algorithm 1 (n = 1, tau = 1 of Algorithm 1)", "spec simfbo §7.2")),
}


def _configure(name: str):
    algorithm, params, problem = RUNS[name]

    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(params), "quadratic_bilevel", dict(problem), int(value),
                         replicas=REPLICAS.get(name, 3), checkpoints=int(value))
    return configure


def _clients(name: str) -> str:
    return "n = 1" if RUNS[name][2]["clients"] == 1 else "n = 4, weights 0.1-0.4"


CLAIMS = tuple(
    cost_claim(id=f"simfbo.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{RUNS[name][0]} on P1 ({_clients(name)}): {what}.", source=source,
               configure=_configure(name), per_round=per_round, counters=counters, measure="grad_norm_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, counters, what, source) in CASES.items())
