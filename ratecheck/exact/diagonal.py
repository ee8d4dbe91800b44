"""Exact moments of FedAvg diagonally, on problems whose client Hessians share an eigenbasis Q.

When every map of a round is diagonal in Q (client_update's in the start and in each noise draw,
server_step's in x and in the direction) and the measures are quadratic forms diagonal in Q, the
eigen-coordinates y_j = (Q^T x)_j evolve independently given the clients drawn, and exact mode
needs only E y_j and E y_j^2: O(N d) to probe once, O(d) a round.

The maps are still READ OFF the algorithm's own code: client_update runs on the start Q 1 (every
eigen-direction at once) and on the draws Q 1 (one call of the noise stream at a time),
server_step on x = Q 1 and direction = Q 1, the measures on +-Q e_j; every read-off is then checked
on random inputs (random clients, starts, draws, points), so a map or measure that is not diagonal in
Q raises NotExact and the run takes the dense FedAvgModel (or Monte Carlo). Supported: FedAvg's own
round and schedule, delay 'none' (lam = 0), no server state, any participation the FedAvgModel takes.

Per coordinate, with J_ij = (a_ij, b_ij) client i's job (y -> a y + b) and the multiplicity moments:
E[D | y] = w first (A y + B), A = sum_i a_i, B = sum_i b_i,
Var(D | y) = w^2 (pair - first^2) (A y + B)^2 + w^2 (same + single) sum_i (a_i y + b_i)^2
             + w^2 single sum_i Var(noise_i),
y' = s_x y + s_d D + s_0, so E y' and E y'^2 follow from E y, E y^2 in closed form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms.fedavg import FedAvg, FedAvgState
from ..oracles import SmoothFederatedOracles
from .delays import slot_moments
from .probing import AFFINE_RTOL, NotExact, ProbeStream, ProbeStreams, _close
from .seams import probe_aggregate


class DiagonalFedAvgModel:
    """Exact E y and E y^2 per eigen-coordinate of FedAvg.round; the run's flat state is
    (E y (d), E y^2 (d), 1)."""

    def __init__(self, algorithm: FedAvg, problem: SmoothFederatedOracles, rounds: int):
        basis = getattr(problem, "eigenbasis", False)
        if basis is False:
            raise NotExact(f"problem {problem.family!r} declares no shared eigenbasis")
        if type(algorithm).round is not FedAvg.round or type(algorithm).schedule is not FedAvg.schedule:
            raise NotExact(f"{algorithm.name} overrides round() or schedule(); the diagonal model reads FedAvg's")
        if int(algorithm.delay.lam) != 0:
            raise NotExact("the diagonal model takes no delays (lam = 0)")
        self.algorithm, self.problem = algorithm, problem
        self.Q = None if basis is None else np.asarray(basis, dtype=float)
        N, d = problem.num_clients, problem.dim
        self.N, self.d, self.n = N, d, 2 * d + 1
        x0 = np.asarray(problem.initial_point(), dtype=float).reshape(1, d)
        if algorithm.server_init(x0) is not None:
            raise NotExact(f"{algorithm.name} keeps a server state; the diagonal model takes none")
        self.m = algorithm.participation.per_round(N)
        self.w = probe_aggregate(algorithm, self.m, N, d)
        shared = algorithm.duplicates == "shared" or algorithm.participation.mode != "with_replacement"
        self.moments = slot_moments(algorithm.participation, N, "shared" if shared else "independent")
        a, b, var = self._probe_clients()
        steps = [self._probe_server(t) for t in sorted({0, 1, rounds - 1})]
        if not all(np.array_equal(s, steps[0]) for s in steps):
            raise NotExact(f"{algorithm.name}.server_step changes with t; the diagonal model takes a fixed one")
        self.sx, self.sd, self.s0 = steps[0]
        w, mo = self.w, self.moments
        self.A, self.B = a.sum(axis=0), b.sum(axis=0)
        self.A2, self.AB, self.B2 = (a * a).sum(axis=0), (a * b).sum(axis=0), (b * b).sum(axis=0)
        self.noise = w * w * mo.single * var.sum(axis=0)
        self.pair = w * w * (mo.pair - mo.first ** 2)
        self.each = w * w * (mo.same + mo.single)
        self.f = self.sx + self.sd * w * mo.first * self.A  # E y' = f E y + g
        self.g = self.sd * w * mo.first * self.B + self.s0
        self.y0 = self.to_eigen(x0[0])
        self._omitted: dict[str, str] = {}
        self._names, self._forms = self._probe_measures()

    # -- coordinates ---------------------------------------------------------------------------
    def to_eigen(self, x: np.ndarray) -> np.ndarray:
        return x if self.Q is None else x @ self.Q

    def from_eigen(self, y: np.ndarray) -> np.ndarray:
        return y if self.Q is None else y @ self.Q.T

    # -- probes --------------------------------------------------------------------------------
    def _call(self, starts: np.ndarray, clients: np.ndarray, script) -> tuple[np.ndarray, list]:
        R = starts.shape[0]
        journal: list = []
        streams = ProbeStreams(R, lambda purpose: ProbeStream(R, script, purpose=purpose, journal=journal))
        out = self.algorithm.client_update(self.problem, self.problem.gather(clients), starts.copy(), streams)
        out = np.asarray(out, dtype=float)
        if out.shape != starts.shape:
            raise NotExact(f"client_update returned shape {out.shape}, expected {starts.shape}")
        return out, journal

    def _probe_clients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """a_i, b_i and the noise variances per eigen-coordinate (each (N, d)), read off client_update
        on the origin and Q 1, then one call of the noise per probe row (draws Q 1), and checked on
        random clients, starts and draws."""
        N, d = self.N, self.d
        everyone = np.broadcast_to(np.arange(N), (2, N))
        ones = self.from_eigen(np.ones(d))
        starts = np.zeros((2, N, d))
        starts[1] = ones
        out, log = self._call(starts, everyone, None)
        b_x = out[0]
        a = self.to_eigen(out[1] - b_x)
        if any(shape != (N, d) for _, _, shape in log):
            raise NotExact(f"client_update's draws are not one d-vector per client ({[s for _, _, s in log]}): "
                           "the diagonal model needs noise in the problem's coordinates")
        calls = len(log)
        gains = np.zeros((calls, N, d))
        if calls:
            order = {"n": 0}

            def unit(index: int, shape: tuple[int, ...]) -> np.ndarray:
                block = np.zeros((calls, *shape))
                if order["n"] < calls:
                    block[order["n"]] = ones
                order["n"] += 1
                return block

            noise_out, _ = self._call(np.zeros((calls, N, d)), np.broadcast_to(np.arange(N), (calls, N)), unit)
            gains = self.to_eigen(noise_out - b_x)  # row k: client i's gain on draw k, per coordinate
        # the check: random clients (with repeats), starts and draws
        rng = np.random.default_rng(0)
        m, R = self.m, 3
        clients = rng.integers(0, N, (R, m))
        scale = max(1.0, float(np.max(np.abs(self.problem.initial_point()))))
        start = scale * rng.standard_normal((R, m, d))
        z = rng.standard_normal((calls, R, m, d))
        served = {"n": 0}

        def random_draws(index: int, shape: tuple[int, ...]) -> np.ndarray:
            k = served["n"]
            served["n"] += 1
            if k >= calls or tuple(shape) != (m, d):
                raise NotExact("client_update's draws depend on its inputs (data-dependent control flow)")
            return z[k]

        actual, _ = self._call(start, clients, random_draws)
        noise = sum(self.from_eigen(gains[k][clients] * self.to_eigen(z[k])) for k in range(calls)) if calls else 0.0
        predicted = self.from_eigen(a[clients] * self.to_eigen(start)) + b_x[clients] + noise
        gap = _close(actual, predicted)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"client_update is not diagonal in the problem's eigenbasis (off by {gap:.2e} on random "
                           "inputs)")
        return a, self.to_eigen(b_x), (gains ** 2).sum(axis=0)

    def _probe_server(self, t: int) -> np.ndarray:
        """(s_x, s_d, s_0) per eigen-coordinate of server_step at round t, checked at random."""
        d = self.d
        ones = self.from_eigen(np.ones(d))
        rng = np.random.default_rng([t, 3])
        x = np.vstack([np.zeros(d), ones, np.zeros(d), rng.standard_normal((3, d))])
        D = np.vstack([np.zeros(d), np.zeros(d), ones, rng.standard_normal((3, d))])
        out, _ = self.algorithm.server_step(x.copy(), D.copy(), None, t)
        out = np.asarray(out, dtype=float)
        s0 = out[0]
        sx, sd = self.to_eigen(out[1] - s0), self.to_eigen(out[2] - s0)
        predicted = self.from_eigen(sx * self.to_eigen(x[3:]) + sd * self.to_eigen(D[3:])) + s0
        gap = _close(out[3:], predicted)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"server_step is not diagonal in the problem's eigenbasis (off by {gap:.2e})")
        return np.stack([sx, sd, self.to_eigen(s0)])

    def _probe_measures(self) -> tuple[list[str], np.ndarray]:
        """Each measure as c + l.y + sum_j q_j y_j^2, read off the origin and +-Q e_j, checked on random
        points; rows on the flat state (E y, E y^2, 1), then the divergence row sum_j E y_j^2."""
        d = self.d
        eye = np.eye(d) if self.Q is None else self.Q.T
        check = max(1.0, float(np.max(np.abs(self.y0)))) * np.random.default_rng(0).standard_normal((3, d))
        points = np.vstack([np.zeros(d), eye, -eye, self.from_eigen(check)])
        values = self.problem.all_measures(points)
        names, rows = [], []
        for name, v in values.items():
            v = np.asarray(v, dtype=float)
            c, plus, minus = v[0], v[1:1 + d], v[1 + d:1 + 2 * d]
            lin, quad = (plus - minus) / 2, (plus + minus) / 2 - c
            declared = name.removeprefix("avg:") in getattr(self.problem, "non_quadratic_measures", ())
            gap = _close(v[-3:], c + check @ lin + (check * check) @ quad)
            if declared:
                self._omitted[name] = f"measure {name!r} is not a quadratic form of the output (the problem says so)"
                continue
            if not gap <= AFFINE_RTOL:
                raise NotExact(f"measure {name!r} is not a quadratic form diagonal in the eigenbasis (off by {gap:.2e})")
            names.append(name)
            rows.append(np.concatenate([lin, quad, [c]]))
        rows.append(np.concatenate([np.zeros(d), np.ones(d), [0.0]]))
        return names, np.array(rows)

    # -- the model interface used by run_exact -------------------------------------------------
    def measure_forms(self, omitted: dict[str, str]) -> tuple[list[str], np.ndarray]:
        omitted.update(self._omitted)
        return list(self._names), self._forms

    def initial(self) -> np.ndarray:
        return np.concatenate([self.y0, self.y0 * self.y0, [1.0]])

    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        """(E y, E y^2, 1) after a round from before it: O(d)."""
        d = self.d
        mean, second = flat[:d], flat[d:2 * d]
        total = self.A * self.A * second + 2 * self.A * self.B * mean + self.B * self.B
        each = self.A2 * second + 2 * self.AB * mean + self.B2
        var = self.pair * total + self.each * each + self.noise
        f, g = self.f, self.g
        return np.concatenate([f * mean + g, f * f * second + 2 * f * g * mean + g * g + self.sd * self.sd * var, [1.0]])

    def final(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        return {"x": self.from_eigen(flat[:self.d])[None, :].copy()}

    def costs(self) -> dict[str, float]:
        jobs = self.moments.expected_jobs
        return {"oracle_calls": jobs * self.algorithm.local_steps, "vectors_up": jobs,
                "vectors_down": float(self.N) if self.algorithm.broadcast_to_all else jobs}

    def info(self, flat: np.ndarray) -> dict[str, Any]:
        return self.algorithm.info(FedAvgState(history=np.zeros((1, 1, self.d)), t=0, max_delay=0))
