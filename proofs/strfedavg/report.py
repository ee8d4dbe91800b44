"""Report page of the StR-FedAvg paper: bound tightness, Table 1 (printed, derived, measured), errata.

Every number comes from the outcomes' runs or from a sympy evaluation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import sympy as sp

from ratecheck.inspection import view
from ratecheck.model.fit import fit_slope

from . import claims as C
from . import hunts as H
from . import theorems as th


@functools.lru_cache(maxsize=1)
def _table1() -> list[dict]:
    return th.table1()


def _by_id(outcomes: Sequence[Any]) -> dict[str, Any]:
    return {o.claim.id: o for o in outcomes}


def _points(outcome: Any) -> list[Any]:
    return [p for p in (outcome.points if outcome is not None else []) if p.samples.size]


def _observed_fit(points, x_of, measure: str) -> str:
    """An observation (no verdict): slope of the replica mean of `measure` at the end of each run."""
    if len(points) < 2:
        return "not run"
    xs = [x_of(p) for p in points]
    samples = [np.abs(p.trace.at_end(measure)) for p in points]
    fit = fit_slope(xs, samples)
    return f"{fit.slope:+.3f} [{fit.ci_low:+.3f}, {fit.ci_high:+.3f}] over x in [{min(xs):.3g}, {max(xs):.3g}]"


def _tightness(outcomes: Sequence[Any]) -> str:
    by_id = _by_id(outcomes)
    out = by_id.get(C.T1_INTERVAL.id)
    if out is None or not out.evidence or not out.evidence.get("rows"):
        return "TP1 interval observation not run."
    lines = ["| R | E f(x^) - f* | f_lo stated | f_lo corrected | f_up corrected | E h - h* | h_up stated | "
             "Theorem 1 conditions hold | largest condition margin |", "|---|---|---|---|---|---|---|---|---|"]
    hr = []
    for r, p in zip(out.evidence["rows"], out.points):
        h_mean = float(np.mean(p.trace.at_end("h_gap")))
        h_up = float(p.evaluation.bounds["h_up_stated"])
        hr.append(h_up / h_mean)
        margin = max(c.margin for c in p.evaluation.conditions)
        lines.append(f"| {r['value']:g} | {r['mean']:.3g} | {float(p.evaluation.bounds['f_lo_stated']):.3g} | "
                     f"{r['lower']:.3g} | {r['upper']:.3g} | {h_mean:.3g} | {h_up:.3g} | "
                     f"{'yes' if r['conditions_hold'] else 'no'} | {margin:.3g} |")
    o = out.evidence["observed"]
    text = "\n".join(lines)
    text += (f"\n\nThe signed f - f* is negative at every horizon (the output is infeasible, spec pitfall 8). The "
             f"stated lower side is {o['f_lo_stated/(f - f*) min']:.3g}x to {o['f_lo_stated/(f - f*) max']:.3g}x the "
             f"measured value, the corrected one {o['f_lo_corrected/(f - f*) min']:.3g}x to "
             f"{o['f_lo_corrected/(f - f*) max']:.3g}x, f_up stated {o['f_up_stated/|f - f*| min']:.3g}x or more above "
             "it; the h bound is "
             + f"{min(hr):.3g}x to {max(hr):.3g}x the measured h - h*. Theorem 1's conditions (Lemma 6 and Prop. 3 "
               f"included) hold at {o['horizons where every condition holds']:.0f} of {len(out.points)} horizons (largest "
               f"margin lhs/rhs {o['largest condition margin at the smallest R']:.3g} at the smallest R, "
               f"{o['largest condition margin at the largest R']:.3g} at the largest; every condition holds from "
               f"R = {o['R at which every condition holds (constants of the largest-R run)']:.3g} with the largest run's "
               "constants). Outside its conditions and that far inside its sides, the interval certifies nothing "
               f"about Theorem 1: {C.T1_INTERVAL.id} is an observation, with no verdict.")
    # the sharper empirical rates of spec §6 TP1 (observations: eta(R) spans only a factor ~2 over the grid,
    # less than the decade a slope claim needs)
    pts = _points(out)
    eta_of = lambda p: C.schedule_of(p.config)["eta"]  # noqa: E731
    text += ("\n\nObservations (no verdict; eta(R) = p ln R/(mu_f R)^b spans less than a decade here):\n"
             f"- slope of |f - f*| against eta: {_observed_fit(pts, eta_of, 'f_gap')} (prediction 1)\n"
             f"- slope of h - h* against eta: {_observed_fit(pts, eta_of, 'h_gap')} (prediction 2)\n"
             f"- slope of |f - f*| against R: {_observed_fit(pts, lambda p: p.value, 'f_gap')} "
             "(bound: R^(-1/3)/ln R; the ln R in eta flattens it)")
    return text


def _table(outcomes: Sequence[Any]) -> str:
    by_id = _by_id(outcomes)
    measured = {
        ("StR-FedAvg, cvx f", "E f - f* (U.B.)"): by_id.get(C.T2_F_SLOPE.id),
        ("StR-FedAvg, cvx f", "E h - h* (U.B.)"): by_id.get(C.T2_H_SLOPE.id),
    }
    lines = ["| method | quantity | printed eps exponent | derived from the bound (sympy) | measured | note |",
             "|---|---|---|---|---|---|"]
    for row in _table1():
        outcome: Any = measured.get((row["method"], row["quantity"]))
        fit = outcome.evidence.get("fit") if outcome is not None and outcome.evidence else None
        meas = (f"R-slope {fit['slope']:+.3f} -> eps^-{-1 / fit['slope']:.2f} ({outcome.verdict})" if fit else "-")
        agree = "" if row["agrees"] else " **differs**"
        lines.append(f"| {row['method']} | {row['quantity']} | eps^-{row['printed']} | eps^-{row['derived']}{agree} | "
                     f"{meas} | {row['note']} |")
    lines.append("")
    lines.append(f"- {th.KAPPA1_NOTE}")
    lines.append("- The measured h - h* decays like R^(-1/2) (eps^-2), twice the rate of the bound's 2 M R^(-b) term: "
                 "Table 1's h column is a bound, not the behaviour.")
    return "\n".join(lines)


def _errata(outcomes: Sequence[Any]) -> str:
    by_id = _by_id(outcomes)

    def verdict(claim) -> str:
        o = by_id.get(claim.id)
        return f"{claim.id}: {o.verdict}" if o is not None else f"{claim.id}: not run"

    t = sp.Symbol("t", positive=True)
    eta_t = 2 * sp.log(t) / t ** sp.Rational(5, 12)
    argmax = sp.nsolve(sp.diff(eta_t, t), t, 10)
    rows = [
        f"I18 (F_lambda's factor 2): confirmed by the runs, {verdict(C.T3_STATIONARY_PAPER)} (expected FAIL) while "
        f"{verdict(C.T3_STATIONARY_HALF)}: Algorithm 2 finds the stationary point of f + dist^2/(2 lam), not of the "
        "paper's f + dist^2/lam.",
        f"I3 (output normalization): the average must be divided by sum_(r<=R) theta^r; {verdict(C.T4_AVERAGE_AT_FIXED_POINT)} "
        "and the sensitivity suite shows the printed denominator fails it.",
        f"I14 (eta_hat = 11): max_t 2 ln t/t^(5/12) = {float(th.ETA_HAT_NCVX):.5f} (= 24/(5e)) attained at "
        f"t = {float(argmax):.3f}: the printed 11 is the argmax, not the maximum.",
        "I19 (outer step): the proof needs gamma <= lam/(4(L_f lam + 2)); the paper states 3 lam/(4(L_f lam + 2)). "
        "The runs use the corrected value.",
        "I21 (Table 1, IPIR): derived eps^-12 at kappa = 2 (the T^(-1/6)/ln T term dominates) against the printed "
        "eps^-(24 kappa/5) = eps^-9.6; see the Table 1 section.",
        f"I7 (Prop. 1 factor 3): not visible in the runs ({C.T1_INTERVAL.id}, an observation: the TP1 runs lie "
        "inside the stated interval too, but outside Theorem 1's conditions), so I7 is a gap in the proof, "
        "not a confirmed erratum.",
        f"I10 (Theorem 1 needs a + b <= 1, and mu_f R >= 1 if a + b < 1): confirmed by a search, "
        f"{verdict(H.HUNT_PRINTED_RANGE)} (expected FAIL: a counterexample with a + b > 1 where every stated condition "
        f"holds) while {verdict(H.HUNT_CORRECTED_RANGE)} over the range the proof needs.",
        "I1, I2 (indices in Algorithm 1), I20 (R_t = t + R0) and I28 (the experiments' step lacks "
        "1/(gamma_g K)) are encoded as the package's defaults and named options (ratecheck/algorithms/strfedavg.py).",
    ]
    return "\n".join(f"- {r}" for r in rows)


def _theorem3_values(point: Any, T: float) -> tuple[dict, Any, Any]:
    """Theorem 3's symbols at an IPIR run (sup_t dist(y^t, X*_h) of the run in the t-uniform constants)."""
    trace = point.trace
    run = view(point.config)
    problem, c, alg = run.problem, run.constants, run.algorithm
    sup = float(trace.info.get("max_dist", math.nan))
    if not math.isfinite(sup):  # exact runs do not track the running sup (a monitor): read the checkpoints
        sup = float(np.sqrt(np.nanmax(trace.measures["y_feas_sq"])))
    values = dict(L_f=c["L_f"], L_h=c["L_h"], sigma_h=c["sigma_h"], Gncvx2=2 * sup**2 + 2 * c["G_h2"],
                  M=0.5 * sup**2, alpha=c["alpha"], kappa=2.0, gradg_star=sup,
                  F0_minus_Fstar=float(problem.smoothed_value(problem.x0) - problem.smoothed_value(problem.y_stat)),
                  D0=sup**2, eta_hat=float(th.ETA_HAT_NCVX), N=c["N"], T=T, K=float(alg.local_steps),
                  S=float(problem.num_clients), gamma_g=alg.gamma_g, gamma=alg.resolved_gamma(problem),
                  **{"lambda": alg.resolved_lam(problem)})
    return values, alg, sup


