"""FedBiO's Monte-Carlo runs replayed with their own noise (issue #23 item 2): the Hessian and Jacobian noise.

The exact oracles (oracles.py, oracles_baselines.py) keep sigma_H = sigma_J = 0: noise that multiplies the state is
not affine-Gaussian, so exact mode refuses it (an ERROR), and the Monte-Carlo claims' tolerances absorb what it
changes by O(tau_N^2 sigma_H^2) (e.g. every Neumann factor reading the first Hessian draw). Here a Monte-Carlo run
with every noise on is replayed replica by replica from the algorithm boxes of ../shared/seeds/002_25acef2c58d2293a.txt
(Algorithms 1-4, eq. (6)), StocBiO's Algorithms 1-2 and spec fedbio §2, §6.0 N1, §7, drawing the SAME standard
normals from the run's own 'noise' Generators (ratecheck.seeding), NOT from ratecheck/algorithms/fedbio.py; the gap is
float64 round-off.

The draws' layout is the seeding contract of the fedbio_bilevel problem's N1 oracles, not the algorithm: a call
for a minibatch of b samples per client serves, in this order and only for the oracles it names with a non-zero
sigma, x-block of grad f (.., p) and y-block (.., d) each times sigma_f/sqrt((p + d) b), grad_y g (.., d) times
sigma_g/sqrt(d b), the Jacobian noise (.., p, d) times sigma_J/sqrt(p d b), and the Hessian noise (.., k, d, d)
times sigma_H sqrt(2/(d (d + 1)) / b), symmetrized S = (N + N^T)/2 (spec §6.0: E||n||^2 = sigma^2 per sample, a
mean of b samples sigma^2/b). Per iteration the boxes call it as follows ((M,) one minibatch per client; (M, b)
b copies of single-sample estimators of eq. (6), spec §2.6 item 5; k = Q Hessian draws xi_1..xi_Q):

* fedbio (Alg. 1): B_y (M,) b_y [gy]; then (M,) b_x [fx, fy, J, H with k = 1]: Jacobi steps
  y -= gamma omega, x -= eta (grad_x f - grad_xy g u), u += tau (grad_y f - grad_yy g u); x, y, u averaged at a sync.
* fedbioacc (Alg. 2): a first batch (M,) b1 [fx, fy, gy, J, H]; per iteration ONE batch (M,) b [the same] at both
  points; targets G = grad_y g, Mu = grad_x f - grad_xy g u, P = grad_yy g u - grad_y f (each point its own u, spec
  §2.6 item 3); momenta d' = T(z') + (1 - c alpha_t^2)(d - T(z)); variables and momenta averaged at a sync.
* fedbio_local (Alg. 3): B_y (M,) b_y [gy]; then B_x (M, b_x) 1 [fx, fy, J, H with k = Q], grad f's two blocks
  from one xi_f; x -= eta mean_copies Phi-hat, y -= gamma omega; only x averaged at a sync.
* fedbioacc_local (Alg. 4): first batches (M,) b1 M [gy] and (M, b1) 1 [fx, fy, J, H]; per iteration ONE B_y (M,)
  b M [gy] and ONE B_x (M, b) 1 at both points; x and nu averaged at a sync, y and omega never.
* fedbio_local with neumann_batch 'per_factor': B_x is (M,) b_x [fx, fy, J, H with k = Q]: one chain of eq. (6) whose
  every oracle and factor is a b_x-minibatch mean.
* stocbio (Ji, Yang, Liang 2021, Algorithms 1-2; spec §7, M = 1): D inner steps y -= beta grad_y g(x_k, y), each
  its own (1,) b_y [gy]; then (1,) b [fx, fy, J, H with k = Q]: x_k+1 = x_k - alpha Phi-hat(x_k, y_k^D), one chain.

Phi-hat of eq. (6) per copy: grad_x f - tau_N grad_xy g sum_{q=-1}^{Q-1} prod_{j=Q-q}^{Q} (I - tau_N grad_yy g(xi_j))
grad_y f, the product applied right to left (xi_Q first), xi_j the draw j - 1 of the Hessian axis. alpha_t = gain
(bM)^(2/3)/((bM)^2 u_bar + t)^(1/3) (spec §2.6 item 4). Compared: every checkpoint's measures per replica (recomputed
from (A_m, B_m, c_m, d_m, e_m) by ``_global_forms`` / ``local_forms``), the final iterates per replica, and the
run's ball diagnostics max_t,m ||x_t^(m)||, ||y_t^(m)||, ||u_t^(m)|| (over the post-sync states).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ratecheck.claims import Claim, Profile
from ratecheck.claims.trajectory import UNBOUNDED, deviation, trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.seeding import Streams
from ratecheck.trace import RunConfig, Trace

from .oracles import FAMILY, KEY, _global_forms, local_forms
from .theorems import src

REPLAY_T, REPLAY_REPLICAS = 24, 4
# deterministic given the draws: float64 round-off over 24 iterations (measured below 2e-14); each plausible bug of
# the tests moves some replica by >= 0.1
REPLAY_RTOL = 1e-10
# every factor non-trivial: heterogeneous A_m, B_m, p != d, all four noises on, none of them 1; tau_N (L + sigma_H)
# = 0.77 < 1 keeps every sampled I - tau_N grad_yy g contractive (spec §6.0)
NOISES = {"sigma_f": 0.8, "sigma_g": 1.3, "sigma_J": 0.3, "sigma_H": 0.35}
BASE = {"clients": 3, "dim_x": 3, "dim_y": 2, "b": None, "s": 0.7, "s_H": 0.4, "s_B": 0.5, "a_min": 1.0,
        "a_max": 2.5, "rho": 0.6, "seed": 3, **NOISES}
Sample = dict[str, Any]  # one draw's noise arrays by oracle (fx, fy, gy, J, H), None where sigma is 0
STORM = {"alpha_gain": 0.25, "u_bar": 0.0005, "c_nu": 0.9, "c_om": 1.6}
CASES: dict[str, dict[str, Any]] = {
    "fedbio_local": {"test": "C2", "steps": {"I": 3, "eta": 0.05, "gamma": 0.08, "Q": 4, "tau_N": 0.25, "bx": 2,
                                             "by": 3},
                     "what": "FedBiO-Local with I = 3, Q = 4 Hessian draws per copy at tau_N = 0.25, b_x = 2 copies, "
                             "b_y = 3"},
    "fedbioacc_local": {"test": "C2", "steps": {"I": 3, "eta": 0.1, "gamma": 0.12, "Q": 3, "tau_N": 0.25, "b": 2,
                                                "b1": 3, **STORM},
                        "what": "FedBiOAcc-Local with I = 3, Q = 3 at tau_N = 0.25, b = 2 copies (b_y = b M = 6), first "
                                "batches b1 = 3 and b1 M = 9, alpha_t = 0.25 (bM)^(2/3)/((bM)^2 0.0005 + t)^(1/3), c_nu = "
                                "0.9, c_omega = 1.6"},
    "fedbio": {"test": "B", "steps": {"I": 3, "eta": 0.05, "gamma": 0.08, "tau": 0.07, "bx": 2, "by": 3},
               "what": "FedBiO with I = 3, tau = 0.07, b_x = 2, b_y = 3"},
    "fedbioacc": {"test": "B", "steps": {"I": 3, "eta": 0.1, "gamma": 0.12, "tau": 0.1, "b": 2, "b1": 3, **STORM,
                                         "c_u": 0.6},
                  "what": "FedBiOAcc with I = 3, b = 2, b1 = 3, alpha_t as for FedBiOAcc-Local, c_nu = 0.9, c_omega = "
                          "1.6, c_u = 0.6"},
    "fedbio_local_per_factor": {"algorithm": "fedbio_local", "test": "C2",
                                "steps": {"I": 2, "eta": 0.06, "gamma": 0.1, "Q": 3, "tau_N": 0.25, "bx": 3, "by": 2,
                                          "neumann_batch": "per_factor"},
                                "what": "FedBiO-Local with neumann_batch 'per_factor' (ONE chain of eq. (6) whose factors "
                                        "are b_x = 3-minibatch means, spec §2.6 item 5), I = 2, Q = 3 at tau_N = 0.25, "
                                        "b_y = 2"},
    "stocbio": {"test": "C2", "clients": 1,
                "steps": {"eta": 0.3, "gamma": 0.2, "D": 3, "Q": 3, "tau_N": 0.25, "b": 2, "by": 3},
                "what": "StocBiO (Ji, Yang, Liang 2021, Algorithms 1-2; the centralized reference of spec §7) with D = 3 "
                        "warm-started inner steps of batch b_y = 3, then x -= 0.3 Phi-hat with every oracle and each "
                        "of the Q = 3 Hessian factors a b = 2-minibatch, tau_N = 0.25"},
}


class Noise:
    """The run's 'noise' Generators read as the N1 oracles (layout in the module docstring)."""

    def __init__(self, config: RunConfig, p: int, d: int) -> None:
        pp = config.problem_params
        self.sigma = {name: float(pp.get(name, 0.0)) for name in NOISES}
        if pp.get("finite_sum", 0):
            raise ValueError("the replay reads N1 noise (problem finite_sum 0)")
        self.stream = Streams(int(config.seed), config.run_key(), range(int(config.replicas)))["noise"]
        self.p, self.d = p, d

    def _normal(self, sigma: float, shape: tuple[int, ...], variance_per: float) -> np.ndarray | None:
        return None if sigma == 0.0 else self.stream.normal(shape) * (sigma / np.sqrt(variance_per))

    def draw(self, clients: tuple[int, ...], batch: int, oracles: str, hessians: int = 1) -> Sample:
        p, d, s, names = self.p, self.d, self.sigma, oracles.split()
        out: Sample = {}
        if "fx" in names:
            out["fx"] = self._normal(s["sigma_f"], clients + (p,), (p + d) * batch)
        if "fy" in names:
            out["fy"] = self._normal(s["sigma_f"], clients + (d,), (p + d) * batch)
        if "gy" in names:
            out["gy"] = self._normal(s["sigma_g"], clients + (d,), d * batch)
        if "J" in names:
            out["J"] = self._normal(s["sigma_J"], clients + (p, d), p * d * batch)
        if "H" in names:
            N = self._normal(s["sigma_H"], clients + (hessians, d, d), d * (d + 1) / 2 * batch)
            out["H"] = None if N is None else 0.5 * (N + np.swapaxes(N, -1, -2))
        return out


