"""The noise floor of FedAvgM on an isotropic quadratic, and two claims that check it.

With one local step (K = 1), FedAvgM is the heavy-ball method on F with step alpha = eta * etabar
and gradient noise of variance sigma^2 / n (n clients averaged). On F = (L/2)||w - w*||^2 each
coordinate is an AR(2) recursion whose stationary variance gives, when alpha L < 2 (1 + beta):

    lim E||w^t - w*||^2 = (1 + beta) alpha sigma^2 / (n L (1 - beta) (2 (1 + beta) - alpha L))
"""

import sympy as sp

from ratecheck.assumptions import FEDERATED, bounded_variance, smooth
from ratecheck.binding import Binder, param, participating
from ratecheck.claims import ExpectedOrder, SlopeClaim, ValueClaim, tail_average
from ratecheck.paper import Paper
from ratecheck.theory import Bound, Condition, Source, Theorem
from ratecheck.trace import RunConfig

from .algorithm import FedAvgM

SEED = "Hsu, Qi, Brown 2019 (arXiv:1909.06335); Polyak 1964 (heavy ball)"
src = Source.of(SEED)
L, sigma, n, eta, etabar, beta = sp.symbols("L sigma n eta etabar beta", positive=True)
SYMBOLS = (L, sigma, n, eta, etabar, beta)

FLOOR = Theorem(
    id="fedavgm.floor", title="Stationary distance to w* of FedAvgM (K = 1, isotropic quadratic)",
    source=src("heavy-ball AR(2) stationary variance, derived in this module's docstring"),
    measure="dist_sq", constants=(L, sigma), parameters=(n, eta, etabar, beta),
    requires=FEDERATED.assume(smooth("L"), bounded_variance("sigma")),  # what a federated family must certify
    conditions=(
        Condition.from_latex("stability", r"\eta \bar{\eta} L < 2 (1 + \beta)", src("Polyak 1964, heavy ball"), SYMBOLS),
        Condition.from_latex("momentum < 1", r"\beta < 1", src("Polyak 1964, heavy ball"), SYMBOLS),
    ),
    bounds=(Bound.from_latex(
        "floor", r"\frac{(1 + \beta) \eta \bar{\eta} \sigma^2}{n L (1 - \beta) (2 (1 + \beta) - \eta \bar{\eta} L)}",
        src("AR(2) stationary variance, summed over coordinates"), SYMBOLS),),
)

PROBLEM = {"dim": 10, "mu": 1.0, "L": 1.0, "sigma": 1.0, "heterogeneity": "none"}  # isotropic, IID clients
STEPS = {"eta_global": 1.0, "eta_local": 0.1, "local_steps": 1}
ROUNDS = {"quick": 2000, "full": 8000}


def config_for(beta: float, clients: int, profile) -> RunConfig:
    return RunConfig("fedavgm", {**STEPS, "beta": beta, "participation": "full"}, "quadratic",
                     {**PROBLEM, "clients": clients}, rounds=ROUNDS[profile.name], replicas=profile.replicas)


# the theorem's symbols at a run: the constants the family certifies, and the run's parameters
bindings = Binder(FLOOR, reads={"n": participating, "eta": param("eta_global"), "etabar": param("eta_local"),
                                "beta": param("beta")})


def predicted_floor(config: RunConfig) -> float:
    return FLOOR.evaluate(bindings(config), use_schedule=False).bounds["floor"]


# Tolerances: the tail average's 95% CI over 16 replicas is about +-2.5% of the floor (measured),
# the slope's about +-0.004, while the plausible bugs move the floor 5-10x (EMA momentum,
# momentum dropped) or the slope to about 0 (updates summed, not averaged).
FLOOR_IN_BETA = ValueClaim(
    id="fedavgm.floor_in_beta", paper="fedavgm", title="The noise floor grows as the theorem says with beta",
    statement="lim E||w - w*||^2 = (1+beta) alpha sigma^2 / (n L (1-beta)(2(1+beta) - alpha L))",
    source=src("stationary variance"), vary="beta", grid={"quick": (0.0, 0.5, 0.8, 0.9), "full": (0.0, 0.5, 0.8, 0.9, 0.95)},
    configure=lambda beta, profile: config_for(beta, 4, profile), measure="dist_sq", summary=tail_average("dist_sq", 0.25),
    theorem=FLOOR, bindings=bindings, predict=predicted_floor, prediction="the theorem's floor", rel_tolerance=0.1,
)

SPEEDUP_IN_N = SlopeClaim(
    id="fedavgm.speedup_n", paper="fedavgm", title="Linear speedup: the floor falls like 1/n",
    statement="the floor is proportional to 1/n (n clients averaged)", source=src("stationary variance"),
    vary="n", grid={"quick": (1, 2, 4, 8, 16, 32), "full": (1, 2, 4, 8, 16, 32, 64)},
    configure=lambda clients, profile: config_for(0.8, int(clients), profile), measure="dist_sq",
    summary=tail_average("dist_sq", 0.25), theorem=FLOOR, bindings=bindings,
    expected=ExpectedOrder(FLOOR, "n", "floor"), tolerance=0.05,
)

ALGORITHMS = (FedAvgM,)  # for `--paper fedavg_momentum.paper` without installing (the entry point does it otherwise)
PAPER = Paper(key="fedavgm", title="FedAvgM (worked example): server momentum's noise floor", seed=SEED,
              theorems=(FLOOR,), claims=(FLOOR_IN_BETA, SPEEDUP_IN_N))