def _theorem3(outcomes: Sequence[Any]) -> str:
    outcome = _by_id(outcomes).get(C.T3_INNER_BIAS.id)
    pts = _points(outcome)
    if not pts:
        return "IPIR-FedAvg runs not available."
    p = pts[-1]
    trace = p.trace
    T = float(p.config.rounds)
    values, alg, sup = _theorem3_values(p, T)
    ev = th.THEOREM_3.evaluate(values, use_schedule=False)
    measured = float(np.nanmean(trace.measures["avg:stat_sq"][-1]))
    cps = trace.checkpoints[1:]
    avg = np.nanmean(trace.measures["avg:stat_sq"][1:], axis=1)
    keep = cps >= 5
    slope = np.polyfit(np.log(cps[keep]), np.log(avg[keep]), 1)[0] if keep.sum() >= 3 else math.nan
    return (f"IPIR-FedAvg on TP3b (T = {T:g} outer steps, R_t = t + {alg.R0}, {int(trace.counters['vectors_up'][-1])} "
            f"client uploads): (1/T) sum ||grad F_lambda(y^t)||^2 = {measured:.3g}; Theorem 3 (i-1) as stated "
            f"{ev.bounds['stated']:.3g}, corrected {ev.bounds['corrected']:.3g} (sup_t dist(y^t, X*_h) = {sup:.3g} "
            f"plugged into G^2_ncvx, M_t, g*, D0). The bound is {ev.bounds['corrected'] / measured:.3g}x the measurement, "
            "so it is reported here and not claimed. Observed decay of the running average: slope "
            f"{slope:+.2f} in T over this run (the bound's leading term is T^(-1/6)/ln T).")


