"""The one place that decides how outcomes are counted: the index, the paper pages, the CLI's summary
line and ``check --json`` all read ``tally`` (issue #18), so their numbers cannot disagree.

Every outcome falls in exactly one category:

- ``unexpected``: its verdict differs from the expected one (always shown, whatever else it is);
- ``erratum``: expected to FAIL because the paper is wrong, and it did;
- ``negative control``: expected to FAIL because the algorithm must fail there (not a paper error);
- ``pass``: expected to PASS, and it did;
- ``observation``: a number reported with no verdict;
- ``monte-carlo twin``: a ``<id>.monte_carlo`` twin that, in this profile, read its exact claim's own
  runs (same run keys, nothing drawn) and agreed with its expectation: listed under the exact claim,
  not counted as a claim.

Imports no plotting library: the CLI reads it without paying for matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

UNEXPECTED, ERRATUM, CONTROL, PASS, OBSERVATION, TWIN = (
    "unexpected", "erratum", "negative control", "pass", "observation", "monte-carlo twin")
CATEGORIES = (UNEXPECTED, ERRATUM, CONTROL, PASS, OBSERVATION, TWIN)
TWIN_SUFFIX = ".monte_carlo"


def twins(outcomes: Sequence[Any]) -> dict[str, str]:
    """twin claim id -> exact claim id, for the Monte-Carlo twins that reuse their exact claim's runs:
    the twin's run keys are its exact claim's (the quick profile's twins draw nothing of their own)."""
    by_id = {o.claim.id: o for o in outcomes}
    out: dict[str, str] = {}
    for o in outcomes:
        cid = o.claim.id
        if not cid.endswith(TWIN_SUFFIX):
            continue
        exact = by_id.get(cid[: -len(TWIN_SUFFIX)])
        if exact is not None and o.points and _run_keys(o) == _run_keys(exact):
            out[cid] = exact.claim.id
    return out


def _run_keys(o: Any) -> list[str]:
    return [p.config.key() for p in o.points]


def category(o: Any, twin_ids: Any = ()) -> str:
    """The outcome's category (see the module docstring); ``twin_ids`` from ``twins``."""
    if not o.ok:
        return UNEXPECTED
    if o.claim.id in twin_ids:
        return TWIN
    if o.observation:
        return OBSERVATION
    if o.erratum:
        return ERRATUM
    if str(o.verdict) == "FAIL":  # an expected FAIL that is not an erratum is a negative control
        return CONTROL
    return PASS


@dataclass(frozen=True)
class Tally:
    """Counts of a set of outcomes; ``claims`` excludes the twins (they are listed, not counted)."""

    by_category: dict[str, int]
    verdicts: dict[str, int]  # PASS / FAIL / INCONCLUSIVE / ERROR among the counted claims with a verdict
    categories: dict[str, str] = field(repr=False)  # claim id -> category

    @property
    def claims(self) -> int:
        """Claims with a verdict (observations and twins are not claims)."""
        return sum(n for c, n in self.by_category.items() if c not in (OBSERVATION, TWIN))

    def __getitem__(self, key: str) -> int:
        return self.by_category[key]

    def to_dict(self) -> dict[str, Any]:
        return {"claims": self.claims, **{c.replace(" ", "_").replace("-", "_"): n for c, n in self.by_category.items()},
                "verdicts": dict(self.verdicts)}

    def sentence(self) -> str:
        """The counts in one line (the CLI's summary and the pages' head)."""
        c = self.by_category
        text = (f"{self.claims} claims: {c[PASS]} pass, {c[ERRATUM]} confirm an erratum, {c[CONTROL]} negative "
                f"controls fail as designed, {c[UNEXPECTED]} unexpected; {c[OBSERVATION]} observations (no verdict)")
        if c[TWIN]:
            text += f"; {c[TWIN]} Monte-Carlo checks reuse their exact claim's runs in this profile (not counted)"
        return text + "."


def tally(outcomes: Sequence[Any], twin_ids: Any = None) -> Tally:
    """The counts of ``outcomes``. ``twin_ids`` (from ``twins`` over every outcome) lets a page count
    its subset with the decision made on the whole set."""
    if twin_ids is None:
        twin_ids = twins(outcomes)
    cats = {o.claim.id: category(o, twin_ids) for o in outcomes}
    by = {c: 0 for c in CATEGORIES}
    for c in cats.values():
        by[c] += 1
    verdicts: dict[str, int] = {}
    for o in outcomes:
        if cats[o.claim.id] not in (OBSERVATION, TWIN):
            verdicts[str(o.verdict)] = verdicts.get(str(o.verdict), 0) + 1
    return Tally(by, verdicts, cats)
