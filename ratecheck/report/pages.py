"""Page content: the index and one page per paper (verdicts, errata, observations, searches, claims,
theorems)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import sympy as sp

from ..claims import Outcome, Profile, Verdict
from ..claims.views import Fact
from ..paper import Paper
from ..theory import Theorem
from .document import (
    Block,
    Bullets,
    Heading,
    Image,
    Inline,
    Para,
    Span,
    Table,
    formula,
    markdown_blocks,
)
from .format import (
    _anchor,
    _deterministic,
    _g,
    _mean_ci,
    _one_line,
    _pct,
    _status,
    _value,
    _verdict,
)
from .plots import _as_drawn, _drawn

# ---------------------------------------------------------------------------------------------
# Page content


def _group(outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.claim.paper, []).append(o)
    return groups


def _theorems(group: Sequence[Outcome], module: Paper | None) -> list[Theorem]:
    if module is not None:
        return list(module.theorems)
    seen: dict[str, Theorem] = {}
    for o in group:
        if o.claim.theorem is not None:
            seen.setdefault(o.claim.theorem.id, o.claim.theorem)
    return list(seen.values())


def _counts(group: Sequence[Outcome]) -> dict[str, int]:
    return {
        "claims": len(group),
        **{str(v): sum(o.verdict == v for o in group) for v in Verdict},
        "ok": sum(o.ok for o in group),
        "unexpected": sum(not o.ok for o in group),
        "errata": sum(o.erratum for o in group),
    }


def _verdict_table(group: Sequence[Outcome]) -> Table:
    # the status first after the id (and sticky in HTML): on a narrow window it stays visible
    table = Table(["claim", "status", "measured", "expected", "kind", "title", "reason"], cls="verdicts")
    for o in group:
        table.rows.append([
            Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
            _status(o),
            _verdict(o.verdict, ok=o.ok),
            _verdict(o.expected),
            o.claim.kind,
            o.claim.title,
            _one_line(o.reason),
        ])
    return table


def _errata(group: Sequence[Outcome]) -> list[Block]:
    errata = [o for o in group if o.erratum]
    if not errata:
        return [Para("None confirmed in this run.")]
    blocks: list[Block] = []
    for o in errata:
        claim = o.claim
        items: list[Inline] = [[Span("Paper says: ", bold=True), claim.statement, f" [{claim.source}]"]]
        if claim.expect_reason:
            items.append([Span("Expected to fail because: ", bold=True), claim.expect_reason])
        bound = _stated_bound(claim)
        if bound is not None:
            assert claim.theorem is not None  # a stated bound is one of the claim's theorem's
            items.append([Span(f"Bound '{bound.version}' of {claim.theorem.id}: ", bold=True),
                          formula(bound.expr), f" [{bound.source}]"])
            if bound.note:
                items.append([Span("Note on this bound: ", bold=True), bound.note])
        items.append([Span("Measured: ", bold=True), _verdict(o.verdict, ok=o.ok), f" - {o.reason}"])
        blocks += [Heading(3, [Span(claim.id, code=True, fragment=_anchor("claim", claim.id)), f" - {claim.title}"]),
                   Bullets(items)]
    return blocks


def _observations(group: Sequence[Outcome]) -> list[Block]:
    """Numbers reported with no verdict (vacuity ratios, tightness factors, exponents against far caps)."""
    table = Table(["observation", "quantity", "values"])
    for o in group:
        if o.observation:
            values = ", ".join(f"{k} = {_g(v)}" for k, v in o.evidence.get("observed", {}).items())
            table.rows.append([Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
                               o.evidence.get("quantity", ""), values])
    # numbers with no verdict that a claim carries beside its verdict (e.g. a rate's tightness), by its pieces
    for o in group:
        if o.observation:
            continue
        for quantity, values in o.claim.view().observed(o):
            table.rows.append([Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)), quantity, values])
    return [table] if table.rows else [Para("None in this run.")]


def _hunts(group: Sequence[Outcome], images: Mapping[str, str | None]) -> list[Block]:
    """One section per hunted theorem and bound (ratecheck.hunt): the best ratio, the counterexample
    if any with its conditions and the command that reproduces it, the search drawn."""
    hunted = [o for o in group if "hunt" in o.evidence]
    if not hunted:
        return []
    blocks: list[Block] = [Heading(2, "Counterexample searches")]
    for o in hunted:
        h = o.evidence["hunt"]
        found = "a counterexample (shrunk)" if h["found"] else "no counterexample; the largest ratio seen"
        blocks.append(Heading(3, [Span(h["theorem"], code=True), f", bound '{h['version']}'"]))
        items: list[Inline] = [
            [Span("Claim: ", bold=True), Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
             f" ({o.verdict}, expected {o.expected})"],
            [Span("Search: ", bold=True), f"{h['examples']} admissible instances, {h['rejected']} drawn outside "
             f"the conditions, {h['seconds']}s, seed {h['seed']}" + (", truncated by the budget" if h["truncated"] else "")
             + (f"; stopped: {h['stopped']}" if h.get("stopped") else "")],
            [Span("Result: ", bold=True), f"{found}: measure/bound = {_g(h['ratio'])}"],
        ]
        if h.get("instance") is not None:
            items.append([Span("Instance: ", bold=True), Span(json.dumps(h["instance"], sort_keys=True), code=True)])
            items.append([Span("Reproduce: ", bold=True), Span(h["command"], code=True)])
        blocks.append(Bullets(items))
        if h.get("conditions"):
            table = Table(["condition", "lhs", "rhs", "margin", "holds"])
            for c in h["conditions"]:
                table.rows.append([c["name"], _g(c["lhs"]), _g(c["rhs"]), _g(c["margin"]), "yes" if c["holds"] else "no"])
            blocks.append(table)
        if images.get(o.claim.id):
            blocks.append(Image(str(images[o.claim.id]), f"search of {o.claim.id}"))
        if images.get(f"{o.claim.id}:trajectory"):
            which = "the counterexample" if h["found"] else "the instance with the largest ratio"
            blocks.append(Para(f"Measure against bound '{h['version']}' along the run of {which}, the bound "
                               "evaluated at each checkpoint's T with the instance's constants and step sizes:"))
            blocks.append(Image(str(images[f"{o.claim.id}:trajectory"]), f"measure against bound along the run of {o.claim.id}"))
    return blocks


def _claim_facts(o: Outcome) -> list[Inline]:
    claim: Any = o.claim  # each kind reads its own fields
    facts: list[Inline] = [
        [Span("Paper says: ", bold=True), claim.statement],
        [Span("Source: ", bold=True), str(claim.source)],
        [Span("Kind: ", bold=True), f"{claim.kind}; measure ", Span(claim.measure, code=True),
         f"; varied parameter {claim.vary} over ", ", ".join(_value(p.value) for p in o.points)],
    ]
    if claim.theorem is not None:
        facts.append([Span("Theorem: ", bold=True),
                      Span(claim.theorem.id, code=True, fragment=_anchor("theorem", claim.theorem.id)),
                      f" ({claim.theorem.title})"])
    expected: list[str | Span] = [Span("Expected: ", bold=True), _verdict(o.expected)]
    if claim.expect_reason:
        expected.append(f" - {claim.expect_reason}")
    facts.append(expected)
    facts.append([Span("Measured: ", bold=True), _verdict(o.verdict, ok=o.ok), " - ", _status(o)])
    facts.append([Span("Reason: ", bold=True), o.reason])
    if o.runs:  # issue #19: what this verdict read, from the store or computed by this check
        facts.append([Span("Runs: ", bold=True), f"{o.runs.get('reused', 0)} reused from the cache, "
                      f"{o.runs.get('computed', 0)} computed"])
    ev = o.evidence
    if o.observation:
        facts.append([Span("Observed (no verdict): ", bold=True), f"{ev.get('quantity', '')}: " + ", ".join(
            f"{k} = {_g(v)}" for k, v in ev.get("observed", {}).items())])
    if claim.controls is not None:
        other = ev.get("controlled", {})
        facts.append([Span("Negative control of: ", bold=True),
                      Span(claim.controls.id, code=True, fragment=_anchor("claim", claim.controls.id)),
                      f" on the same grid; it measured {other.get('verdict', '-')}, this control must differ"])
    facts += [_fact(fact) for fact in _drawn(claim).view().facts(_as_drawn(o))]
    return facts


def _fact(fact: Fact) -> Inline:
    """A piece's fact: its label in bold, text as is, sympy expressions as formulas."""
    label, parts = fact
    return [Span(label, bold=True), *(formula(x) if isinstance(x, sp.Basic) else str(x) for x in parts)]