def _add(value: np.ndarray, noise: np.ndarray | None) -> np.ndarray:
    return value if noise is None else value + noise


class Clients:
    """Client data of the instance (A_m, B_m, c_m, d_m, e_m, rho) and the oracles of spec §6.0 written from g_m,
    f_m (Tests B, C: g_m = y^T A_m y/2 - y^T B_m x - c_m^T y, f_m = ||y - d_m||^2/2 + rho ||x - e_m||^2/2), on
    points (R, M, ...) or with a copy axis (R, M, C, ...)."""

    def __init__(self, config: RunConfig) -> None:
        prob = problem_of(config)
        if prob.upper != "quadratic" or config.problem_params.get("start", "zero") != "zero":
            raise ValueError("the replay is written for quadratic f and the start x1 = y1 = u1 = 0")
        self.A, self.B = np.asarray(prob.A), np.asarray(prob.B)
        self.c, self.d, self.e, self.rho = (np.asarray(prob.c), np.asarray(prob.d_m), np.asarray(prob.e_m),
                                            float(prob.rho))
        self.M, self.dy, self.p = self.B.shape

    def _data(self, z: np.ndarray, name: str) -> np.ndarray:
        data = getattr(self, name)
        return data[(slice(None),) + (None,) * (z.ndim - 3)]  # align with a copy axis

    def _apply(self, z: np.ndarray, matrix: np.ndarray, v: np.ndarray) -> np.ndarray:
        """matrix (M, i, j) of every client (or per sample, (R, M, [C,] i, j)) times v (R, M, [C,] j)."""
        if matrix.ndim == 3:
            matrix = matrix[(slice(None),) + (None,) * (z.ndim - 3)]
        return np.einsum("...ij,...j->...i", matrix, v)

    def grad_x_f(self, x: np.ndarray, s: Sample) -> np.ndarray:
        return _add(self.rho * (x - self._data(x, "e")), s.get("fx"))

    def grad_y_f(self, y: np.ndarray, s: Sample) -> np.ndarray:
        return _add(y - self._data(y, "d"), s.get("fy"))

    def grad_y_g(self, x: np.ndarray, y: np.ndarray, s: Sample) -> np.ndarray:
        return _add(self._apply(y, self.A, y) - self._apply(x, self.B, x) - self._data(y, "c"), s.get("gy"))

    def jac_xy(self, z: np.ndarray, u: np.ndarray, s: Sample) -> np.ndarray:
        """grad_xy g_m(xi) u = (-B_m^T + J(xi)) u in R^p."""
        return _add(-self._apply(z, np.swapaxes(self.B, 1, 2), u), None if s.get("J") is None else
                    np.einsum("...ij,...j->...i", s["J"], u))

    def hess_yy(self, z: np.ndarray, u: np.ndarray, s: Sample, j: int = 1) -> np.ndarray:
        """grad_yy g_m(xi_j) u = (A_m + S_j) u, xi_j the j-th Hessian draw (j = 1..Q)."""
        H = s.get("H")
        return _add(self._apply(z, self.A, u), None if H is None else np.einsum("...ij,...j->...i", H[..., j - 1, :, :], u))

    def phi_hat(self, x: np.ndarray, y: np.ndarray, s: Sample, Q: int, tau_N: float) -> np.ndarray:
        """Eq. (6) on each copy: grad_x f(xi_f) - tau_N grad_xy g(xi_g) sum_{q=-1}^{Q-1} prod_{j=Q-q}^{Q}
        (I - tau_N grad_yy g(xi_j)) grad_y f(xi_f)."""
        v = self.grad_y_f(y, s)
        total = v.copy()
        for j in range(Q, 0, -1):  # the term q applies the factors j = Q, Q-1, .., Q-q to grad_y f
            v = v - tau_N * self.hess_yy(y, v, s, j)
            total = total + v
        return self.grad_x_f(x, s) - tau_N * self.jac_xy(x, total, s)


