"""FESS-GDA's linear rate across step sizes (issue #21): the exact rate as a function of eta against
Theorem 3.5's guaranteed rate, inside the theorem's admissible region and beyond it.

Theorem 3.5 (Appendix I) guarantees W_t <= (1 - a)^t W_0 with a = eta_x K mu1/16 for every step size
its conditions admit; on the SC-SC quadratic (a1) with K = 1, s = 0, sigma = sigma_G = 0 the round is
linear, s_{t+1} = F s_t, so the exact asymptotic log-contraction of W is 2 log rho(F) at every step
size. The claim scales the theorem's step sizes (eta_x, eta_y and the local eta_xl together) by c in
(0, 1] (the conditions of Theorem 3.5 are upper bounds, all at most tight at c = 1) and checks, at
each c: the simulated W's fitted rate against the recursion F^t w0 (1%), the exact rate as an
eigenvalue of the simulator's own probed moment map against the paper's 2 log rho(F) (1e-8), and
that the theorem's log(1 - a) is no faster than it. Beyond c = 1 (conditions violated, the theorem
silent) only the recursion's 2 log rho(F) is reported, for the plot (rate against c, the admissible
region shaded).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ratecheck.claims import Profile, RateClaim, Verdict
from ratecheck.exact.rates import config_log_rate
from ratecheck.inspection import constants_of
from ratecheck.trace import RunConfig

from .claims import (
    A1_CHECKPOINTS,
    DET_REPLICAS,
    EXACT,
    QUAD_DET,
    _run,
    bindings,
    exact_log_rate,
    spectral_log_rate,
    steps,
    theorem_log_rate,
)
from .theorems import KEY, THEOREM_3_5, src

RATE_ROUNDS = 4000  # as fessgda.A1.linear_rate: W stays far above round-off over [T/2, T] at every c <= 1
BEYOND = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 9.0)  # past the admissible region, the recursion only (plot): rho > 1 near 8.5


def scaled_config(scale: float, profile: Profile | None = None) -> RunConfig:
    """fessgda.A1.linear_rate's run (Theorem 3.5's step sizes, K = 1, full participation, s = 0) with
    eta_x, eta_y and eta_xl multiplied by ``scale`` (eta_yl stays at its cap; the global steps carry
    the rest)."""
    draft = _run("fsgda", {}, QUAD_DET, 1, 1)
    c = constants_of(draft)
    sched = THEOREM_3_5.schedule_values({**c, "K": 1})
    cap_y = 0.9 / math.sqrt(1536) / c["l"]  # eta_yl <= 1/sqrt(1536 l^2 K^2), with margin
    ex, ey = scale * sched["eta_x"] * (1 - 2e-9), scale * sched["eta_y"] * (1 - 1e-9)
    params = {**steps(ex, ey, 1, ex, cap_y), "participation": "full"}
    return _run("fsgda", params, QUAD_DET, RATE_ROUNDS, DET_REPLICAS, A1_CHECKPOINTS, mode=EXACT)


def beyond_grid(claim: Any, points: Any, verdict: Verdict, reason: str, evidence: dict[str, Any]
                ) -> tuple[Verdict, str, dict[str, Any]]:
    """A gate (ratecheck.claims.with_gates) adding, with no verdict, the recursion's asymptotic rate at the
    scales ``BEYOND`` the admissible grid (the plot draws it past the grid)."""
    beyond = [{"value": c, "asymptotic": float(spectral_log_rate(scaled_config(c)))} for c in BEYOND]
    return verdict, reason, {**evidence, "beyond": beyond}


class StepSizeRateClaim(RateClaim):
    """A RateClaim over step-size scales that draws the rate against the scale: the measured and the
    exact (eigenvalue) log-contraction, the theorem's guaranteed log(1 - a), the admissible grid shaded
    and the recursion's rate beyond it (``beyond``, added by the gate ``beyond_grid``, no verdict)."""

    plot_label: ClassVar[str] = "log-contraction of W per round"
    plot_log_x: ClassVar[bool] = True

    def draw_plot(self, ax: Any, o: Any, log_y: bool) -> None:
        rows = sorted(o.evidence.get("rows", []), key=lambda r: r["value"])
        if not rows:
            return
        x = np.array([r["value"] for r in rows])
        ax.axvspan(x.min(), x.max(), color="C2", alpha=0.12, label="Theorem 3.5's conditions hold (the grid, c <= 1)")
        ax.plot(x, [r["rate"] for r in rows], "o", color="C0", label="fitted over [T/2, T] (exact run)")
        if all("spectral" in r for r in rows):
            ax.plot(x, [r["spectral"] for r in rows], "-", color="C1", lw=1.6,
                    label="exact asymptotic: log rho of the moment map")
        beyond = o.evidence.get("beyond", [])
        if beyond:
            xb = [x.max()] + [b["value"] for b in beyond]
            yb = [rows[-1].get("asymptotic", rows[-1]["exact"])] + [b["asymptotic"] for b in beyond]
            ax.plot(xb, yb, ":", color="C1", lw=1.4, label="2 log rho(F) beyond the admissible region")
        if all("guaranteed" in r for r in rows):
            ax.plot(x, [r["guaranteed"] for r in rows], "--", color="C3", lw=1.4, label="Theorem 3.5: log(1 - a)")
        ax.axhline(0.0, color="0.6", lw=0.8)

    def plot_x_values(self, o: Any) -> list[float]:
        """The scales drawn past the grid (the report's x range includes them)."""
        return [b["value"] for b in o.evidence.get("beyond", [])]


A1_RATE_VS_STEP = StepSizeRateClaim(
    id="fessgda.A1.rate_vs_step_size",
    paper=KEY,
    title="PL-PL across step sizes: the exact linear rate as a function of eta, against Theorem 3.5's log(1 - a)",
    statement="With Theorem 3.5's step sizes scaled by c in (0, 1] (K = 1, s = 0, sigma = sigma_G = 0, the SC-SC "
              "quadratic), at every c: the simulated W contracts at the log-slope of the exact recursion F^t w0 "
              "(within 1%), the spectral radius of the simulator's probed moment map equals the paper's 2 log rho(F) "
              "(1e-8), and Theorem 3.5's log(1 - eta_x K mu1/16) is no faster than it (the bound holds; how much "
              "slower is reported).",
    source=src("Theorem 3.5, Appendix I", "spec §6.1 test 1, across step sizes (issue #21)"),
    vary="eta_scale", grid={"quick": (0.125, 0.25, 0.5, 1.0), "full": (0.0625, 0.125, 0.25, 0.5, 0.75, 1.0)},
    configure=scaled_config, measure="W", theorem=THEOREM_3_5, bindings=bindings,
    exact=exact_log_rate("W"), exact_name="the exact recursion F^t w0 over the window",
    asymptotic=spectral_log_rate, guaranteed=theorem_log_rate(), guaranteed_name="Theorem 3.5's log(1-a)",
    spectral=config_log_rate, min_replicas=DET_REPLICAS, rel_tolerance=0.01, gates=(beyond_grid,),
)

STEP_SIZE_CLAIMS = (A1_RATE_VS_STEP,)
