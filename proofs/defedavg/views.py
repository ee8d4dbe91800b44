"""How the report shows DeFedAvg's own claim kinds (ratecheck.claims.views): the stability runs as the
change of the measure over each run against the deciding factor, and the wall-clock claims as the
time-to-target ratio against the timing model's band."""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims.views import Fact, Statistic, pct, positive


class ChangeOverRun(Statistic):
    """Per run (below / at / above a stability threshold): end / start of the measure, against the factor."""

    def ylabel(self, claim: Any) -> str:
        return f"{claim.measure}: end / start of the run"

    def y_values(self, o: Any) -> list[float]:
        return [r["change"] for r in o.evidence.get("rows", []) if np.isfinite(r["change"])]

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        rows = o.evidence.get("rows", [])
        for i, name in enumerate(dict.fromkeys(r["run"] for r in rows)):
            mine = [r for r in rows if r["run"] == name and np.isfinite(r["change"])]
            want = mine[0]["expected"] if mine else ""
            ax.plot([r["value"] for r in mine], [r["change"] for r in mine], "o", ms=6, color=f"C{i}",
                    label=f"step '{name}' (must {want.replace('s', '', 1) if want else '-'})")
        factor = o.claim.factor
        ax.axhline(factor, color="C3", ls="--", lw=1.2, label=f"grows: x{factor:g}")
        ax.axhline(1 / factor, color="C2", ls="--", lw=1.2, label=f"contracts: x1/{factor:g}")

    def caption(self, o: Any) -> str:
        return ("Points: the change of the measure over each run (deterministic; a diverged run is not drawn); "
                "dashed: the factors that decide growth and contraction.")


class TimeRatio(Statistic):
    """The time to target of the algorithm over the baseline's, per grid value, with the model's band."""

    def ylabel(self, claim: Any) -> str:
        return f"time to target: {claim.algorithm} / {claim.baseline}"

    def _rows(self, o: Any) -> list[dict[str, float]]:
        return sorted(o.evidence.get("rows", []), key=lambda r: r["value"])

    def y_values(self, o: Any) -> list[float]:
        keys = ("ratio", "ratio_low", "ratio_high", "band_low", "band_high")
        return [float(r[k]) for r in self._rows(o) for k in keys] + [1.0]

    def scales(self, o: Any, xs: Any, ys: Any) -> tuple[bool, bool]:
        return positive(xs), positive(ys)

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        rows = self._rows(o)
        if not rows:
            return
        x = np.array([r["value"] for r in rows], dtype=float)
        get = {k: np.array([r[k] for r in rows], dtype=float)
               for k in ("ratio", "ratio_low", "ratio_high", "band_low", "band_high")}
        ax.fill_between(x, get["band_low"], get["band_high"], color="C2", alpha=0.15, lw=0,
                        label="timing model's band (replica geometric mean)")
        ax.vlines(x, get["ratio_low"], get["ratio_high"], color="C0", lw=2, alpha=0.6,
                  label=f"{pct(o.claim.level)} CI of the ratio")
        ax.plot(x, get["ratio"], "o", color="C0", ms=6, label="measured time ratio (geometric mean over replicas)",
                zorder=4)
        ax.axhline(1.0, color="C3", ls="--", lw=1.2, label="equal time (the claim: below)")

    def caption(self, o: Any) -> str:
        return (f"Points: time to {o.claim.fraction:g} x the initial {o.claim.measure} of {o.claim.algorithm} over "
                f"{o.claim.baseline}'s (geometric mean of per-replica ratios); bars: its {pct(o.claim.level)} CI; "
                "shaded: the timing model's band; the claim also needs the ratio below 1.")

    def mean_label(self, claim: Any) -> str:
        return "replica mean of log(time ratio) (the baseline's row: its negative)"

    def facts(self, o: Any) -> list[Fact]:
        return [("Timing model: ", (o.claim.band_reason,))]