def _row(outcome: Any, key: str) -> str:
    rows = (outcome.evidence or {}).get("rows", []) if outcome is not None else []
    return ", ".join(f"T = {r['value']:g}: {r[key]:.3g}" for r in rows) or "not run"


def _ipir(outcomes: Sequence[Any]) -> str:
    """Theorem 3 on IPIR-FedAvg itself: the descent step with measured inner errors, where y goes."""
    by_id = _by_id(outcomes)
    lines = ["| instance | claim | verdict | measured / predicted or bound |", "|---|---|---|---|"]
    for claim, key in ((C.T3_IPIR_DESCENT, "ratio"), (C.T3_IPIR_STATIONARY, "ratio"),
                       (C.T3A_IPIR_DESCENT, "ratio"), (C.T3A_IPIR_STATIONARY, "ratio"),
                       (C.T3_INNER_BIAS, "ratio")):
        o = by_id.get(claim.id)
        instance = "TP3a (Geman-McClure)" if ".T3a." in claim.id else "TP3b (indefinite quadratic)"
        lines.append(f"| {instance} | {claim.id} | {o.verdict if o is not None else 'not run'} | {_row(o, key)} |")
    text = "\n".join(lines)
    o = by_id.get(C.T3_IPIR_STATIONARY.id)
    pts = _points(o)
    if pts:
        p = pts[-1]
        start = float(np.nanmean(p.trace.measures["y_dist_sq"][0]))
        end = float(np.nanmean(p.trace.at_end("y_dist_sq")))
        text += (f"\n\nOn TP3b, ||y^t - y_stat||^2 falls from {start:.3g} to {end:.3g} in T = {p.value:g} outer steps "
                 f"({int(p.trace.counters['vectors_up'][-1])} client uploads); what remains is the eta_t-bias of the "
                 "inner call, which the closed-form recursion reproduces and which vanishes as eta_t = 2 ln R_t / "
                 "R_t^(5/12) -> 0 (slowly: eta_t halves only when R_t grows about 10x). The descent inequality is the "
                 "outer half of Theorem 3's proof; Prop. 7 bounds its E2, and the full bound (i-1) is in the next "
                 "section.")
    return text


