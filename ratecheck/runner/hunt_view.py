"""How a hunt is shown (its plan's view, ratecheck.claims.views): the measure/bound ratio of every instance its
search tried, in search order, against the bound (ratio 1), with the largest ratio and the reported instance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..claims.views import Statistic, positive


class SearchHistory(Statistic):
    """measure / bound of every admissible instance tried (evidence ``history``), on a linear instance axis."""

    def ylabel(self, claim: Any) -> str:
        return "measure / bound of each instance tried"

    def xlabel(self, claim: Any) -> str:
        return "instance (search order; shrinking last)"

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        return False, positive(ys)

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ratios = np.array([float(r) for r in o.evidence.get("history", [])], dtype=float)
        ax.plot(np.arange(1, ratios.size + 1), ratios, "o", ms=4, color="C0", label="instance tried (in order)")
        ax.axhline(1.0, color="C3", ls="--", lw=1.5, label=f"bound '{o.claim.version}' (ratio 1)")
        if np.isfinite(ratios).any():  # where the search peaked, and the instance the verdict reports
            best, h = int(np.nanargmax(np.where(np.isfinite(ratios), ratios, np.nan))), o.evidence.get("hunt", {})
            ax.plot(best + 1, ratios[best], "*", ms=14, color="C1", zorder=5,
                    label=f"largest ratio found: {ratios[best]:.3g}")
            at = np.flatnonzero(np.isclose(ratios, float(h.get("ratio", np.nan)), rtol=1e-9))
            if at.size:
                ax.plot(at[-1] + 1, ratios[at[-1]], "s", ms=11, mfc="none", mew=2, color="C3", zorder=6, label=(
                    "counterexample reported (shrunk)" if h.get("found") else "instance reported")
                    + f": ratio {h['ratio']:.3g}")

    def caption(self, o: Any) -> str:
        return ("Points: measure / bound on each admissible instance the search tried, in search order (shrinking "
                "last); dashed: the bound (ratio 1); star: the largest ratio found; square: the instance the verdict "
                "reports.")
