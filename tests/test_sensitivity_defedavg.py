"""Deliberately broken DeFedAvg variants: each must turn some claim of the paper unexpected (issue #7).

A broken algorithm is a subclass with one piece overridden, swapped into the registry under the
real name for the claim's runs (serial executor, no cache). Only the claims that should catch it run.
"""

from dataclasses import dataclass

import numpy as np
import pytest

import ratecheck.algorithms.base as base
from ratecheck.algorithms.asynchronous import DeFedAvgIIDEvents, DeFedAvgNIIDEvents
from ratecheck.algorithms.fedavg import DeFedAvgIID, DeFedAvgNIID
from ratecheck.claims import PROFILES
from ratecheck.model.participation import Participation
from ratecheck.proofs.defedavg import asynchronous as claims_async
from ratecheck.runner.executors import JobError, SerialExecutor
from ratecheck.runner.sweep import check_claims

QUICK = PROFILES["quick"]


def _unexpected(claims, name, broken, monkeypatch) -> list[str]:
    """Claims whose verdict differs from the expected one. A claim whose decision raises counts too
    (fit_slope refuses a grid point whose mean is exactly 0, e.g. a floor that vanishes at n = N)."""
    monkeypatch.setitem(base.REGISTRY, name, broken)
    flagged = []
    for claim in claims:
        try:
            (outcome,) = check_claims([claim], QUICK, executor=SerialExecutor(), progress=False)
        except (ValueError, JobError) as exc:  # JobError: e.g. exact mode refuses a non-exchangeable aggregate
            flagged.append(f"{claim.id}: error ({exc})")
            continue
        if not outcome.ok:
            flagged.append(f"{claim.id}: {outcome.verdict} ({outcome.reason})")
    return flagged


@dataclass(frozen=True)
class DelayOffByOne(DeFedAvgNIID):
    """Jobs start one round staler than the schedule says."""

    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        return clients, delays + 1, shared, wall

    def init(self, problem, streams):
        state = super().init(problem, streams)
        return self._room_for(state, self.delay.lam + 1)


@dataclass(frozen=True)
class DuplicatesOnce(DeFedAvgNIID):
    """A client drawn twice counts once: the mean over distinct clients (spec pitfall 3)."""

    def aggregate(self, updates, clients, delays=None):
        multiplicity = (clients[:, :, None] == clients[:, None, :]).sum(axis=2)
        weights = 1.0 / multiplicity
        return np.einsum("rm,rmd->rd", weights, updates) / weights.sum(axis=1)[:, None]


@dataclass(frozen=True)
class MissingOneOverN(DeFedAvgNIID):
    def aggregate(self, updates, clients, delays=None):
        return updates.sum(axis=1)


@dataclass(frozen=True)
class WrongSign(DeFedAvgNIID):
    """eq. (3) copied literally: w + eta * direction (spec pitfall 2)."""

    def server_step(self, x, direction, server, t):
        return x + self.eta_global * direction, server


@dataclass(frozen=True)
class WithoutReplacement(DeFedAvgNIID):
    """nIID clients drawn without replacement (n distinct), the sampling the paper does not use."""

    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        m = clients.shape[1]
        if m <= problem.num_clients:
            clients = Participation("without_replacement", m).sample(problem.num_clients, streams["sampling"])
        return clients, delays, False, wall


# The Monte-Carlo twin: exact mode takes sampling and delays from its own skeleton, not from schedule(),
# so the draws are what catch DelayOffByOne and WithoutReplacement (the slope claim catches most too).
SAMPLING = [claims_async.SAMPLING_FLOOR_VALUE_MC]


@pytest.mark.parametrize("broken", [DelayOffByOne, DuplicatesOnce, MissingOneOverN, WrongSign, WithoutReplacement],
                         ids=lambda cls: cls.__name__)
def test_broken_niid_is_flagged_by_the_sampling_floor(broken, monkeypatch):
    assert _unexpected(SAMPLING, "defedavg_niid", broken, monkeypatch)


@dataclass(frozen=True)
class StabilityOffByOne(DelayOffByOne.__mro__[1].__mro__[1]):  # FedAvg with the same one-round shift
    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        return clients, delays + 1, shared, wall

    def init(self, problem, streams):
        return self._room_for(super().init(problem, streams), self.delay.lam + 1)


def test_a_delay_off_by_one_breaks_the_stability_thresholds(monkeypatch):
    assert _unexpected([claims_async.DELAY_STABILITY], "fedavg", StabilityOffByOne, monkeypatch)


@dataclass(frozen=True)
class FirstArrivalsNIID(DeFedAvgNIIDEvents):
    """DeFedAvg-nIID 'optimised' into first-n arrivals (spec pitfall 4)."""

    policy = "iid"


