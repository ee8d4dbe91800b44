"""Runs in a notebook (issue #22 item 7): ``ratecheck.run`` / ``ratecheck.run_config`` return a
``RunTrace``, a Trace (same fields, stored the same way) with ``plot(measure)`` and a summary table in
Jupyter. Apart from ratecheck.notebook so that running an algorithm loads neither claims nor sympy."""

from __future__ import annotations

import dataclasses
import functools
import html
import math
import warnings
from typing import Any

import numpy as np

from .simulate import engine
from .trace import Trace

__all__ = ["RunTrace", "run", "run_config", "shown"]


@dataclasses.dataclass
class RunTrace(Trace):
    """A Trace (same fields) with ``plot(measure)`` and a summary in Jupyter."""

    @classmethod
    def of(cls, trace: Trace) -> RunTrace:
        return cls(**{f.name: getattr(trace, f.name) for f in dataclasses.fields(Trace)})

    def plot(self, measure: str | None = None, *, log_y: bool = True) -> Any:
        """The replica mean of ``measure`` (default: the first recorded) against the round, with the
        replicas' 5-95% band (none for an exact run: one row of expectations)."""
        import matplotlib.pyplot as plt  # start-up time: only when a figure is asked for

        measure = measure or next(iter(self.measures))
        self.at_end(measure)  # an unknown measure: a KeyError naming the recorded ones
        values = self.measures[measure]
        rounds = np.asarray(self.checkpoints, dtype=float)
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rounds (every replica diverged): gaps
            mean = np.nanmean(values, axis=1)
            if values.shape[1] > 1:
                low, high = np.nanpercentile(values, [5, 95], axis=1)
                ax.fill_between(rounds, low, high, alpha=0.25, color="C0", label="replicas, 5-95%")
        ax.plot(rounds, mean, color="C0", marker="o", ms=3,
                label=("exact expectation" if self.exact else f"mean of {self.replicas} replicas"))
        if log_y and np.all(mean[np.isfinite(mean)] > 0):
            ax.set_yscale("log")
        ax.set_xlabel("round")
        ax.set_ylabel(measure)
        ax.set_title(f"{self.config.algorithm} on {self.config.problem}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        fig.tight_layout()
        return shown(fig)

    def _repr_html_(self) -> str:
        c = self.config
        finals = "".join(f"<tr><td><code>{html.escape(m)}</code></td><td>{_g(np.nanmean(v[-1]))}</td></tr>"
                         for m, v in self.measures.items())
        return (f"<p><strong>{html.escape(c.algorithm)}</strong> on <strong>{html.escape(c.problem)}</strong>: "
                f"{c.rounds} rounds, {self.replicas} {'exact row' if self.exact else 'replicas'}, "
                f"{self.diverged_count} diverged</p><table><thead><tr><th>measure</th><th>mean after the last "
                f"round</th></tr></thead><tbody>{finals}</tbody></table>")


def _g(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def shown(figure: Any) -> Any:
    """``figure``, closed in pyplot (Jupyter shows it once, as the cell's value) and displayable in
    IPython whatever backend is active: the report selects Agg, which registers no figure display."""
    import matplotlib.pyplot as plt

    plt.close(figure)
    try:  # IPython is optional: present only inside Jupyter
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # no IPython: nothing to display in
        return figure
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        select_figure_formats(shell, {"png"})
    return figure


@functools.wraps(engine.run)
def run(*args: Any, **kwargs: Any) -> RunTrace:
    return RunTrace.of(engine.run(*args, **kwargs))


@functools.wraps(engine.run_config)
def run_config(*args: Any, **kwargs: Any) -> RunTrace:
    return RunTrace.of(engine.run_config(*args, **kwargs))
