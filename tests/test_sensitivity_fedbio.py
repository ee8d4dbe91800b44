"""Sensitivity of the FedBiO claims: deliberately broken variants of the four algorithms, swapped in for
the registered ones, must turn some claim unexpected (serial executor, no cache; each test runs only
the claims that should catch its bug)."""

from dataclasses import dataclass

import numpy as np
import pytest

import ratecheck.algorithms.base as base
from ratecheck.algorithms import fedbio as alg
from ratecheck.algorithms.periodic import average
from ratecheck.claims import PROFILES
from ratecheck.proofs.fedbio import claims as fc
from ratecheck.runner.sweep import check_claims


def _unexpected(monkeypatch, broken, *claims):
    monkeypatch.setitem(base.REGISTRY, broken.name, broken)
    outcomes = check_claims(list(claims), PROFILES["quick"], progress=False)
    return [o for o in outcomes if not o.ok]


@dataclass(frozen=True)
class StormTwoBatches(alg.FedBiOAcc):
    """STORM with independent minibatches at the old and the new point (pitfall 2)."""

    def sample_pair(self, problem, noise, shape, batch, **kw):
        return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)


@dataclass(frozen=True)
class StormTwoBatchesLocal(alg.FedBiOAccLocal):
    def sample_pair(self, problem, noise, shape, batch, **kw):
        return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)


@dataclass(frozen=True)
class SyncOffByOne(alg.FedBiO):
    """Averages when t % I == 1 instead of t % I == 0 (with I = 1: never)."""

    def sync(self, iteration):
        return iteration % self.I == 1


@dataclass(frozen=True)
class USignFlipped(alg.FedBiO):
    """u += tau (H u - grad_y f): the wrong sign of the quadratic (4)'s gradient (pitfall 7)."""

    def u_direction(self, problem, x, y, u, sample):
        return -super().u_direction(problem, x, y, u, sample)


def _neumann_variant(terms_offset: int, tau_factor: bool):
    def estimate(self, problem, x, y, sample, copies):
        R, M, p = x.shape
        xc = np.broadcast_to(x[:, :, None, :], (R, M, copies, p))
        yc = np.broadcast_to(y[:, :, None, :], (R, M, copies, y.shape[-1]))
        v = problem.grad_y_f(xc, yc, sample)
        total = v.copy()
        for k in range(1, self.Q + 1 + terms_offset):
            v = v - self.tau_N * problem.hvp(xc, yc, v, sample, max(self.Q - k, 0))
            total += v
        scale = self.tau_N if tau_factor else 1.0
        return (problem.grad_x_f(xc, yc, sample) - scale * problem.jvp(xc, yc, total, sample)).mean(axis=2)

    return estimate


@dataclass(frozen=True)
class NeumannQTerms(alg.FedBiOLocal):
    """Q terms (powers 0..Q-1) instead of Q+1 (pitfall 11)."""

    hypergrad_estimate = _neumann_variant(-1, True)


@dataclass(frozen=True)
class NeumannNoTau(alg.FedBiOLocal):
    """The Neumann sum without its leading tau_N factor."""

    hypergrad_estimate = _neumann_variant(0, False)


@dataclass(frozen=True)
class LocalAveragesY(alg.FedBiOLocal):
    """Averages y too in the local-lower setting (pitfall 4)."""

    def round(self, state, problem, t, streams):
        new, costs = super().round(state, problem, t, streams)
        if self.sync(t + 1):
            new.y = average(new.y)
        return new, costs


@pytest.mark.parametrize("broken, claim", [
    (StormTwoBatches, fc.STORM_GLOBAL),
    (StormTwoBatchesLocal, fc.STORM_LOCAL_CLAIM),
    (SyncOffByOne, fc.S6_FEDBIO),
    (USignFlipped, fc.S6_FEDBIO),
    (NeumannQTerms, fc.S12),
    (NeumannNoTau, fc.S12),
    (LocalAveragesY, fc.S12_C2),
], ids=lambda v: getattr(v, "__name__", getattr(v, "id", "")))
def test_broken_variant_is_caught(monkeypatch, broken, claim):
    bad = _unexpected(monkeypatch, broken, claim)
    assert bad, f"{broken.__name__}: {claim.id} still gives its expected verdict"