def _stated_bound(claim: Any) -> Any:
    """The bound the claim's rule compares with, when it compares with one of its theorem's bounds."""
    shown = _drawn(claim)
    return shown.view().rule.stated_bound(shown)


def _grid_table(o: Outcome) -> list[Block]:
    claim = _drawn(o.claim)
    view = claim.view()
    pct = _pct(claim.level)
    own = view.statistic_columns(claim)  # the statistic's columns (e.g. a limit's distance of the mean)
    header: list[Inline] = [claim.vary, view.mean_label(claim), f"{pct} CI", "replicas used", "diverged"]
    header += [c.header for c in own]
    evals = [p.evaluation for p in o.points if p.evaluation is not None]
    versions: list[str] = []
    conditions: list[str] = []
    ruled = view.rule_columns(claim)  # the rule's columns (e.g. mean / the claimed bound)
    if evals:
        versions = list(claim.theorem.versions) if claim.theorem is not None else list(evals[0].bounds)
        conditions = [c.name for c in evals[0].conditions]
        claimed = getattr(claim, "version", None)
        header += [f"bound '{v}'" + (" (claimed)" if v == claimed else "") for v in versions]
        header += [c.header for c in ruled]
        header += [f"c{i + 1} lhs/rhs" for i in range(len(conditions))]
    table = Table(header)
    for p in o.points:
        mean, low, high = _mean_ci(p, claim.level)
        ci = "deterministic" if _deterministic(p) else f"[{_g(low)}, {_g(high)}]"
        row: list[Inline] = [_value(p.value), _g(mean), ci, str(p.samples.size), str(p.diverged)]
        row += [_cell(c.cell(p)) for c in own]
        if evals:
            bounds = p.evaluation.bounds if p.evaluation is not None else {}
            row += [_g(bounds.get(v)) for v in versions]
            row += [_cell(c.cell(p)) for c in ruled]
            results = {c.name: c for c in p.evaluation.conditions} if p.evaluation is not None else {}
            for name in conditions:
                c = results.get(name)
                if c is None:
                    row.append("-")
                    continue
                text = f"{_g(c.margin)} = {_g(c.lhs)}/{_g(c.rhs)}"
                row.append(Span(text + " violated", bold=True, cls="violated") if not c.holds else text)
        table.rows.append(row)
    blocks: list[Block] = [table]
    note = view.table_note(_as_drawn(o))
    if note:
        blocks.insert(0, Para(note))
    if conditions:
        legend: list[Inline] = [[f"c{i + 1}: ", Span(name, code=True)] for i, name in enumerate(conditions)]
        blocks += [Para("Conditions, as margin = lhs/rhs (holds when <= 1, or < 1 for strict ones):"),
                   Bullets(legend)]
    return blocks


