"""The fedbio_bilevel family (FedBiO's test problems; its description is the comment at the head of this module's
definitions): per-client quadratic bilevel problems with one-sample oracles, closed forms and certified constants."""

from __future__ import annotations

import numpy as np

from ratecheck.params import Param, ParamError, declare

from .fedbio_problem import FedBilevel
from .fedbio_sample import (
    FEDBIO_TESTS,
    SETTINGS,
    OracleSample,  # noqa: F401  (re-exported)
    _matvec,
    _pseudo_huber_prime,  # noqa: F401  (re-exported)
    _pseudo_huber_second,  # noqa: F401  (re-exported)
    joint_hessian_norm,  # noqa: F401  (re-exported)
)

# =============================================================================================
# FedBiO families (issue #10): per-client lower AND upper levels, global or local lower problems.
#
# Source: ../shared/seeds/002_25acef2c58d2293a.txt (FedBiO / FedBiOAcc), eqs. (1)-(6); test problems
# of ../shared/spec/fedbio.md §6.1-6.4. Client m holds
#
#     g_m(x, y) = 1/2 y^T A_m y - y^T B_m x - c_m^T y                 (mu-strongly convex in y)
#     f_m(x, y) = sum_i psi(y_i - d_mi) + rho sum_j psi(x_j - e_mj)
#
# with psi(r) = r^2/2 (quadratic, Tests A, B, C) or the pseudo-Huber psi_delta (Tests D, D'). In the
# 'global' setting (eq. (1)) the lower problem is min_y (1/M) sum_m g_m; in the 'local' one (eq. (5))
# each client has its own y_m*(x). The SimFBO family above is the special case A_m = A, B_m = B of the
# global setting; this class adds per-client B_m, both settings, the paper's four stochastic oracles
# (grad f, grad_y g, Jacobian grad_xy g, Hessian grad_yy g) drawn as one minibatch sample that can be
# evaluated at two points (STORM), and the closed forms the FedBiO claims need.


def _zero_sum(rng: np.random.Generator, M: int, shape: tuple[int, ...]) -> np.ndarray:
    z = rng.standard_normal((M, *shape))
    return z - z.mean(0)


