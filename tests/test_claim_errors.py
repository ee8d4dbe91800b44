"""Issue #23 item 5: one claim's failure never loses the other verdicts. A claim whose planning, requests or
decide raises gets an ERROR naming what raised and where; the claims beside it are decided as usual."""

import dataclasses

from ratecheck.claims import PROFILES, Verdict
from ratecheck.registry import default
from ratecheck.runner.sweep import check_claims

PROFILE = PROFILES["quick"]


def _variant(base, name, **methods):
    cls = type(f"Broken{name}", (type(base),), methods)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.init}
    return cls(**{**fields, "id": f"{base.id}.{name}"})


def _raise(*args, **kwargs):
    raise ValueError("eta_x = -1 violates eta_x > 0")


def test_a_claim_that_cannot_plan_or_decide_is_an_error_and_the_others_are_decided():
    base = default().select_claims("fessgda.A5.drift_bias")[0]  # five noise-free runs
    planning = _variant(base, "planning", runs=_raise)
    deciding = _variant(base, "deciding", decide=_raise)
    outcomes = {o.claim.id: o for o in check_claims([planning, base, deciding], PROFILE, progress=False)}
    assert outcomes[base.id].verdict == Verdict.PASS
    for claim, doing in ((planning, "planning its runs raised ValueError"),
                         (deciding, "its decide raised ValueError")):
        outcome = outcomes[claim.id]
        assert outcome.verdict == Verdict.ERROR
        assert doing in outcome.reason and "eta_x = -1" in outcome.reason and __file__ in outcome.reason, \
            outcome.reason


def test_non_finite_numbers_keep_the_json_strict():
    """A diverged run's NaN (a point's mean, an array or numpy scalar in the evidence) is written as a string:
    `check --json` writes strict JSON, and one such claim must not abort the paper's check (a held-out bug
    in the event timeline's job time ended `ratecheck check defedavg` with exit 3 this way)."""
    import json

    import numpy as np

    from ratecheck.claims.base import Outcome

    claim = next(iter(default().claims()))
    evidence = {"fit": {"means": np.array([1.0, np.nan]), "slope": np.float64(np.nan)}, "ratio": float("inf")}
    out = Outcome(claim, Verdict.INCONCLUSIVE, "a diverged grid point", evidence, []).to_dict()
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text)["evidence"]["fit"] == {"means": [1.0, "nan"], "slope": "nan"}