def test_paper_algorithms_pass_the_same_claims():
    """The controls: the registered algorithms give the expected verdicts on exactly these claims."""
    outcomes = check_claims([fc.STORM_GLOBAL, fc.STORM_LOCAL_CLAIM, fc.S6_FEDBIO, fc.S12, fc.S12_C2], PROFILES["quick"],
                            progress=False)
    assert all(o.ok for o in outcomes), [(o.claim.id, o.verdict, o.reason) for o in outcomes if not o.ok]


@dataclass(frozen=True)
class AveragesEveryStep(alg.FedBiO):
    """Ignores I and averages at every iteration: no client drift at all."""

    def sync(self, iteration):
        return True


@pytest.mark.full
def test_drift_free_variant_is_caught_by_the_drift_slope(monkeypatch):
    """A drift-free bug leaves no floor to scale: the two-sided S3 (+2 in the step scale) catches it."""
    bad = _unexpected(monkeypatch, AveragesEveryStep, fc.S3)
    assert bad and bad[0].claim.id == fc.S3.id


@dataclass(frozen=True)
class UAveragedEveryStep(alg.FedBiO):
    """Communicates u at every iteration (u treated as a server variable): no u-dispersion between syncs."""

    def round(self, state, problem, t, streams):
        new, costs = super().round(state, problem, t, streams)
        new.u = average(new.u)
        return new, costs


@dataclass(frozen=True)
class PeriodOffByOne(alg.FedBiO):
    """I + 1 local steps between averages instead of I (an off-by-one in the local loop)."""

    def sync(self, iteration):
        return iteration % (self.I + 1) == 0


def test_u_without_dispersion_is_caught_by_the_tau_floor(monkeypatch):
    """S5's expected FAIL is about the u-dispersion: without it the fixed-tau floor falls like s^2 (no plateau).
    The registered FedBiO's verdicts on S5 and S15 are checked by tests/test_claims.py."""
    bad = _unexpected(monkeypatch, UAveragedEveryStep, fc.S5_SLOPE)  # the slope S5 observes, decided
    assert bad and bad[0].claim.id == fc.S5_SLOPE.id and bad[0].verdict != bad[0].expected


def test_period_off_by_one_is_caught_at_I_1(monkeypatch):
    """With I = 1 the extra local step brings drift where there is none: FedBiO misses x* (S6)."""
    bad = _unexpected(monkeypatch, PeriodOffByOne, fc.S6_FEDBIO)
    assert bad and bad[0].claim.id == fc.S6_FEDBIO.id


@pytest.mark.full
def test_period_off_by_one_is_caught_by_the_drift_in_I(monkeypatch):
    """An extra local step makes the floor grow like I^2 instead of (I - 1)^2: S15's slope in I - 1 leaves +2."""
    bad = _unexpected(monkeypatch, PeriodOffByOne, fc.S15)
    assert bad and bad[0].claim.id == fc.S15.id



# -- S7, S8 (FedBiOAcc's iterations to eps, exact runs) ------------------------------------------------
from ratecheck.proofs.fedbio import acceleration as acc  # noqa: E402


@dataclass(frozen=True)
class StepsIgnoreBM(alg.FedBiOAcc):
    """alpha_t without its (bM) factors: alpha_t = g/(u_bar + t)^(1/3) (a missing factor in Theorem 6's schedule)."""

    def schedule(self, problem):
        return {**super().schedule(problem), "bM": 1.0}


def test_storm_with_two_batches_is_caught_by_the_eps_exponent(monkeypatch):
    """Independent batches at the two points leave O(sigma^2/b) in every momentum step (pitfall 2): the
    smoothed E||grad h||^2 no longer falls like t^(-2/3), so S8's exponent in eps leaves -1.5 (or the levels
    are never reached). Exact mode runs the broken round as it is (still affine-Gaussian)."""
    bad = _unexpected(monkeypatch, StormTwoBatches, acc.S8)
    assert bad and bad[0].claim.id == acc.S8.id


def test_schedule_without_bM_is_caught_by_the_M_exponent(monkeypatch):
    """Without (bM)^(2/3) in alpha_t the steps stop growing with M while c = c_0/(bM) still shrinks: T_eps
    no longer scales like 1/M (S7)."""
    bad = _unexpected(monkeypatch, StepsIgnoreBM, acc.S7)
    assert bad and bad[0].claim.id == acc.S7.id