def _cell(value: Any) -> Inline:
    return value if isinstance(value, str) else _g(value)


def _claim_section(o: Outcome, image: str | None) -> list[Block]:
    claim: Any = o.claim  # each kind reads its own fields
    blocks: list[Block] = [
        Heading(3, [Span(claim.id, code=True), f" - {claim.title}"], anchor=_anchor("claim", claim.id)),
        Bullets(_claim_facts(o)),
    ]
    if image is not None:
        blocks.append(Image(image, f"{claim.id}: {claim.kind} plot"))
        blocks.append(Para(_plot_caption(o)))
    else:
        blocks.append(Para("No plot: no grid point has a finite replica."))
    blocks += _grid_table(o)
    return blocks


def _plot_caption(o: Outcome) -> str:
    text = _drawn(o.claim).view().caption(_as_drawn(o))
    if o.observation:
        text += " An observation: the number is reported, with no verdict."
    return text


def _theorem_section(t: Theorem) -> list[Block]:
    blocks: list[Block] = [
        Heading(3, [Span(t.id, code=True), f" - {t.title}"], anchor=_anchor("theorem", t.id)),
        Bullets([
            [Span("Source: ", bold=True), str(t.source)],
            [Span("Measure: ", bold=True), Span(t.measure, code=True)],
            [Span("Constants: ", bold=True), ", ".join(s.name for s in t.constants) or "-"],
            [Span("Parameters: ", bold=True), ", ".join(s.name for s in t.parameters) or "-"],
        ]),
    ]
    if t.assumptions:
        blocks += [Para(Span("Assumptions", bold=True)), Bullets(list(t.assumptions))]
    blocks.append(Para(Span("Schedule", bold=True)))
    if t.schedule:
        blocks.append(Bullets([[Span(f"{k.name} = ", code=True), formula(v)] for k, v in t.schedule.items()]))
    else:
        blocks.append(Para("None prescribed."))
    if t.conditions:
        blocks.append(Para(Span("Conditions", bold=True)))
        table = Table(["name", "condition", "source", "note"])
        for c in t.conditions:
            table.rows.append([c.name, formula(c.relation), str(c.source), c.note])
        blocks.append(table)
    blocks.append(Para(Span("Bound versions", bold=True)))
    table = Table(["version", "bound", "source", "note"])
    for b in t.bounds:
        table.rows.append([Span(b.version, bold=True), formula(b.expr), str(b.source), b.note])
    blocks.append(table)
    return blocks


def _profile_text(profile: Profile) -> str:
    return f"{profile.name} ({profile.replicas} replicas, round scale {profile.scale:g})"