def _huber_and_noise(outcomes: Sequence[Any]) -> str:
    by_id = _by_id(outcomes)
    lines = []
    for claim in (C.T2B_F_SLOPE, C.T2B_H_SLOPE):
        o: Any = by_id.get(claim.id)
        fit = (o.evidence or {}).get("fit") if o is not None else None
        slope = f", R-slope {fit['slope']:+.3f} (expected {o.evidence['expected_exponent']:+.3f})" if fit else ""
        lines.append(f"- {claim.id}: {o.verdict if o is not None else 'not run'}{slope}")
    o = by_id.get(C.T1_INTERVAL_NOISY.id)
    if o is not None:
        lines.append(f"- {C.T1_INTERVAL_NOISY.id} (observation): {o.reason}")
    return ("Huber outer loss (TP2b, convex, not strongly; noise-free runs, since a clip is not affine and exact "
            "mode refuses it) and Theorem 1 with oracle noise:\n" + "\n".join(lines))


def report_sections(outcomes: Sequence[Any]) -> list[tuple[str, str]]:
    """Theorem 1 tightness, Theorem 3 (observation), Table 1 printed/derived/measured, errata the runs confirm."""
    return [
        ("Theorem 1 on TP1: signed f - f* between its bounds", _tightness(outcomes)),
        ("Theorem 2 on Huber (TP2b); Theorem 1 on noisy runs", _huber_and_noise(outcomes)),
        ("Theorem 3 on IPIR-FedAvg: descent step and stationary point (TP3a, TP3b)", _ipir(outcomes)),
        ("Theorem 3 on TP3b: stationarity against the bound", _theorem3(outcomes)),
        ("Table 1: printed, derived from the bounds, measured", _table(outcomes)),
        ("Errata of the paper", _errata(outcomes)),
    ]