# Not caught, on purpose: momenta not averaged at a sync (spec §7's ablation, average_momenta=False). On
# Test A every client update is affine with a common linear part, so the client average of the momenta
# evolves the same whether or not they are averaged: S7/S8's virtual averages are identical. Only a
# heterogeneous instance (Test B) can see it; no FedBiOAcc claim runs there yet (issue #10).


def test_storm_with_two_batches_is_caught_by_the_headline(monkeypatch):
    """S9 with the STORM correction broken (pitfall 2): FedBiOAcc's rounds exponent is no longer below FedBiO's."""
    bad = _unexpected(monkeypatch, StormTwoBatches, acc.S9)
    assert bad and bad[0].claim.id == acc.S9.id


# -- S14 (FedBiOAcc's eps_T at fixed T against M, exact runs) -------------------------------------------


@dataclass(frozen=True)
class SharedClientNoise(alg.FedBiOAcc):
    """Every client draws the SAME minibatch (one draw broadcast over the client axis): the clients' noises
    no longer average, so the virtual average sees sigma^2/b instead of sigma^2/(bM) (wrong sampling)."""

    def sample_pair(self, problem, noise, shape, batch, **kw):
        one = problem.draw(noise, (1,) + tuple(shape[1:]), batch, **kw)
        fields = {k: None if v is None else np.repeat(v, shape[0], axis=1) for k, v in vars(one).items()}
        s = type(one)(**fields)
        return s, s


def test_shared_client_noise_is_caught_by_the_fixed_T_speedup(monkeypatch):
    """Without independent client noise the only M-dependence left is the schedule's (bM)^(2/3) step growth:
    eps_T no longer falls like (bMT)^(-2/3) (S14)."""
    bad = _unexpected(monkeypatch, SharedClientNoise, acc.S14)
    assert bad and bad[0].claim.id == acc.S14.id


# -- S2 under N2 (finite sums, minibatches without replacement) -----------------------------------------


def test_finite_sum_with_replacement_is_caught_by_the_effective_batch(monkeypatch):
    """Minibatches drawn WITH replacement (the oracle's sampling broken, not the algorithm's): the variance
    stays sigma^2/b, the floor's exponent against b_eff = b(K-1)/(K-b) leaves -1 (about -0.65), and the
    full batch b = K keeps a floor."""
    from ratecheck.problems.quadratic_bilevel import FedBilevel

    def with_replacement(self, rows, noise, shape, batch):
        K = rows.shape[1]
        pick = np.minimum((noise.uniform(shape + (batch,)) * K).astype(int), K - 1)
        client = np.arange(shape[0]).reshape((1, shape[0]) + (1,) * (len(shape) - 1) + (1,))
        return rows[client, pick].mean(axis=-2)

    monkeypatch.setattr(FedBilevel, "_row_mean", with_replacement)
    outcomes = check_claims([fc.S2_N2, fc.S2_N2_FULL], PROFILES["quick"], progress=False)
    assert not any(o.ok for o in outcomes), [o.reason for o in outcomes]


# -- StocBiO, the centralized reference ------------------------------------------------------------------


@dataclass(frozen=True)
class StocBiONeumannSignFlipped(alg.StocBiO):
    """The Neumann factors (I + eta_N H) instead of (I - eta_N H): a wrong sign in the series."""

    def hypergrad_estimate(self, problem, x, y, sample):
        v = problem.grad_y_f(x, y, sample)
        total = v.copy()
        for k in range(1, self.Q + 1):
            v = v + self.tau_N * problem.hvp(x, y, v, sample, self.Q - k)
            total += v
        return problem.grad_x_f(x, y, sample) - self.tau_N * problem.jvp(x, y, total, sample)


def test_stocbio_with_the_wrong_neumann_sign_is_caught(monkeypatch):
    """The flipped series sums growing powers: another fixed point (or none), not x_Q."""
    bad = _unexpected(monkeypatch, StocBiONeumannSignFlipped, fc.STOCBIO_XQ)
    assert bad and bad[0].claim.id == fc.STOCBIO_XQ.id


# -- N2 with matrix rows (issue #10: the spec's state-dependent finite sums) ----------------------------