@declare(
    test=Param.choice("spec §6 test: A (drift-free), B (heterogeneous A_m, B_m), C1/C2 (local lower level, "
                      "shared/heterogeneous A_m, B_m), D (pseudo-Huber, antisymmetric pairs), Dp (D', asymmetric)",
                      FEDBIO_TESTS),
    setting=Param.choice("lower level: 'global' (eq. (1)) or 'local' (eq. (5)); null: the test's own",
                         SETTINGS, nullable=True),
    dim_x=Param.int("p, dimension of x", low=1, high=1000),
    dim_y=Param.int("d, dimension of y", low=1, high=1000),
    clients=Param.int("M, number of clients (all participate)", low=1, high=4096),
    a_min=Param.real("smallest eigenvalue of A_bar", positive=True),
    a_max=Param.real("largest eigenvalue of A_bar", positive=True),
    b=Param.real("B_bar = b I (needs p == d); null: Gaussian B_bar", nullable=True),
    rho=Param.real("weight rho of the x-part of f_m", positive=True),
    delta=Param.real("pseudo-Huber scale delta (Tests D, Dp)", positive=True),
    s=Param.real("scale of the zero-sum offsets of c_m, d_m, e_m", low=0.0),
    s_H=Param.real("Hessian heterogeneity: A_m = A_bar + s_H Delta_m, ||Delta_m|| <= 1", low=0.0),
    s_B=Param.real("Jacobian heterogeneity: B_m = B_bar + s_B Gamma_m", low=0.0),
    sigma_f=Param.real("N1 noise on grad f (E||.||^2 over (x, y))", low=0.0),
    sigma_g=Param.real("N1 noise on grad_y g", low=0.0),
    sigma_J=Param.real("N1 noise on grad_xy g (Frobenius)", low=0.0),
    sigma_H=Param.real("N1 noise on grad_yy g (symmetric, Frobenius), < mu", low=0.0),
    start=Param.choice("x1 = y1 = u1 = 0 ('zero') or the solution ('solution', for floors)", ("zero", "solution")),
    seed=Param.int("seed of the instance construction", low=0),
    finite_sum=Param.int("N2: K samples per client replacing N1 (each oracle's rows have mean square sigma^2 "
                         "exactly); 0: N1", low=0, high=10**6),
    replacement=Param.bool("N2 minibatches drawn with replacement (default: without, spec §6)"),
    finite_sum_matrices=Param.bool("N2 samples carry their own A_m,i (spread sigma_H) and B_m,i (spread sigma_J), "
                                   "means exactly A_m, B_m: the Jacobian, Hessian and grad_y g oracles are row draws "
                                   "and grad_y g's noise depends on (x, y) (spec §6.0 N2, the default); false: rows "
                                   "of c_m, d_m, e_m only, the Jacobian and Hessian keep N1"),
)
def make_fedbio(test: str = "A", setting: str | None = None, dim_x: int = 2, dim_y: int = 2, clients: int = 4,
                a_min: float = 1.0, a_max: float = 4.0, b: float | None = 1.0, rho: float = 1.0, delta: float = 1.0,
                s: float = 1.0, s_H: float = 0.0, s_B: float = 0.0, sigma_f: float = 0.0, sigma_g: float = 0.0,
                sigma_J: float = 0.0, sigma_H: float = 0.0, start: str = "zero", seed: int = 0, finite_sum: int = 0,
                replacement: bool = False, finite_sum_matrices: bool = True) -> FedBilevel:
    """Build a spec §6 test problem. A_bar = diag(linspace(a_min, a_max, d)), B_bar = b I; with p = d = 2
    and the defaults the base vectors are the spec's worked instance (c_bar = (1, 0), d_bar = (0, 1),
    e_bar = 0; x* = (-1/2, 4/17)). Client offsets are zero-sum (so x* does not move with s, M), drawn
    from a generator keyed by (seed, M); Tests A, C1, D, Dp keep A_m = A_bar, B_m = B_bar.
    finite_sum = K gives N2 (spec §6.0): K samples per client, centred on the client's data, each oracle's
    rows scaled to mean square sigma^2 exactly (sigma_f, sigma_g; with finite_sum_matrices also sigma_J for
    B_m,i - B_m and sigma_H for the symmetric A_m,i - A_m)."""
    params = dict(locals())
    if a_max < a_min:
        raise ParamError("fedbio_bilevel", "a_max", a_max, f"must be >= a_min = {a_min}")
    if b is not None and dim_x != dim_y:
        raise ParamError("fedbio_bilevel", "b", b, f"B_bar = b I needs dim_x == dim_y, got {dim_x}, {dim_y}")
    hetero = test in ("B", "C2")
    if not hetero and (s_H or s_B):
        raise ParamError("fedbio_bilevel", "s_H" if s_H else "s_B", s_H or s_B,
                         f"test {test} has shared A_m, B_m; use test B or C2 for Hessian/Jacobian heterogeneity")
    if s_H >= a_min:
        raise ParamError("fedbio_bilevel", "s_H", s_H, f"must be < a_min = {a_min} so every A_m stays positive definite")
    setting = setting or ("local" if test in ("C1", "C2") else "global")
    upper = "pseudo_huber" if test in ("D", "Dp") else "quadratic"
    rng = np.random.default_rng(seed)
    A_bar = np.diag(np.linspace(a_min, a_max, dim_y))
    B_bar = b * np.eye(dim_y) if b is not None else rng.standard_normal((dim_y, dim_x)) / np.sqrt(dim_x)
    if dim_x == dim_y == 2 and b == 1.0 and (a_min, a_max) == (1.0, 4.0):
        c_bar, d_bar, e_bar = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.zeros(2)  # spec §6.1 worked
    else:
        c_bar, d_bar, e_bar = rng.standard_normal(dim_y), rng.standard_normal(dim_y), rng.standard_normal(dim_x)
    dev = np.random.default_rng([seed, clients])
    M = clients
    if test == "D":  # antisymmetric pairs around (x*, d*): c_bar = A d* - B x* (spec §6.4)
        x_s, d_s = rng.standard_normal(dim_x), rng.standard_normal(dim_y)
        c_bar = A_bar @ d_s - B_bar @ x_s
        sign = np.where(np.arange(M) % 2 == 0, 1.0, -1.0)[:, None]
        if M % 2:
            sign[-1] = 0.0
        def pairs(k):
            return np.repeat(dev.standard_normal((M // 2 + 1, k)), 2, axis=0)[:M] * sign
        d_m, e_m = d_s + s * pairs(dim_y), x_s + s * pairs(dim_x)
        c = c_bar + s * _matvec(A_bar, pairs(dim_y))
    else:
        c = c_bar + s * _zero_sum(dev, M, (dim_y,))
        d_m = d_bar + s * _zero_sum(dev, M, (dim_y,))
        e_m = e_bar + s * _zero_sum(dev, M, (dim_x,))
    A = np.repeat(A_bar[None], M, axis=0)
    B = np.repeat(B_bar[None], M, axis=0)
    if hetero:  # zero-sum symmetric Delta_m with ||Delta_m|| <= 1, zero-sum Gamma_m (spec §6.2)
        Dm = dev.standard_normal((M, dim_y, dim_y))
        Dm = Dm + np.swapaxes(Dm, 1, 2)
        Dm -= Dm.mean(0)
        Dm /= max(1.0, float(np.linalg.norm(Dm, 2, axis=(1, 2)).max()))
        A = A + s_H * Dm
        Gm = _zero_sum(dev, M, (dim_y, dim_x))
        B = B + s_B * Gm / max(1.0, float(np.linalg.norm(Gm, 2, axis=(1, 2)).max()))
    rows_f = rows_g = rows_A = rows_B = None
    if finite_sum:
        if finite_sum < 2:
            raise ParamError("fedbio_bilevel", "finite_sum", finite_sum, "needs K >= 2 rows per client (0: N1)")
        gen = np.random.default_rng([seed, clients, finite_sum])
        rows_f = np.concatenate([_rows(gen, M, finite_sum, dim_x, sigma_f * np.sqrt(dim_x / (dim_x + dim_y))),
                                 _rows(gen, M, finite_sum, dim_y, sigma_f * np.sqrt(dim_y / (dim_x + dim_y)))], axis=-1)
        rows_g = _rows(gen, M, finite_sum, dim_y, sigma_g)
        if finite_sum_matrices:  # drawn after the offsets' rows: those do not change with this flag
            if sigma_H > 0:
                N = gen.standard_normal((M, finite_sum, dim_y, dim_y))
                rows_A = _rows(gen, M, finite_sum, dim_y * dim_y, sigma_H,
                               0.5 * (N + np.swapaxes(N, -1, -2)).reshape(M, finite_sum, -1)).reshape(N.shape)
            if sigma_J > 0:
                rows_B = _rows(gen, M, finite_sum, dim_y * dim_x, sigma_J).reshape(M, finite_sum, dim_y, dim_x)
    return FedBilevel(test=test, setting=setting, upper=upper, A=A, B=B, c=c, d_m=d_m, e_m=e_m, rho=float(rho),
                      delta=float(delta), sigma_f=float(sigma_f), sigma_g=float(sigma_g), sigma_J=float(sigma_J),
                      sigma_H=float(sigma_H), start=start, spec_params=params, rows_f=rows_f, rows_g=rows_g,
                      replacement=bool(replacement), rows_A=rows_A, rows_B=rows_B)


def _rows(gen: np.random.Generator, M: int, K: int, k: int, scale: float, z: np.ndarray | None = None) -> np.ndarray:
    """K zero-mean rows per client (M, K, k) with (1/K) sum_i ||row_i||^2 = scale^2 exactly: a finite sum whose
    single-sample variance equals N1's for the same sigma. ``z``: the raw rows (default: i.i.d. normal)."""
    z = gen.standard_normal((M, K, k)) if z is None else z
    z -= z.mean(1, keepdims=True)  # each client's rows average to its own data
    return z * scale / np.sqrt((z**2).sum(-1).mean(1, keepdims=True))[..., None]

