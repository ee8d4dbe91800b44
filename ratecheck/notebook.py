"""ratecheck in a notebook (issue #22 item 7): ``ratecheck.check`` returns ``Outcomes`` that render as an
HTML table in Jupyter, each ``NotebookOutcome`` with ``.plot()`` (the report's figure, drawn through the
claim's views) and ``.evidence`` as an ``Evidence`` record (still the JSON dict, with typed attributes);
``ratecheck.run`` returns a ``RunTrace`` with ``.plot(measure)`` (ratecheck.notebook_runs).

    outcomes = ratecheck.check("defedavg.T1-*", raise_unexpected=False)
    outcomes                                   # the table
    outcomes["defedavg.T1-rate"].plot()        # a matplotlib Figure
    outcomes["defedavg.T1-rate"].evidence.band  # BandEvidence(expected_exponent=..., band=(...), ...)
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .claims import Outcome
from .claims.evidence import BandEvidence, DifferenceEvidence
from .notebook_runs import RunTrace, run, run_config, shown
from .runner import checking

__all__ = ["Evidence", "NotebookOutcome", "Outcomes", "Row", "RunTrace", "check", "outcomes", "run", "run_config"]

# the report's verdict colours, inline (a notebook has no report stylesheet)
_COLOURS = {"PASS": "#1a7f37", "FAIL": "#cf222e", "INCONCLUSIVE": "#9a6700", "OBSERVED": "#57606a"}


@dataclass(frozen=True)
class Row:
    """One grid point of the evidence: the varied value, the mean and its interval where the kind has
    them, and every other number the kind recorded (``others``, also readable as ``row["bound"]``)."""

    value: float
    mean: float | None
    low: float | None
    high: float | None
    others: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return {"value": self.value, "mean": self.mean, "low": self.low, "high": self.high, **self.others}[key]


def _number(x: Any) -> float | None:
    return None if x is None else float(x)


class Evidence(dict):
    """An outcome's evidence: the dict ``ratecheck check --json`` writes, with typed access to its parts."""

    @property
    def rows(self) -> list[Row]:
        """The per-point rows (bounds, values, intervals, limits, rates); [] for kinds without rows."""
        out = []
        for r in self.get("rows", []):
            low, high = r.get("low", r.get("lcb")), r.get("high", r.get("ucb"))
            known = {"value", "mean", "low", "high", "lcb", "ucb"}
            out.append(Row(float(r["value"]), _number(r.get("mean", r.get("rate"))), _number(low), _number(high),
                           {k: v for k, v in r.items() if k not in known}))
        return out

    @property
    def band(self) -> BandEvidence | None:
        """A slope's fit against the band of its expected exponent (slope kinds), else None."""
        return BandEvidence.read(self)

    @property
    def difference(self) -> DifferenceEvidence | None:
        """Two fitted slopes and the CI of their difference (exponent comparisons), else None."""
        return DifferenceEvidence.read(self)

    @property
    def terms(self) -> Mapping[str, Any]:
        """A MaskedTerm gate's record: the term under test, the share it must reach, and each point's
        shares of the bound's terms ({} when the claim has no such gate)."""
        return dict(self.get("terms", {}))

    @property
    def power(self) -> Mapping[str, Any]:
        """The rule's power: the smallest change of the measured quantity that would flip the verdict."""
        return dict(self.get("power", {}))


@dataclasses.dataclass(repr=False)
class NotebookOutcome(Outcome):
    """An Outcome (same fields, same JSON) that Jupyter shows as its grid table, with ``plot()``."""

    def __repr__(self) -> str:
        return f"<{self.claim.id}: {self.verdict}, expected {self.expected}: {self.reason}>"

    def __post_init__(self) -> None:
        self.evidence = Evidence(self.evidence)

    @classmethod
    def of(cls, outcome: Outcome) -> NotebookOutcome:
        if isinstance(outcome, cls):
            return outcome
        return cls(**{f.name: getattr(outcome, f.name) for f in dataclasses.fields(Outcome)})

    def plot(self) -> Any:
        """The claim's figure as in the report (a matplotlib Figure, drawn through its views)."""
        from .report.plots import _figure  # start-up time: matplotlib loads only when a figure is asked for

        figure = _figure(self)
        if figure is None:
            raise ValueError(f"claim {self.claim.id}: nothing to plot (fewer than two grid points with a finite "
                             "value); its table says it all")
        return shown(figure)

    def _repr_html_(self) -> str:
        # start-up time: sympy and matplotlib (report pages) load only when a result is displayed
        from .report.document import _html_blocks
        from .report.pages import _grid_table

        head = (f"<p><strong>{html.escape(self.claim.id)}</strong> ({html.escape(self.claim.kind)}): "
                f"{_verdict_html(str(self.verdict))}, expected {html.escape(str(self.expected))}. "
                f"{html.escape(self.reason)}</p>")
        return head + "\n".join(_html_blocks(_grid_table(self)))


def _verdict_html(verdict: str) -> str:
    return f'<strong style="color:{_COLOURS.get(verdict, "inherit")}">{html.escape(verdict)}</strong>'


class Outcomes(list[NotebookOutcome]):
    """The outcomes of a check: a list, indexable by claim id too, shown as one table in Jupyter."""

    def __init__(self, outcomes: Iterable[Outcome] = ()) -> None:
        super().__init__(NotebookOutcome.of(o) for o in outcomes)

    def __getitem__(self, key: Any) -> Any:  # a claim id as well as an index
        if isinstance(key, str):
            for o in self:
                if o.claim.id == key:
                    return o
            raise KeyError(f"no outcome for claim {key!r}; have {', '.join(o.claim.id for o in self)}")
        return super().__getitem__(key)

    def __repr__(self) -> str:
        width = max((len(o.claim.id) for o in self), default=5)
        return "\n".join(f"{o.claim.id:<{width}}  {str(o.verdict):<12}  expected {o.expected}" for o in self)

    def plot(self, claim_id: str) -> Any:
        """The figure of one claim's outcome."""
        return self[claim_id].plot()

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{html.escape(o.claim.id)}</code></td><td>{html.escape(o.claim.kind)}</td>"
            f"<td>{_verdict_html(str(o.verdict))}</td><td>{html.escape(str(o.expected))}</td>"
            f"<td>{'yes' if o.ok else '<strong>NO</strong>'}</td><td style='text-align:left'>"
            f"{html.escape(o.reason)}</td></tr>" for o in self)
        return ("<table><thead><tr><th>claim</th><th>kind</th><th>verdict</th><th>expected</th><th>as expected</th>"
                f"<th>reason</th></tr></thead><tbody>{rows}</tbody></table>")


def check(*claims: Any, raise_unexpected: bool = True, **options: Any) -> Outcomes:
    """``ratecheck.runner.checking.check`` (same claims, patterns and options) returning ``Outcomes``.
    With ``raise_unexpected=False`` an unexpected verdict is shown in the table instead of raised."""
    try:
        return Outcomes(checking.check(*claims, **options))
    except checking.ClaimFailure as failure:
        if raise_unexpected or not hasattr(failure, "outcomes"):
            raise
        return Outcomes(failure.outcomes)


def outcomes(items: Sequence[Outcome]) -> Outcomes:
    """Any outcomes (e.g. ``check_claims``'s) as ``Outcomes``."""
    return Outcomes(items)
