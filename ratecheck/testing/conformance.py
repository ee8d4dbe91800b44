"""Conformance checks every registered algorithm and problem family must pass (ratecheck's own and
any plugin's). Each check raises AssertionError naming what broke; each is cheap (a few rounds, a
few replicas, small instances) so that a plugin's unit tests can run all of them.

Statistical checks state their tolerance: ``exact_matches_monte_carlo`` asks the exact expectation
to lie within ``z`` standard errors of the Monte-Carlo mean (z = 5: a false alarm about once in
3.5 million per measure, while a wrong exact map is typically off by many standard errors), and
``constants_match_finite_differences`` asks the certified smoothness to bound the finite-difference
curvature up to 1e-6 relative (round-off of the differences at h = 1e-5), and sigma^2 to match the
sampled noise within 10% (4000 draws: the relative standard error is at most sqrt(2/4000) = 2.2%).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..algorithms.base import Algorithm
from ..assumptions import certified, declared_by
from ..exact import NotExact
from ..oracles import MinimaxOracles, SmoothFederatedOracles
from ..registry import default, make_problem
from ..seeding import Streams
from ..simulate.engine import run
from ..trace import Trace

# small instances of the package's families (any other family: its defaults)
SMALL: dict[str, dict[str, Any]] = {
    "quadratic": {"dim": 3, "clients": 4},
    "cosine_quadratic": {"dim": 2, "clients": 4},
    "quadratic_bilevel": {"dim_x": 2, "dim_y": 2, "clients": 4},
    "fedbio_bilevel": {},
    "minimax": {"kind": "quadratic", "clients": 4},
    "least_squares": {"lam": 0.5},
    "least_squares_interpolation": {"dim": 24, "clients": 3, "rows": 4, "batch": 2},
}


def small_problem(family: str, params: Mapping[str, Any] | None = None) -> Any:
    """A small instance of a registered family (its SMALL parameters, else its defaults)."""
    if params is None:
        return _small(family)
    return make_problem(family, dict(params))


@functools.lru_cache(maxsize=64)
def _small(family: str) -> Any:
    return make_problem(family, dict(SMALL.get(family, {})))


def home_family(algorithm: Algorithm[Any], families: list[str] | None = None) -> str | None:
    """The first registered family (small instance) the algorithm accepts and validates against."""
    for family in families or sorted(i.name for i in default().items("problem")):
        try:
            problem = small_problem(family)
            algorithm.check_problem(problem)
            algorithm.validate(problem)
        except Exception:  # not its family, or not with these defaults
            continue
        return family
    return None


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _assert_same_trace(a: Trace, b: Trace, what: str) -> None:
    for field in ("measures", "final", "counters"):
        left, right = getattr(a, field), getattr(b, field)
        assert set(left) == set(right), f"{what}: {field} keys differ: {sorted(left)} vs {sorted(right)}"
        for name in left:
            assert _same(np.asarray(left[name]), np.asarray(right[name])), f"{what}: {field}[{name!r}] differs"


def same_seed_same_numbers(algorithm: Algorithm[Any], problem: Any, rounds: int = 4, replicas: int = 3) -> None:
    """Two runs with one seed give the same numbers, bit for bit."""
    a = run(algorithm, problem, rounds, replicas=replicas, seed=11)
    b = run(algorithm, problem, rounds, replicas=replicas, seed=11)
    _assert_same_trace(a, b, f"{algorithm.name} on {problem.family}, same seed twice")


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    # batched linear algebra over R replicas may round differently for another R (last bits only)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))


def replica_independent_of_count(algorithm: Algorithm[Any], problem: Any, rounds: int = 4, replicas: int = 3) -> None:
    """Replica r's numbers do not depend on how many replicas ran beside it (streams derive from
    the replica id), up to round-off (1e-9 relative): a shared stream moves them by far more."""
    many = run(algorithm, problem, rounds, replicas=replicas, seed=5)
    r = replicas - 1
    alone = run(algorithm, problem, rounds, replicas=[r], seed=5)
    what = f"{algorithm.name} on {problem.family}: replica {r} of {replicas} vs alone"
    for name, values in many.measures.items():
        assert _close(values[:, r], alone.measures[name][:, 0]), f"{what}: measure {name!r} differs"
    for name, point in many.final.items():
        assert _close(point[r], alone.final[name][0]), f"{what}: final {name!r} differs"


def algorithm_params_round_trip(algorithm: Algorithm[Any]) -> None:
    """to_params is JSON-able and from_params inverts it."""
    import json

    params = algorithm.to_params()
    json.dumps(params)
    again = type(algorithm).from_params(json.loads(json.dumps(params)))
    assert again.to_params() == params, f"{algorithm.name}: from_params(to_params()) gives {again.to_params()}"


def problem_params_round_trip(problem: Any) -> None:
    """A family rebuilt from its spec has the same spec and the same constants."""
    spec = problem.spec
    again = make_problem(spec["name"], spec["params"])
    twice = make_problem(again.spec["name"], again.spec["params"])
    assert twice.spec == again.spec, f"{problem.family}: spec changes when rebuilt: {twice.spec} vs {again.spec}"
    mine, theirs = problem.constants(), again.constants()
    assert set(mine) == set(theirs), f"{problem.family}: constants differ when rebuilt"
    for name in mine:
        a, b = float(mine[name].value), float(theirs[name].value)
        assert a == b or (math.isnan(a) and math.isnan(b)), f"{problem.family}: constant {name} {a} -> {b}"


def offers_what_it_declares(problem: Any) -> None:
    """Every constant belongs to a declared assumption (so the binder can find it), and the problem
    implements the oracle protocols of ratecheck.oracles it is used through."""
    constants = problem.constants()
    have = certified(declared_by(problem), constants)
    covered = {name for a in have for name in a.constants}
    loose = sorted(set(constants) - covered)
    assert not loose, (f"{problem.family}: constants {loose} belong to no declared assumption "
                       f"(add them to {type(problem).__name__}.assumptions)")


def exact_matches_monte_carlo(algorithm: Algorithm[Any], problem: Any, rounds: int = 6, replicas: int = 400,
                              z: float = 5.0) -> bool:
    """Where exact mode accepts the run, its expectations lie within z standard errors of the
    Monte-Carlo means at every checkpoint (deterministic runs: within 1e-9 relative). Returns
    False when exact mode declines (nothing to compare)."""
    try:
        exact = run(algorithm, problem, rounds, mode="exact")
    except NotExact:
        return False
    mc = run(algorithm, problem, rounds, replicas=replicas, seed=3)
    for name, values in mc.measures.items():
        if name.startswith("avg:") or name not in exact.measures:
            continue
        expected = exact.measures[name][:, 0]
        mean = np.nanmean(values, axis=1)
        se = np.nanstd(values, axis=1, ddof=1) / math.sqrt(values.shape[1])
        slack = np.maximum(z * se, 1e-9 * np.maximum(np.abs(expected), 1e-12))
        bad = np.flatnonzero(np.isfinite(expected) & (np.abs(mean - expected) > slack))
        assert not bad.size, (f"{algorithm.name} on {problem.family}: exact E[{name}] = {expected[bad[0]]:.6g} at "
                              f"checkpoint {bad[0]}, Monte Carlo {mean[bad[0]]:.6g} +- {se[bad[0]]:.2g} ({replicas} replicas)")
    return True


def _directions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    v = rng.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def constants_match_finite_differences(problem: Any, points: int = 8, h: float = 1e-5) -> list[str]:
    """Check the certified constants against finite differences of the problem's own oracles:
    smooth federated families (L bounds every client's curvature, mu bounds the global curvature
    from below, sigma^2 is the sampled noise's mean square) and minimax families (l bounds every
    client's joint curvature). Returns the constants checked."""
    c = {k: float(v.value) for k, v in problem.constants().items()}
    rng = np.random.default_rng(0)
    checked: list[str] = []
    if isinstance(problem, SmoothFederatedOracles):
        N, d = problem.num_clients, problem.dim
        batch = problem.gather(np.broadcast_to(np.arange(N)[None, :], (points, N)))
        x = problem.initial_point() + rng.standard_normal((points, N, d))
        v = _directions(rng, (points, N, d))
        g0, g1 = problem.local_grad(batch, x), problem.local_grad(batch, x + h * v)
        curvature = np.linalg.norm(g1 - g0, axis=-1) / h
        if "L" in c:
            assert curvature.max() <= c["L"] * (1 + 1e-6) + 1e-6, (
                f"{problem.family}: a client's curvature {curvature.max():.6g} exceeds L = {c['L']:.6g}")
            checked.append("L")
        if "mu" in c:  # F = mean_i F_i at one point for every client, along one direction
            xg = np.broadcast_to(x[:, :1], x.shape)
            u = np.broadcast_to(v[:, :1], v.shape)
            diff = (problem.local_grad(batch, xg + h * u) - problem.local_grad(batch, xg)).mean(axis=1)
            curv = np.einsum("pd,pd->p", diff, u[:, 0]) / h
            assert curv.min() >= c["mu"] * (1 - 1e-4) - 1e-6, (
                f"{problem.family}: the global curvature {curv.min():.6g} is below mu = {c['mu']:.6g}")
            checked.append("mu")
        if "sigma" in c:
            draws = 4000  # client 0 drawn 4000 times in one replica (a replica's stream refills in chunks of 16k)
            streams = Streams(0, "5e" * 32, range(1))
            w = np.broadcast_to(problem.initial_point(), (1, draws, d)).copy()
            one = problem.gather(np.zeros((1, draws), dtype=int))
            noise = problem.stochastic_grad(one, w, streams["noise"]) - problem.local_grad(one, w)
            sq = float(np.mean(np.sum(noise**2, axis=-1)))
            assert abs(sq - c["sigma"] ** 2) <= 0.1 * c["sigma"] ** 2 + 1e-12, (
                f"{problem.family}: sampled E||noise||^2 = {sq:.6g}, sigma^2 = {c['sigma'] ** 2:.6g}")
            checked.append("sigma")
    elif isinstance(problem, MinimaxOracles) and "l" in c and hasattr(problem, "local_grads"):
        N, dx, dy = problem.num_clients, problem.dim_x, problem.dim_y
        batch = problem.gather(np.broadcast_to(np.arange(N)[None, :], (points, N)))
        x, y = rng.standard_normal((points, N, dx)), rng.standard_normal((points, N, dy))
        y = problem.project_y(y)
        v = _directions(rng, (points, N, dx + dy))
        gx0, gy0 = problem.local_grads(batch, x, y)
        gx1, gy1 = problem.local_grads(batch, x + h * v[..., :dx], y + h * v[..., dx:])
        curvature = np.linalg.norm(np.concatenate([gx1 - gx0, gy1 - gy0], axis=-1), axis=-1) / h
        assert curvature.max() <= c["l"] * (1 + 1e-4) + 1e-6, (
            f"{problem.family}: a client's joint curvature {curvature.max():.6g} exceeds l = {c['l']:.6g}")
        checked.append("l")
    return checked


def conforms(algorithm: Algorithm[Any], problem: Any) -> None:
    """The algorithm-side checks on one problem: same seed, replica independence, round trip."""
    algorithm_params_round_trip(algorithm)
    same_seed_same_numbers(algorithm, problem)
    replica_independent_of_count(algorithm, problem)


def with_fields(algorithm: Algorithm[Any], **changes: Any) -> Algorithm[Any]:
    """A copy with some hyper-parameters changed (checked as any construction is)."""
    return dataclasses.replace(algorithm, **changes)
