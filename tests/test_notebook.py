"""Issue #22 item 7: the notebook API. Outcomes render as HTML tables, plot through the claims' views (the
report's figure), expose typed evidence; ``ratecheck.run`` traces plot their measures. Fast: the
outcomes are decided on hand-made points (tests/test_masked_term.py's), the run is a few rounds."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import ratecheck  # noqa: E402
from ratecheck.claims.base import Outcome  # noqa: E402
from ratecheck.notebook import Evidence, NotebookOutcome, Outcomes, Row  # noqa: E402
from ratecheck.notebook_runs import RunTrace  # noqa: E402
from ratecheck.problems import make_problem  # noqa: E402
from ratecheck.proofs.defedavg.presets import p2  # noqa: E402
from ratecheck.registry import make_algorithm  # noqa: E402
from ratecheck.runner import checking  # noqa: E402
from tests.test_masked_term import claim, points  # noqa: E402


def outcome(version: str = "wrong, tight") -> Outcome:
    c = claim(version)
    verdict, reason, evidence = c.judge(pts := points())
    return Outcome(c, verdict, reason, evidence, pts)


def test_an_outcome_renders_its_grid_table_and_its_figure():
    shown = NotebookOutcome.of(outcome())
    assert isinstance(shown, Outcome) and (shown.verdict, shown.evidence) == (outcome().verdict, outcome().evidence)
    page = shown._repr_html_()
    assert "<strong>t.wrong, tight</strong> (bound)" in page and ">FAIL</strong>, expected PASS" in page
    assert "dominant term of &#x27;wrong, tight&#x27; (share)" in page and "D/(T*eta) (72%)" in page
    figure = shown.plot()
    assert isinstance(figure, Figure) and figure.axes[0].get_xlabel().startswith("M")


def test_the_evidence_is_typed():
    evidence = NotebookOutcome.of(outcome()).evidence
    assert isinstance(evidence, Evidence) and isinstance(evidence, dict)
    rows = evidence.rows
    assert [r.value for r in rows] == [8.0, 16.0, 32.0, 64.0] and all(isinstance(r, Row) for r in rows)
    assert rows[0].low is not None and rows[0].low <= rows[0].mean <= rows[0].high
    assert rows[0]["bound"] == rows[0].others["bound"] > 0
    assert evidence.band is None and evidence.difference is None and evidence.power == evidence["power"]
    assert evidence.terms == {}  # no masked-term gate on this claim


def test_outcomes_are_a_table_indexed_by_claim_id():
    table = Outcomes([outcome("wrong, tight"), outcome("wrong, loose")])
    assert isinstance(table, list) and len(table) == 2
    assert table["t.wrong, loose"].verdict.name == "PASS" and table[0].claim.id == "t.wrong, tight"
    page = table._repr_html_()
    assert page.count("<tr>") == 3 and "<strong>NO</strong>" in page  # the FAIL was not expected
    with pytest.raises(KeyError, match="no outcome for claim 'nope'; have t.wrong, tight, t.wrong, loose"):
        table["nope"]
    assert isinstance(table.plot("t.wrong, loose"), Figure)


def test_check_returns_outcomes_and_can_show_the_unexpected(monkeypatch):
    made = [outcome("wrong, tight")]

    def fake_check(*claims, **options):
        failure = checking.ClaimFailure("unexpected")
        failure.outcomes = made
        raise failure

    monkeypatch.setattr(checking, "check", fake_check)
    with pytest.raises(checking.ClaimFailure):
        ratecheck.check("t.*")
    shown = ratecheck.check("t.*", raise_unexpected=False)
    assert isinstance(shown, Outcomes) and shown[0].claim.id == "t.wrong, tight"


def test_a_run_plots_its_measures():
    problem = make_problem("quadratic", p2(clients=4, sigma=0.5, curvature="per_client", dim=3, mu=0.3))
    trace = ratecheck.run(make_algorithm("fedavg", dict(eta_global=1.0, eta_local=0.1, local_steps=2)), problem, 6,
                          replicas=4)
    assert isinstance(trace, RunTrace) and isinstance(trace, ratecheck.Trace)
    measure = next(iter(trace.measures))
    figure = trace.plot(measure)
    assert figure.axes[0].get_ylabel() == measure and figure.axes[0].get_xlabel() == "round"
    assert "fedavg</strong> on <strong>quadratic" in trace._repr_html_()
    with pytest.raises(KeyError, match="not recorded"):
        trace.plot("no such measure")