def report_figures(outcomes: Sequence[Any]) -> Iterable[Any]:
    """f - f* between Theorem 1's bounds (TP1), and the TP2 rates, from the claims' runs."""
    by_id = _by_id(outcomes)
    figures = []
    interval = by_id.get(C.T1_INTERVAL.id)
    if interval is not None and interval.evidence.get("rows"):
        rows = interval.evidence["rows"]

        def draw_interval(ax) -> None:
            R = [r["value"] for r in rows]
            ax.plot(R, [r["upper"] for r in rows], "C3--", label="f_up (corrected)")
            ax.plot(R, [r["lower"] for r in rows], "C3-", label="f_lo (corrected)")
            ax.plot(R, [r["mean"] for r in rows], "C0o-", label="measured E f(x^) - f*")
            ax.plot(R, [-C.eta_bias(p.config) for p in interval.points], "k:", label="f(x*_eta) - f*")
            ax.axhline(0.0, color="grey", lw=0.5)
            ax.set_xscale("log")
            ax.set_yscale("symlog", linthresh=1e-4)
            ax.set_xlabel("horizon R (one run per R)")
            ax.set_ylabel("f - f* (symlog)")

        figures.append(("Theorem 1: signed f - f* between its bounds (TP1)", draw_interval,
                        "StR-FedAvg, strongly convex schedule (a = 2/3, b = 1/3, p = 1), K = 2, S = N, no noise. "
                        "The output is infeasible: f - f* < 0, close to the eta-bias f(x*_eta) - f*."))
    ipir = _points(by_id.get(C.T3_INNER_BIAS.id))
    if ipir:
        point = ipir[-1]

        def draw_ipir(ax) -> None:
            trace = point.trace
            T = trace.checkpoints[1:].astype(float)
            measured = np.nanmean(trace.measures["avg:stat_sq"][1:], axis=1)
            bounds: dict[str, list[float]] = {v: [] for v in ("stated", "corrected")}
            for t_ in T:
                ev = th.THEOREM_3.evaluate(_theorem3_values(point, max(t_, 2.0))[0], use_schedule=False)
                for v in bounds:
                    bounds[v].append(ev.bounds[v])
            ax.plot(T, measured, "C0o-", label="measured (1/T) sum ||grad F_lambda(y^t)||^2")
            ax.plot(T, bounds["stated"], "C3--", label="Theorem 3 (i-1) as stated")
            ax.plot(T, bounds["corrected"], "C3-", label="corrected (I15)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("outer iterations T")
            ax.set_ylabel("averaged squared stationarity")

        figures.append(("Theorem 3: IPIR-FedAvg stationarity against the bound (TP3b)", draw_ipir,
                        "IPIR-FedAvg with R_t = t + R0 inner rounds, K = 1, S = N, no noise, gamma = lam/(4(L_f lam + 2)). "
                        "The bound uses the run's sup_t dist(y^t, X*_h); it is far above the measurement (observation)."))
    slopes = [(by_id.get(c.id), c.measure) for c in (C.T2_F_SLOPE, C.T2_H_SLOPE, C.T2_DIST_SLOPE)]
    present: list[tuple[Any, str]] = [(o, m) for o, m in slopes if o is not None and o.points]
    slopes = present
    if slopes:

        def draw_rates(ax: Any) -> None:
            for o, m in slopes:
                R = [p.value for p in o.points]
                ax.plot(R, [np.mean(p.samples) for p in o.points], "o-", label=f"{m} (slope "
                        f"{o.evidence.get('fit', {}).get('slope', math.nan):+.3f})")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("horizon R (one run per R)")
            ax.set_ylabel("measure of the uniform average")

        figures.append(("Theorem 2: rates on TP2a", draw_rates,
                        "StR-FedAvg, convex schedule (a = 1/2, b = 1/4): |f - f*| ~ R^(-1/4) (Theorem 2), "
                        "h - h* ~ R^(-1/2) and ||x^ - x*|| ~ R^(-1/4) (sharper than the bound)."))
    return figures
