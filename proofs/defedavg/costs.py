"""Cost claims (issue #23): the recorded gradient evaluations and models sent of FedAvg and DeFedAvg-IID,
round by round, against the per-round costs of their algorithm boxes (ratecheck.claims.costs).

* FedAvg (the synchronous baseline, spec defedavg §2.7): the server sends w^t to the n selected clients, each
  runs K local SGD steps (one stochastic gradient each) and sends its model back: n K gradients, n up, n down.
* DeFedAvg-IID (Algorithm 2, S2-S6): n distinct clients' (possibly delayed) updates of K local steps each
  arrive, and S6 broadcasts w^{t+1} to ALL N clients: n K gradients, n up, N down.
N = 5 clients, n = 2 (FedAvg) or 3 (DeFedAvg-IID) without replacement, K = 3, delays on; Monte Carlo, 3
replicas. The synchronous DeFedAvg-nIID samples with replacement (its distinct clients are random), so it is not
here; its event-timeline form is below (broadcast only).

The event-timeline algorithms (ratecheck.algorithms.asynchronous), on their replay oracles' runs (T = 40, the same
RunConfigs as proofs/defedavg/oracles_events.py, so the runs are shared): a round aggregates n updates of K local
steps each, whichever clients they come from, and ends with a broadcast.
* defedavg_iid_events (Algorithm 2), fedbuff ([27], staleness weights on) and asysg ([22], K = 1): the first n
  arrivals are n distinct jobs: n K gradients, n up, w^{t+1} to all N (Algorithm 2 S6; FedBuff and AsySG are
  Algorithm 2's mechanism, spec §2.3 [observation] and §7).
* defedavg_niid_events (Algorithm 1): S8 broadcasts w^{t+1} to ALL N clients, selected or not: N down a round.
  Its gradients and uploads follow the distinct drawn clients (random), so only the broadcast is checked.
* fedavg_events (eqs. (2)-(3)): only the drawn clients receive w^t and train. With replacement the distinct
  clients are random unless n = 1: one draw, K gradients, one model down and one up a round.
"""

from __future__ import annotations

from ratecheck.claims import Profile
from ratecheck.claims.costs import cost_claim, participants
from ratecheck.model.participation import Participation
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_RUNS
from .oracles_events import EVENT_RUNS, EVENT_T, event_configure
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

EVENT_COUNTERS = {"defedavg_iid_events": COUNTERS, "fedbuff": COUNTERS, "asysg": COUNTERS,
                  "defedavg_niid_events": ("vectors_down",), "fedavg_events": COUNTERS}


def first_n_round(config: RunConfig, t: int) -> dict[str, float]:
    """Algorithm 2 (and FedBuff, AsySG): n distinct jobs of K steps up, w^{t+1} down to all N (S6)."""
    n, N = _sampled(config)
    return {"oracle_calls": n * int(config.params.get("local_steps", 1)), "vectors_up": n, "vectors_down": N}


def niid_broadcast_round(config: RunConfig, t: int) -> dict[str, float]:
    """Algorithm 1, S8: w^{t+1} to all N clients."""
    return {"vectors_down": int(config.problem_params["clients"])}


def sync_one_draw_round(config: RunConfig, t: int) -> dict[str, float]:
    """Eqs. (2)-(3) with one draw a round: the drawn client gets w^t, runs K steps and sends its model back."""
    participation = Participation.parse(str(config.params["participation"]))
    if participation.per_round(int(config.problem_params["clients"])) != 1:
        raise ValueError("fedavg_events' costs are fixed only with one draw a round (with replacement, the distinct "
                         "clients of n > 1 draws are random)")
    return {"oracle_calls": int(config.params["local_steps"]), "vectors_up": 1, "vectors_down": 1}


EVENT_COST_RUNS = {**{name: EVENT_RUNS[name] for name in ("defedavg_iid_events", "fedbuff", "asysg",
                                                           "defedavg_niid_events")},
                   "fedavg_events": {**EVENT_RUNS["fedavg_events"], "participation": "with_replacement:1"}}


def _event_configure(name: str):
    shared = event_configure(name)  # the replay oracle's run

    def configure(value: float, profile: Profile) -> RunConfig:
        config = shared(value, profile)
        return config.with_(params=dict(EVENT_COST_RUNS[name]))
    return configure


EVENT_CASES = {
    "defedavg_iid_events": (first_n_round, "n = 3 of N = 5, K = 3: the first n arrivals, n K gradients, n up, "
                            "N down (S6)", src("Algorithm 2, S2-S6", "spec defedavg §2.3")),
    "fedbuff": (first_n_round, "n = 2 of N = 5, K = 4, staleness weights 1/sqrt(1 + delay): n K gradients, n up, "
                "N down", src("§4 baseline [27], Algorithm 2's mechanism", "spec defedavg §2.3, §7")),
    "asysg": (first_n_round, "n = 2 of N = 5, one gradient per upload: n gradients, n up, N down",
              src("§4 baseline [22], Algorithm 2 with K = 1", "spec defedavg §2.5, §7")),
    "defedavg_niid_events": (niid_broadcast_round, "n = 3 draws with replacement from N = 5: w^{t+1} to all N "
                             "clients a round (S8)", src("Algorithm 1, S8", "spec defedavg §2.2")),
    "fedavg_events": (sync_one_draw_round, "one draw a round from N = 5, K = 3: K gradients, the drawn client's "
                      "model down and up (only drawn clients receive w^t)", src("eqs. (2)-(3)", "spec defedavg §2.4")),
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
               counters=EVENT_COUNTERS[name], measure="grad_norm_sq", grid={"quick": (EVENT_T,), "full": (EVENT_T,)})
    for name, (per_round, what, source) in EVENT_CASES.items())
