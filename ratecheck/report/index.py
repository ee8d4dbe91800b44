"""The index page: what failed and why first (unexpected verdicts, confirmed errata one line each,
negative controls, observations), then the per-paper table with colours and a legend, then provenance.
Every count comes from ratecheck.report.counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..claims import Outcome
from ..paper import Paper
from . import counts
from .document import Block, Bullets, Details, Heading, Inline, Para, Span, Table
from .format import _anchor, _badge, _one_line, _verdict, legend


def _link(o: Outcome, stems: Mapping[str, str]) -> Span:
    return Span(o.claim.id, code=True, page=stems[o.claim.paper], fragment=_anchor("claim", o.claim.id))


def _cell(n: int, category: str) -> Inline:
    """A count coloured as its category when it is not zero."""
    return Span(str(n), bold=category == counts.UNEXPECTED, cls=_badge(category).cls) if n else "0"


def _index_page(groups: Mapping[str, list[Outcome]], stems: Mapping[str, str], papers: Mapping[str, Paper],
                provenance: Sequence[Inline], twin_ids: Mapping[str, str]) -> list[Block]:
    every = [o for g in groups.values() for o in g]
    total = counts.tally(every, twin_ids)
    cats = total.categories

    def of(category: str) -> list[Outcome]:
        return [o for o in every if cats[o.claim.id] == category]

    blocks: list[Block] = [Heading(1, "ratecheck report"), Para(Span(total.sentence(), bold=True))]
    unexpected = of(counts.UNEXPECTED)
    blocks.append(Heading(2, f"Unexpected verdicts ({len(unexpected)})", anchor="unexpected"))
    if unexpected:
        blocks.append(Bullets([[_link(o, stems), ": measured ", _verdict(o.verdict), ", expected ",
                                _verdict(o.expected), " - ", _one_line(o.reason)] for o in unexpected]))
    else:
        blocks.append(Para("None: every claim gave the verdict its paper's analysis expects."))
    errata = of(counts.ERRATUM)
    blocks.append(Heading(2, f"Confirmed errata ({len(errata)})", anchor="errata"))
    if errata:
        table = Table(["claim", "paper says", "measured"], cls="verdicts")
        for o in errata:
            table.rows.append([_link(o, stems), _one_line(o.claim.statement, 200), _one_line(o.reason, 200)])
        blocks.append(table)
    else:
        blocks.append(Para("None confirmed in this run."))
    controls = of(counts.CONTROL)
    blocks.append(Heading(2, f"Negative controls ({len(controls)})", anchor="controls"))
    blocks.append(Para("Claims built to fail (the algorithm outside its theory's conditions): each shows that its "
                       "test can fail. They are not errors of the papers."))
    if controls:
        blocks.append(Details(f"The {len(controls)} negative controls",
                              [Bullets([[_link(o, stems), f" - {o.claim.title}"] for o in controls])]))
    observed = of(counts.OBSERVATION)
    blocks.append(Heading(2, f"Observations ({len(observed)})", anchor="observations"))
    blocks.append(Para("Numbers reported with no verdict (vacuity ratios, tightness factors)."))
    if observed:
        blocks.append(Details(f"The {len(observed)} observations",
                              [Bullets([[_link(o, stems), f" - {o.claim.title}"] for o in observed])]))

    blocks.append(Heading(2, "Papers", anchor="papers"))
    table = Table(["paper", "claims", "pass", "errata", "negative controls", "unexpected", "observations",
                   "Monte-Carlo checks (not counted)", "title"], cls="verdicts")
    for paper, group in groups.items():
        c = counts.tally(group, twin_ids)
        module = papers.get(paper)
        table.rows.append([Span(paper, bold=True, page=stems[paper]), str(c.claims), _cell(c[counts.PASS], counts.PASS),
                           _cell(c[counts.ERRATUM], counts.ERRATUM), _cell(c[counts.CONTROL], counts.CONTROL),
                           _cell(c[counts.UNEXPECTED], counts.UNEXPECTED),
                           _cell(c[counts.OBSERVATION], counts.OBSERVATION), str(c[counts.TWIN]),
                           module.title if module is not None else ""])
    if len(groups) > 1:
        table.rows.append([Span("total", bold=True), str(total.claims), str(total[counts.PASS]),
                           str(total[counts.ERRATUM]), str(total[counts.CONTROL]), str(total[counts.UNEXPECTED]),
                           str(total[counts.OBSERVATION]), str(total[counts.TWIN]), ""])
    blocks += [table, Para(Span("Legend", bold=True)), Bullets(legend())]
    blocks += [Heading(2, "Provenance", anchor="provenance"), Bullets(list(provenance))]
    return blocks


def provenance(meta: Mapping[str, Any]) -> list[Inline]:
    """The provenance block's items (ratecheck.report.provenance gathers them)."""
    return [[Span(f"{key}: ", bold=True), str(value)] for key, value in meta.items()]