def test_hessian_rows_drawn_with_replacement_are_caught_by_the_full_batch(monkeypatch):
    """Only the Hessian oracle's minibatches drawn WITH replacement (every other oracle still without): at b = K
    the Neumann factors keep their row noise, so FedBiO-Local no longer reaches x_Q exactly."""
    from dataclasses import replace

    from ratecheck.problems.quadratic_bilevel import FedBilevel

    paper = FedBilevel._row_mean

    def hessian_with_replacement(self, rows, noise, shape, batch):
        sampler = replace(self, replacement=True) if rows is self._rows_H else self
        return paper(sampler, rows, noise, shape, batch)

    monkeypatch.setattr(FedBilevel, "_row_mean", hessian_with_replacement)
    outcomes = check_claims([fc.S2_N2_ROWS_FULL], PROFILES["quick"], progress=False)
    assert not outcomes[0].ok and outcomes[0].verdict.name == "FAIL", outcomes[0].reason


@dataclass(frozen=True)
class PerFactorReadsOneRow(alg.FedBiOLocal):
    """'per_factor' that still draws ONE sample per factor (the b_x batch dropped from the chain's draw)."""

    def neumann_layout(self, problem, batch):
        shape, size = super().neumann_layout(problem, batch)
        return shape, 1


def test_per_factor_without_its_batch_is_caught_by_the_full_batch(monkeypatch):
    bad = _unexpected(monkeypatch, PerFactorReadsOneRow, fc.S2_N2_ROWS_FULL)
    assert bad and bad[0].claim.id == fc.S2_N2_ROWS_FULL.id
# -- S13 (FedBiOAcc-Local's iterations to eps against M, Test C1, exact runs) ------------------------------


@dataclass(frozen=True)
class SharedClientNoiseLocal(alg.FedBiOAccLocal):
    """Every client draws the SAME minibatch (one draw broadcast over the client axis): the clients' noises no
    longer average, so nu_bar sees sigma^2/b instead of sigma^2/(bM) (wrong sampling)."""

    def sample_pair(self, problem, noise, shape, batch, **kw):
        one = problem.draw(noise, (1,) + tuple(shape[1:]), batch, **kw)
        fields = {k: None if v is None else np.repeat(v, shape[0], axis=1) for k, v in vars(one).items()}
        s = type(one)(**fields)
        return s, s


@dataclass(frozen=True)
class LocalStepsIgnoreBM(alg.FedBiOAccLocal):
    """alpha_t without its (bM) factors (a missing factor in Theorem 8's schedule)."""

    def schedule(self, problem):
        return {**super().schedule(problem), "bM": 1.0}


@pytest.mark.parametrize("broken", [StormTwoBatchesLocal, SharedClientNoiseLocal, LocalStepsIgnoreBM],
                         ids=lambda v: v.__name__)
def test_broken_acc_local_is_caught_by_the_M_exponent(monkeypatch, broken):
    """S13's T_eps ∝ 1/(bM) needs the STORM correction on one batch (pitfall 2), independent client noise that
    nu_bar averages, and alpha_t's (bM)^(2/3): each bug moves the exponent off -1 (or the crossings out of the
    (bMT)^(-2/3) regime, or the level out of reach)."""
    bad = _unexpected(monkeypatch, broken, acc.S13)
    assert bad and bad[0].claim.id == acc.S13.id, [(o.claim.id, o.verdict, o.reason) for o in bad]


def test_shared_lower_noise_undoes_the_negative_controls_fail(monkeypatch):
    """S13's negative control FAILs the spec's 'no speedup at b_y = b' because the clients' lower-level errors are
    independent and average in nu_bar. With one minibatch shared by all clients they do not average (the
    per-client reading of Theorem 8 then holds): T_eps no longer falls with M, eps is not reached inside the
    horizon sized for 1/M, and the control cannot give its decided FAIL."""
    bad = _unexpected(monkeypatch, SharedClientNoiseLocal, acc.S13_LOWER)
    assert bad and bad[0].claim.id == acc.S13_LOWER.id, [(o.claim.id, o.verdict, o.reason) for o in bad]


# Not caught by S13, on purpose: the momentum nu not averaged at a sync, and y (or omega) averaged. On Test C1
# every client update is affine with a common linear part, so the virtual averages evolve the same either way
# (as for S7 on Test A); only heterogeneous A_m, B_m (Test C2) can see them (S12_C2 catches y averaged). And
# b_y not scaled by M: S13 has no lower-level noise and S13's negative control sets b_y = b itself;
# tests/test_fedbio_acceleration.py checks the default b_y = bM on exact runs.
