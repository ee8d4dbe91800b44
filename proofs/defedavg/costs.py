"""Cost claims (issue #23): the recorded gradient evaluations and models sent of FedAvg and DeFedAvg, round by
round and replica by replica, against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* FedAvg (the synchronous baseline, spec defedavg §2.7): the server sends w^t to the n selected clients, each
  runs K local SGD steps (one stochastic gradient each) and sends its model back: n K gradients, n up, n down.
* DeFedAvg-IID (Algorithm 2, S2-S6): n distinct clients' (possibly delayed) updates of K local steps each
  arrive, and S6 broadcasts w^{t+1} to ALL N clients: n K gradients, n up, N down.
* DeFedAvg-nIID (Algorithm 1, S3-S8; synchronous delay schedule): n i.i.d. uniform draws with replacement; each
  DISTINCT drawn client uploads its one update of K local steps (S4-S5; a client drawn twice uploads once and
  counts twice in S6, spec §2.6(3)), and S8 broadcasts w^{t+1} to all N: D_t K gradients, D_t up, N down, D_t the
  distinct clients of round t's draw, replayed replica by replica from the run's 'sampling' stream by S3's rule
  (ratecheck.claims.costs.sampled_clients, not the participation sampler under test).
N = 5 clients, n = 2 (FedAvg) or 3 (DeFedAvg) without replacement (IID) or with (nIID), K = 3, delays on; Monte
Carlo, 3 replicas (nIID: 8, so that rounds with duplicates and without occur in several replicas).

The event-timeline algorithms (ratecheck.algorithms.asynchronous), on their replay oracles' runs (T = 40, the same
RunConfigs as proofs/defedavg/oracles_events.py, so the runs are shared): a round aggregates n updates of K local
steps each, whichever clients they come from, and ends with a broadcast.
* defedavg_iid_events (Algorithm 2), fedbuff ([27], staleness weights on) and asysg ([22], K = 1): the first n
  arrivals are n distinct jobs: n K gradients, n up, w^{t+1} to all N (Algorithm 2 S6; FedBuff and AsySG are
  Algorithm 2's mechanism, spec §2.3 [observation] and §7).
* defedavg_niid_events (Algorithm 1): D_t K gradients, D_t up, N down (S8), as the synchronous nIID above;
  fedavg_events (eqs. (2)-(3), spec §2.4): only the drawn clients receive w^t, a client drawn twice trains once
  (the same reading as §2.6(3)): D_t K gradients, D_t up, D_t down. n = 3 draws of N = 5: D_t ranges over 1..3.
  The draws of S3 are replayed from the timeline's 'server' generator (n uniform integers a round in round order,
  ratecheck.claims.costs.timeline_selections), its key from the paper's system model (oracles_events.PAPER_TIMING).
"""

from __future__ import annotations

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.costs import (
    PerRound,
    cost_claim,
    distinct_clients,
    participants,
    sampled_clients,
    sampling_rule,
    timeline_selections,
)
from ratecheck.model.asynchrony import SystemModel, timeline_key
from ratecheck.theory import Source
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_RUNS
from .oracles_events import EVENT_RUNS, EVENT_T, PAPER_TIMING, POLICY, event_configure
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


def draws_of(config: RunConfig) -> int:
    """n, the draws with replacement of Algorithm 1 S3 (or eqs. (2)-(3)) a round."""
    mode, n = sampling_rule(str(config.params["participation"]))
    if mode != "with_replacement" or n is None:
        raise ValueError(f"{config.algorithm}: its box draws with replacement, got {config.params['participation']!r}")
    return n


def distinct_jobs(config: RunConfig, draws: np.ndarray, to_all: bool) -> dict[str, float | np.ndarray]:
    """D = the distinct clients of each replica's draw (R, n): D K-step jobs, D models up; down w^{t+1} to all N
    (Algorithm 1 S8) or to the D drawn clients (eqs. (2)-(3))."""
    D = distinct_clients(draws).astype(float)
    return {"oracle_calls": D * int(config.params["local_steps"]), "vectors_up": D,
            "vectors_down": float(config.problem_params["clients"]) if to_all else D}


def niid_round(config: RunConfig, t: int) -> dict[str, float | np.ndarray]:
    """Algorithm 1 on the synchronous schedule: the distinct drawn clients' K-step updates up, w^{t+1} to all N."""
    draws_of(config)
    return distinct_jobs(config, sampled_clients(config)[t], to_all=True)


REPLICAS = {"defedavg_niid": 8}  # replayed draws: rounds with and without duplicates in several replicas