def _sync(z: np.ndarray) -> np.ndarray:
    return np.broadcast_to(z.mean(axis=1, keepdims=True), z.shape).copy()


def _alpha(k: dict[str, Any], bM: float, t: int) -> float:
    return float(k["alpha_gain"]) * bM ** (2 / 3) / (bM**2 * float(k["u_bar"]) + t) ** (1 / 3)


class Replay:
    """One replayed run: the clients' (x, y[, u]) per replica, the measures at the checkpoints, the ball maxima."""

    def __init__(self, config: RunConfig, marks: np.ndarray) -> None:
        self.config, self.k = config, dict(config.params)
        self.cl = Clients(config)
        self.noise = Noise(config, self.cl.p, self.cl.dy)
        R, M, p, dy = int(config.replicas), self.cl.M, self.cl.p, self.cl.dy
        self.x, self.y, self.u = np.zeros((R, M, p)), np.zeros((R, M, dy)), np.zeros((R, M, dy))
        self.local = config.algorithm in ("fedbio_local", "fedbioacc_local", "stocbio")
        cl = self.cl
        if self.local:
            n = M * (p + dy)
            self.layout = [m * (p + dy) + np.arange(p + dy) for m in range(M)]
            _, self.forms = local_forms(cl.A, cl.B, cl.c, cl.d, cl.e, cl.rho, [ix[:p] for ix in self.layout],
                                        [ix[p:] for ix in self.layout], n)
        else:
            _, self.global_forms = _global_forms(cl.A, cl.B, cl.c, cl.d, cl.e, cl.rho)
        self.marks = {int(t): j for j, t in enumerate(marks)}
        names = ("grad_norm_sq", "dist_sq", "y_err") + (() if self.local else ("u_err",))
        self.out = {name: np.full((len(marks), R), np.nan) for name in names}
        self.max_norm = {"x": 0.0, "y": 0.0, "u": 0.0}

    def record(self, t: int) -> None:
        for name, z in (("x", self.x), ("y", self.y), ("u", self.u)):
            self.max_norm[name] = max(self.max_norm[name], float(np.linalg.norm(z, axis=-1).max()))
        if t not in self.marks:
            return
        if self.local:
            state = np.concatenate([np.concatenate([self.x, self.y], axis=2).reshape(len(self.x), -1),
                                    np.ones((len(self.x), 1))], axis=1)
            for name, L in self.forms.items():
                self.out[name][self.marks[t]] = np.sum((state @ L.T) ** 2, axis=1)
            return
        avg = np.concatenate([self.x.mean(1), self.y.mean(1), self.u.mean(1)], axis=1)
        for name, (L, l0) in self.global_forms.items():
            self.out[name][self.marks[t]] = np.sum((avg @ L.T + l0) ** 2, axis=1)

    def run(self) -> Replay:
        step = getattr(self, f"_{self.config.algorithm}")
        state = getattr(self, f"_{self.config.algorithm}_start", lambda: None)()
        self.record(0)
        for t in range(1, int(self.config.rounds) + 1):  # iteration t of the box; a sync when t % I == 0
            state = step(t, t % int(self.k.get("I", 1)) == 0, state)
            self.record(t)
        return self

    # Algorithm 1
    def _fedbio(self, t: int, sync: bool, _: Any) -> None:
        k, cl, M = self.k, self.cl, self.cl.M
        s_y = self.noise.draw((M,), int(k["by"]), "gy")
        s_x = self.noise.draw((M,), int(k["bx"]), "fx fy J H")
        x, y, u = self.x, self.y, self.u
        omega = cl.grad_y_g(x, y, s_y)
        nu = cl.grad_x_f(x, s_x) - cl.jac_xy(x, u, s_x)
        r = cl.grad_y_f(y, s_x) - cl.hess_yy(y, u, s_x)
        self.x, self.y, self.u = x - k["eta"] * nu, y - k["gamma"] * omega, u + k["tau"] * r
        if sync:
            self.x, self.y, self.u = _sync(self.x), _sync(self.y), _sync(self.u)

    # Algorithm 2
    def _targets(self, x: np.ndarray, y: np.ndarray, u: np.ndarray, s: Sample) -> dict[str, np.ndarray]:
        cl = self.cl
        return {"om": cl.grad_y_g(x, y, s), "nu": cl.grad_x_f(x, s) - cl.jac_xy(x, u, s),
                "q": cl.hess_yy(y, u, s) - cl.grad_y_f(y, s)}

    def _fedbioacc_start(self) -> dict[str, np.ndarray]:
        return self._targets(self.x, self.y, self.u, self.noise.draw((self.cl.M,), int(self.k["b1"]), "fx fy gy J H"))

    def _fedbioacc(self, t: int, sync: bool, mom: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        k = self.k
        a = _alpha(k, float(int(k["b"]) * self.cl.M), t)
        old = (self.x, self.y, self.u)
        new = [old[0] - k["eta"] * a * mom["nu"], old[1] - k["gamma"] * a * mom["om"], old[2] - k["tau"] * a * mom["q"]]
        if sync:
            new = [_sync(z) for z in new]
        s = self.noise.draw((self.cl.M,), int(k["b"]), "fx fy gy J H")  # one batch, both points (line 8)
        at_new, at_old = self._targets(new[0], new[1], new[2], s), self._targets(old[0], old[1], old[2], s)
        c = {"om": k["c_om"], "nu": k["c_nu"], "q": k["c_u"]}
        mom = {name: at_new[name] + (1 - c[name] * a**2) * (mom[name] - at_old[name]) for name in mom}
        self.x, self.y, self.u = new
        return {name: _sync(v) for name, v in mom.items()} if sync else mom

    # Algorithms 3 and 4: eq. (6) on (M, copies)
    def _neumann(self, x: np.ndarray, y: np.ndarray, batch: int, s: Sample | None = None) -> tuple[np.ndarray, Sample]:
        """Phi-hat of ``batch`` samples per client: the mean of that many single-sample copies, or (per_factor,
        StocBiO) one chain whose oracles and factors are each a minibatch of that size."""
        Q, tau_N = int(self.k["Q"]), float(self.k["tau_N"])
        if self.config.algorithm == "stocbio" or self.k.get("neumann_batch", "copies") == "per_factor":
            if s is None:
                s = self.noise.draw((self.cl.M,), batch, "fx fy J H", hessians=max(Q, 1))
            return self.cl.phi_hat(x, y, s, Q, tau_N), s
        if s is None:
            s = self.noise.draw((self.cl.M, batch), 1, "fx fy J H", hessians=max(Q, 1))
        return self.cl.phi_hat(x[:, :, None], y[:, :, None], s, Q, tau_N).mean(axis=2), s

    def _fedbio_local(self, t: int, sync: bool, _: Any) -> None:
        k, cl = self.k, self.cl
        s_y = self.noise.draw((cl.M,), int(k["by"]), "gy")
        nu, _s = self._neumann(self.x, self.y, int(k["bx"]))
        self.x, self.y = self.x - k["eta"] * nu, self.y - k["gamma"] * cl.grad_y_g(self.x, self.y, s_y)
        if sync:
            self.x = _sync(self.x)  # y is never averaged

    def _stocbio(self, t: int, sync: bool, _: Any) -> None:
        """StocBiO's outer iteration: D warm-started SGD steps on y at x_k, then x_k+1 = x_k - alpha Phi-hat(x_k, y_k^D)."""
        k, cl = self.k, self.cl
        for _step in range(int(k["D"])):
            self.y = self.y - k["gamma"] * cl.grad_y_g(self.x, self.y, self.noise.draw((cl.M,), int(k["by"]), "gy"))
        self.x = self.x - k["eta"] * self._neumann(self.x, self.y, int(k["b"]))[0]

    def _by(self) -> int:
        by = self.k.get("by")
        return int(self.k["b"]) * self.cl.M if by in (None, "None") else int(by)  # Theorem 8: b_y = b M

    def _fedbioacc_local_start(self) -> dict[str, np.ndarray]:
        k, cl = self.k, self.cl
        if k.get("first_batch", "sampled") != "sampled":
            raise ValueError("the replay draws the first batches (first_batch 'sampled')")
        s_y = self.noise.draw((cl.M,), int(k["b1"]) * self._by() // int(k["b"]), "gy")  # |B_y1| = b1 M
        om = cl.grad_y_g(self.x, self.y, s_y)
        return {"om": om, "nu": self._neumann(self.x, self.y, int(k["b1"]))[0]}

    def _fedbioacc_local(self, t: int, sync: bool, mom: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        k, cl = self.k, self.cl
        b = int(k["b"])
        a = _alpha(k, float(b * cl.M), t)
        x_new, y_new = self.x - k["eta"] * a * mom["nu"], self.y - k["gamma"] * a * mom["om"]
        if sync:
            x_new = _sync(x_new)
        s_y = self.noise.draw((cl.M,), self._by(), "gy")  # one B_y and one B_x at both points (line 7)
        om = cl.grad_y_g(x_new, y_new, s_y) + (1 - k["c_om"] * a**2) * (mom["om"] - cl.grad_y_g(self.x, self.y, s_y))
        nu_new, s_x = self._neumann(x_new, y_new, b)
        nu = nu_new + (1 - k["c_nu"] * a**2) * (mom["nu"] - self._neumann(self.x, self.y, b, s_x)[0])
        self.x, self.y = x_new, y_new
        return {"om": om, "nu": _sync(nu) if sync else nu}  # omega stays on the client

    def finals(self) -> dict[str, np.ndarray]:
        if self.local:
            return {"x": self.x.mean(1), "y_clients": self.y}
        return {"x": self.x.mean(1), "y": self.y.mean(1), "u": self.u.mean(1)}

    def diagnostics(self) -> dict[str, float]:
        names = ("x", "y") if self.local else ("x", "y", "u")
        return {f"max_{name}_norm": self.max_norm[name] for name in names}


def replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): the measures of the run of ``config`` replayed from its boxes (see the module)."""
    return Replay(config, marks).run().out


def _relative(got: Any, want: Any) -> float:
    have, should = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    gap = np.abs(have - should) / (np.abs(should) + 1e-12 * float(np.max(np.abs(should))))
    return float(np.max(np.where(np.isfinite(gap), gap, UNBOUNDED)))


def replay_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """Every replica's measures at every checkpoint, the final iterates and the ball maxima against the replay: the
    worst relative deviation, for every replica (deterministic given the draws: one replica off is a FAIL)."""
    run = Replay(config, np.asarray(trace.checkpoints)).run()
    worst = float(np.max(deviation(run.out, trace, 1e-12)))
    for name, final in run.finals().items():
        worst = max(worst, _relative(trace.final[name], final))
    for name, value in run.diagnostics().items():
        worst = max(worst, _relative(trace.info[name], value))
    return np.full(trace.replicas, worst)


def _configure(name: str) -> Any:
    case = CASES[name]

    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(case.get("algorithm", name), dict(case["steps"]), FAMILY,
                         {**BASE, "test": case["test"], "clients": case.get("clients", BASE["clients"])}, int(value),
                         replicas=REPLAY_REPLICAS, checkpoints=int(value), mode="monte_carlo")
    return configure


SOURCES = {"fedbio": "Algorithm 1, lines 4-15", "fedbioacc": "Algorithm 2, lines 2-14",
           "fedbio_local": "Algorithm 3, eq. (6)", "fedbioacc_local": "Algorithm 4, eq. (6)",
           "fedbio_local_per_factor": "Algorithm 3, eq. (6)",
           "stocbio": "Ji, Yang, Liang 2021 (StocBiO) Algorithms 1-2; eq. (6)"}

CLAIMS: tuple[Claim, ...] = tuple(
    dataclasses.replace(trajectory_oracle(
        id=f"fedbio.oracle.{name}_noisy_replay", paper=KEY,
        title=f"{name} with Hessian and Jacobian noise: a Monte-Carlo run equals its box replayed with the run's draws",
        statement=f"{case['what']}, on Test {case['test']} (M = {case.get('clients', BASE['clients'])}, p = 3, d = 2"
                  f"{', heterogeneous A_m, B_m: s_H = 0.4, s_B = 0.5' if case.get('clients', 3) > 1 else ''}) with N1 noise "
                  "sigma_f = 0.8, sigma_g = 1.3, sigma_J = 0.3, sigma_H = 0.35, run by the algorithm in Monte Carlo: "
                  "every replica's measures at every iteration, its final iterates and the run's ball maxima equal the "
                  "box replayed with the same standard normals drawn from the run's 'noise' Generators (Q independent "
                  "Hessian draws per Neumann chain, one sample at both STORM points; proofs/fedbio/oracles_replay.py).",
        source=src(SOURCES[name], "spec §2, §2.6, §6.0 N1"), configure=_configure(name), oracle=replay,
        measures=("grad_norm_sq", "dist_sq", "y_err") + (("u_err",) if case["test"] == "B" else ()), rtol=REPLAY_RTOL,
        tolerance_reason="deterministic given the draws: float64 round-off over 24 iterations (measured below "
                         "2e-14); one Hessian draw read by every Neumann factor, a Jacobian draw shared by the copies, a "
                         "STORM old point on the previous batch, or a minibatch's Hessian noise not averaged moves some "
                         "replica by >= 0.1 (tests/test_oracles_fedbio_replay.py).",
        grid={"quick": (REPLAY_T,), "full": (REPLAY_T,)}), summary=replay_deviation)
    for name, case in CASES.items())