def test_niid_turned_into_first_arrivals_is_biased(monkeypatch):
    assert _unexpected([claims_async.NIID_UNBIASED], "defedavg_niid_events", FirstArrivalsNIID, monkeypatch)


@pytest.mark.parametrize("broken", [DuplicatesOnce, MissingOneOverN, WrongSign], ids=lambda cls: cls.__name__)
def test_broken_seams_are_flagged_by_the_exact_sampling_floor(broken, monkeypatch):
    """Exact mode reads aggregate and server_step from the code: a wrong factor or sign moves the exact
    floor (or, for a non-exchangeable aggregate, exact mode refuses the run)."""
    assert _unexpected([claims_async.SAMPLING_FLOOR_VALUE], "defedavg_niid", broken, monkeypatch)


@pytest.mark.parametrize("broken", [DelayOffByOne, WithoutReplacement], ids=lambda cls: cls.__name__)
def test_exact_mode_sees_schedule_bugs(broken, monkeypatch):
    """Exact mode reads an overridden schedule() (issue #8): a delay off by one changes the exact
    values (the sampling-floor value claim FAILs, mean/predicted ~1.5); clients sampled otherwise than
    FedAvg.schedule are refused (an error in mode 'exact', Monte Carlo under 'auto')."""
    assert _unexpected([claims_async.SAMPLING_FLOOR_VALUE], "defedavg_niid", broken, monkeypatch)


@dataclass(frozen=True)
class ScheduleIgnored(DeFedAvgIID):
    """Every job starts from the current model whatever the delay schedule says (delay 0)."""

    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        return clients, np.zeros_like(delays), shared, wall


@dataclass(frozen=True)
class ScheduleConstantLambda(DeFedAvgIID):
    """Every job is lambda rounds stale: the schedule's largest delay for everyone."""

    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        return clients, np.full_like(delays, self.delay.lam), shared, wall


@dataclass(frozen=True)
class CyclicWithoutRounds(DeFedAvgIID):
    """'cyclic' that forgets the round index: d = client mod (lambda+1), the per-client schedule."""

    def schedule(self, state, problem, t, streams):
        clients, delays, shared, wall = super().schedule(state, problem, t, streams)
        if self.delay.kind == "cyclic":
            delays = clients % (self.delay.lam + 1)
        return clients, delays, shared, wall


SCHEDULE_FLOORS = [claims_async.FLOOR_UNIFORM, claims_async.FLOOR_CYCLIC, claims_async.FLOOR_PER_CLIENT]


@pytest.mark.parametrize("broken", [ScheduleIgnored, ScheduleConstantLambda], ids=lambda cls: cls.__name__)
def test_a_schedule_bug_fails_every_schedule_floor(broken, monkeypatch):
    """Each schedule claim predicts its own exact floor: delay 0 gives 0.65x it, constant lambda 2.05x
    (the old claims' [floor(0), floor(lambda)] band passed both)."""
    flagged = _unexpected(SCHEDULE_FLOORS, "defedavg_iid", broken, monkeypatch)
    assert len(flagged) == len(SCHEDULE_FLOORS), flagged


def test_a_cyclic_schedule_without_the_round_index_fails_the_cyclic_floor(monkeypatch):
    """Cyclic and per-client floors differ by 0.7% (relative), millions of exact tolerances."""
    flagged = _unexpected([claims_async.FLOOR_CYCLIC], "defedavg_iid", CyclicWithoutRounds, monkeypatch)
    assert flagged


@dataclass(frozen=True)
class IIDWaitsForTheSlowest(DeFedAvgIIDEvents):
    """DeFedAvg-IID's rounds wait for the slowest drawn client, as synchronous FedAvg's do."""

    policy = "sync"


def test_first_arrivals_that_wait_for_stragglers_leave_the_timing_band(monkeypatch):
    """The time ratio becomes the rounds ratio (~0.8 < 1, which the old 'ratio < 1' claim passed),
    far above the first-arrival model's band (~0.09 at n = 4)."""
    assert _unexpected([claims_async.WALL_IID], "defedavg_iid_events", IIDWaitsForTheSlowest, monkeypatch)


def test_niid_turned_into_first_arrivals_is_too_fast_for_its_timing_band(monkeypatch):
    """First-n arrivals make nIID ~3x faster (ratio ~0.10) than its rigorous band allows (>= ~0.17:
    a selected client's upload costs at least the transfers); 'ratio < 1' alone passed it."""
    assert _unexpected([claims_async.WALL_NIID], "defedavg_niid_events", FirstArrivalsNIID, monkeypatch)