def _meta_items(meta: Mapping[str, Any]) -> list[Inline]:
    items: list[Inline] = []
    for key, value in meta.items():
        text = _g(value) if isinstance(value, float) else str(value)
        items.append([Span(f"{key}: ", bold=True), text])
    return items


def _paper_page(paper: str, group: Sequence[Outcome], module: Paper | None,
                images: Mapping[str, str | None], profile: Profile, generated: str,
                figures: Sequence[tuple[str, str, str]] = ()) -> list[Block]:
    title = module.title if module is not None else paper
    c = _counts(group)
    head: list[Inline] = [
        [Span("Paper key: ", bold=True), Span(paper, code=True)],
    ]
    if module is not None and module.seed:
        head.append([Span("Paper file: ", bold=True), str(module.seed)])
    head += [
        [Span("Profile: ", bold=True), _profile_text(profile)],
        [Span("Generated: ", bold=True), generated],
        [Span("Summary: ", bold=True),
         f"{c['claims'] - c['OBSERVED']} claims; PASS {c['PASS']}, FAIL {c['FAIL']}, INCONCLUSIVE "
         f"{c['INCONCLUSIVE']}; {c['ok'] - c['OBSERVED']} as expected, {c['unexpected']} unexpected; "
         f"{c['errata']} errata confirmed; {c['OBSERVED']} observations (numbers with no verdict)"],
        [Span("back to the index", page="index")],
    ]
    blocks: list[Block] = [Heading(1, title), Bullets(head),
                           Heading(2, "Verdicts"), _verdict_table(group),
                           Heading(2, "Confirmed errata"), *_errata(group),
                           Heading(2, "Observations"), *_observations(group),
                           *_hunts(group, images),
                           Heading(2, "Claims")]
    for o in group:
        blocks += _claim_section(o, images.get(o.claim.id))
    extra = module.report_sections if module is not None else None
    for heading, body in (extra(group) if extra else []):
        blocks += [Heading(2, heading), *markdown_blocks(body)]
    for title, src, caption in figures:
        blocks += [Heading(2, title), Image(src, title), Para(caption)]
    theorems = _theorems(group, module)
    if theorems:
        blocks.append(Heading(2, "Theorems"))
        for t in theorems:
            blocks += _theorem_section(t)
    return blocks


def _index_page(groups: Mapping[str, list[Outcome]], stems: Mapping[str, str],
                papers: Mapping[str, Paper], profile: Profile, meta: Mapping[str, Any],
                generated: str) -> list[Block]:
    every = [o for g in groups.values() for o in g]
    total = _counts(every)
    unexpected = [o for o in every if not o.ok]
    head: list[Inline] = [[Span("Generated: ", bold=True), generated],
                          [Span("Profile: ", bold=True), _profile_text(profile)], *_meta_items(meta)]
    status = (f"{total['claims']} claims: {total['ok']} as expected, {total['unexpected']} unexpected; "
              f"{total['errata']} errata confirmed; {total['OBSERVED']} of them observations (numbers with no "
              "verdict).")
    table = Table(["paper", "title", "claims", "PASS", "FAIL", "INCONCLUSIVE", "observed", "as expected",
                   "unexpected", "errata confirmed", "page"])
    for paper, group in groups.items():
        c = _counts(group)
        module = papers.get(paper)
        title = module.title if module is not None else ""
        unexpected_cell: Inline = (Span(str(c["unexpected"]), bold=True, cls="unexpected")
                                   if c["unexpected"] else "0")
        table.rows.append([Span(paper, code=True), title, str(c["claims"]), str(c["PASS"]), str(c["FAIL"]),
                           str(c["INCONCLUSIVE"]), str(c["OBSERVED"]), f"{c['ok']}/{c['claims']}", unexpected_cell,
                           str(c["errata"]), Span(stems[paper], page=stems[paper])])
    if len(groups) > 1:
        table.rows.append([Span("total", bold=True), "", str(total["claims"]), str(total["PASS"]),
                           str(total["FAIL"]), str(total["INCONCLUSIVE"]), str(total["OBSERVED"]),
                           f"{total['ok']}/{total['claims']}",
                           str(total["unexpected"]), str(total["errata"]), ""])
    blocks: list[Block] = [Heading(1, "ratecheck report"), Bullets(head), Para(status),
                           Heading(2, "Papers"), table]
    if unexpected:
        items: list[Inline] = []
        for o in unexpected:
            stem = stems[o.claim.paper]
            items.append([Span(o.claim.id, code=True, page=stem, fragment=_anchor("claim", o.claim.id)),
                          ": measured ", _verdict(o.verdict), ", expected ", _verdict(o.expected), " - ",
                          _one_line(o.reason)])
        blocks += [Heading(2, "Unexpected verdicts"), Bullets(items)]
    return blocks