def _configure(name: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(name, dict(ORACLE_RUNS[name]), "quadratic", dict(ORACLE_PROBLEM), int(value),
                         replicas=REPLICAS.get(name, 3), checkpoints=int(value))
    return configure


CASES: dict[str, tuple[PerRound, str, Source]] = {
    "fedavg": (fedavg_round, "n = 2 of N = 5, K = 3: n K gradients, n models up and n down a round",
               src("FedAvg baseline", "spec defedavg §2.7")),
    "defedavg_iid": (defedavg_iid_round, "n = 3 of N = 5, K = 3, uniform delays up to 2: n K gradients, n updates "
                     "up, w^{t+1} down to all N clients (S6)", src("Algorithm 2, S2-S6", "spec defedavg §2.3")),
    "defedavg_niid": (niid_round, "n = 3 draws with replacement from N = 5, K = 3, uniform delays up to 2, duplicates "
                      "sharing one update: D_t K gradients and D_t updates up (D_t the distinct clients of each "
                      "replica's draw, replayed), w^{t+1} down to all N (S8)",
                      src("Algorithm 1, S3-S8", "spec defedavg §2.2, §2.6(3)")),
}


def first_n_round(config: RunConfig, t: int) -> dict[str, float]:
    """Algorithm 2 (and FedBuff, AsySG): n distinct jobs of K steps up, w^{t+1} down to all N (S6)."""
    n, N = _sampled(config)
    return {"oracle_calls": n * int(config.params.get("local_steps", 1)), "vectors_up": n, "vectors_down": N}


def selections(config: RunConfig) -> np.ndarray:
    """Each replica's draws of S3 (T, R, n), replayed from its timeline's 'server' generator; the key from the
    paper's system model with the run's timing fields (spec §2.7.3)."""
    p, N = config.params, int(config.problem_params["clients"])
    n, K = draws_of(config), int(p.get("local_steps", 1))
    system = SystemModel(**{name: p.get(name, default) for name, default in PAPER_TIMING.items()})
    key = timeline_key(POLICY[config.algorithm], system, N, n, K)
    return timeline_selections(int(config.seed), key, int(config.replicas), int(config.rounds), N, n)


def niid_events_round(config: RunConfig, t: int) -> dict[str, float | np.ndarray]:
    """Algorithm 1: the distinct drawn clients' K-step updates up (S4-S5), w^{t+1} to all N (S8)."""
    return distinct_jobs(config, selections(config)[t], to_all=True)


def sync_events_round(config: RunConfig, t: int) -> dict[str, float | np.ndarray]:
    """Eqs. (2)-(3): the distinct drawn clients get w^t, run K steps and send their models back."""
    return distinct_jobs(config, selections(config)[t], to_all=False)


EVENT_COST_RUNS = {name: EVENT_RUNS[name] for name in ("defedavg_iid_events", "fedbuff", "asysg",
                                                       "defedavg_niid_events", "fedavg_events")}


def _event_configure(name: str):
    shared = event_configure(name)  # the replay oracle's run

    def configure(value: float, profile: Profile) -> RunConfig:
        config = shared(value, profile)
        return config.with_(params=dict(EVENT_COST_RUNS[name]))
    return configure


EVENT_CASES: dict[str, tuple[PerRound, str, Source]] = {
    "defedavg_iid_events": (first_n_round, "n = 3 of N = 5, K = 3: the first n arrivals, n K gradients, n up, "
                            "N down (S6)", src("Algorithm 2, S2-S6", "spec defedavg §2.3")),
    "fedbuff": (first_n_round, "n = 2 of N = 5, K = 4, staleness weights 1/sqrt(1 + delay): n K gradients, n up, "
                "N down", src("§4 baseline [27], Algorithm 2's mechanism", "spec defedavg §2.3, §7")),
    "asysg": (first_n_round, "n = 2 of N = 5, one gradient per upload: n gradients, n up, N down",
              src("§4 baseline [22], Algorithm 2 with K = 1", "spec defedavg §2.5, §7")),
    "defedavg_niid_events": (niid_events_round, "n = 3 draws with replacement from N = 5, K = 3: D_t K gradients and "
                             "D_t updates up (D_t the distinct clients of each replica's draw, replayed), w^{t+1} "
                             "to all N clients a round (S8)", src("Algorithm 1, S3-S8", "spec defedavg §2.2, §2.6(3)")),
    "fedavg_events": (sync_events_round, "n = 3 draws with replacement from N = 5, K = 3: D_t K gradients, D_t "
                      "models down and up (only the drawn clients receive w^t; D_t the distinct clients of each "
                      "replica's draw, replayed)", src("eqs. (2)-(3)", "spec defedavg §2.4, §2.6(3)")),
}

CLAIMS = tuple(
    cost_claim(id=f"defedavg.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the oracle quadratic (N = 5): {what}.", source=source, configure=_configure(name),
               per_round=per_round, counters=COUNTERS, measure="grad_norm_sq",
               grid={"quick": (COST_T,), "full": (COST_T,)})
    for name, (per_round, what, source) in CASES.items()) + tuple(
    cost_claim(id=f"defedavg.cost.{name}", paper=KEY, title=f"{name}: recorded costs equal its algorithm box's",
               statement=f"{name} on the event timeline (the replay oracle's run: N = 5, sigma = 0, T = {EVENT_T}): "
                         f"{what}.", source=source, configure=_event_configure(name), per_round=per_round,
               counters=COUNTERS, measure="grad_norm_sq", grid={"quick": (EVENT_T,), "full": (EVENT_T,)})
    for name, (per_round, what, source) in EVENT_CASES.items())
