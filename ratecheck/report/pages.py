"""Page content: the index and one page per paper (verdicts, errata, observations, searches, claims,
theorems)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import sympy as sp

from ..claims import Outcome, Profile
from ..claims.compose import pieces_of
from ..claims.power import read as read_power
from ..claims.views import Fact
from ..paper import Paper
from ..theory import Theorem
from . import counts
from .document import (
    Block,
    Bullets,
    Details,
    Heading,
    Image,
    Inline,
    Para,
    Span,
    Table,
    formula,
    markdown_blocks,
    printed_formula,
)
from .format import (
    _anchor,
    _badge,
    _deterministic,
    _g,
    _mean_ci,
    _one_line,
    _pct,
    _value,
    _verdict,
    legend,
    plain,
    readable_source,
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


def _verdict_table(group: Sequence[Outcome], cats: Mapping[str, str], title: str = "") -> Table:
    # the claim id first: the sticky column (with a background) that stays visible when scrolled sideways
    table = Table(["claim", "status", "measured", "expected", "title", "reason"], cls="verdicts")
    for o in group:
        table.rows.append([
            Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
            _badge(cats[o.claim.id]),
            _verdict(o.verdict, ok=o.ok),
            _verdict(o.expected),
            o.claim.title,
            _one_line(o.reason),
        ])
    return table


def _errata_table(group: Sequence[Outcome], cats: Mapping[str, str], title: str,
                  unchecked: Sequence[Any] = (), seed: str = "") -> list[Block]:
    """The confirmed errata, one row each: what the paper says, what was measured, where; then the
    specification's errata no claim can decide, with the reason (paper.Erratum)."""
    errata = [o for o in group if cats[o.claim.id] == counts.ERRATUM]
    if not errata and not unchecked:
        return [Para("No erratum is confirmed by a claim in this run.")]
    table = Table(["claim", "paper says", "measured", "source"], cls="verdicts")
    blocks: list[Block] = [table]
    if unchecked:
        blocks.insert(0, Para(f"{len(errata)} confirmed by a claim (counted among the claims), then "
                              f"{len(unchecked)} that the specification lists and no claim can decide, marked "
                              "'not checkable' with the reason (not claims: not counted)."))
    for o in errata:
        table.rows.append([Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
                           [plain(o.claim.statement)[0].strip(), *_printed_and_encoded(o.claim, " ")],
                           [_verdict(o.verdict, ok=o.ok), " ", _one_line(o.reason, 300)],
                           readable_source(o.claim.source, title)])
    paper = readable_source(seed, title)
    for e in unchecked:
        table.rows.append([Span("not checkable", bold=True), [f"{e.where}: ", plain(e.what)[0]],
                           plain(e.why_not_checkable)[0],
                           [f"{paper}, {e.where}", *((f" (implementation spec {e.spec})",) if e.spec else ())]])
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


def _hunt(o: Outcome, images: Mapping[str, str | None]) -> list[Block]:
    """A hunt's search (ratecheck.runner.hunt): the best ratio, the counterexample if any with its conditions
    and the command that reproduces it, and its run against the bound. Shown once, in its claim's section."""
    h = o.evidence["hunt"]
    found = "a counterexample (shrunk)" if h["found"] else "no counterexample; the largest ratio seen"
    items: list[Inline] = [
        [Span("Search: ", bold=True), f"theorem {h['theorem']}, bound '{h['version']}'; {h['examples']} admissible "
         f"instances, {h['rejected']} drawn outside the conditions, seed {h['seed']}"
         + (", truncated by the budget" if h["truncated"] else "")
         + (f"; stopped: {h['stopped']}" if h.get("stopped") else "")],
        [Span("Result: ", bold=True), f"{found}: measure/bound = {_g(h['ratio'])}"],
    ]
    if h.get("instance") is not None:
        items.append([Span("Instance: ", bold=True), Span(json.dumps(h["instance"], sort_keys=True), code=True)])
        items.append([Span("Reproduce: ", bold=True), Span(h["command"], code=True)])
    blocks: list[Block] = [Bullets(items)]
    if h.get("conditions"):
        table = Table(["condition", "lhs", "rhs", "margin", "holds"])
        for c in h["conditions"]:
            table.rows.append([c["name"], _g(c["lhs"]), _g(c["rhs"]), _g(c["margin"]), "yes" if c["holds"] else "no"])
        blocks.append(table)
    if images.get(f"{o.claim.id}:trajectory"):
        which = "the counterexample" if h["found"] else "the instance with the largest ratio"
        blocks.append(Para(f"Measure against bound '{h['version']}' along the run of {which}, the bound "
                           "evaluated at each checkpoint's T with the instance's constants and step sizes:"))
        blocks.append(Image(str(images[f"{o.claim.id}:trajectory"]),
                             f"measure against bound along the run of {o.claim.id}"))
    return blocks


def _claim_facts(o: Outcome, title: str, category: str) -> list[Inline]:
    claim: Any = o.claim  # each kind reads its own fields
    facts: list[Inline] = [
        [Span("Paper says: ", bold=True), plain(claim.statement)[0].strip(), *_printed_and_encoded(claim, " ")],
        [Span("Source: ", bold=True), readable_source(claim.source, title)],
        [Span("Kind: ", bold=True), claim.kind, *(("; measure ", Span(claim.measure, code=True)) if claim.measure else ()),
         *((f"; varied parameter {claim.vary} over ", _values(o)) if _drawn(claim).view().grid_columns(claim) else ())],
    ]
    if hasattr(claim, "plan"):  # the pieces its decision is composed of (ratecheck.claims.compose)
        facts.append([Span("Decided by: ", bold=True), "; ".join(f"{k} {v}" for k, v in pieces_of(claim).items())])
    if claim.theorem is not None:
        facts.append([Span("Theorem: ", bold=True),
                      Span(claim.theorem.id, code=True, fragment=_anchor("theorem", claim.theorem.id)),
                      f" ({claim.theorem.title})"])
    expected: list[str | Span] = [Span("Expected: ", bold=True), _verdict(o.expected)]
    if claim.expect_reason:
        expected.append(f" - {plain(claim.expect_reason)[0].strip()}")
    facts.append(expected)
    facts.append([Span("Measured: ", bold=True), _verdict(o.verdict, ok=o.ok), " - ", _badge(category)])
    facts.append([Span("Reason: ", bold=True), plain(o.reason)[0].strip()])
    if (rule := read_power(o.evidence)) is not None:  # issue #23: the smallest change the verdict would see
        facts.append([Span("Power: ", bold=True), rule.text().removeprefix("power: ")])
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


def _values(o: Outcome, shown: int = 8) -> str:
    """The grid values, the first and last few when there are many (a hunt's instances)."""
    values = [_value(p.value) for p in o.points]
    if len(values) <= shown:
        return ", ".join(values)
    return ", ".join(values[: shown // 2]) + f", ... ({len(values)} values), " + ", ".join(values[-2:])


def _fact(fact: Fact) -> Inline:
    """A piece's fact: its label in bold, text as is, sympy expressions as formulas."""
    label, parts = fact
    return [Span(label, bold=True), *(formula(x) if isinstance(x, sp.Basic) else plain(str(x))[0] for x in parts)]


def _stated_bound(claim: Any) -> Any:
    """The bound the claim's rule compares with, when it compares with one of its theorem's bounds."""
    shown = _drawn(claim)
    return shown.view().rule.stated_bound(shown)


def _claimed_bound(claim: Any) -> Any:
    """The theorem's bound a claim compares with or hunts a counterexample to, if any."""
    space = getattr(claim, "space", None)
    if space is not None and getattr(claim, "version", None):
        return space.theorem.bound(claim.version)
    return _stated_bound(claim)


def _printed_and_encoded(claim: Any, lead: str = "") -> list[str | Span]:
    """The claimed bound as the paper prints it beside the encoded (checked) form, when it was copied."""
    bound = _claimed_bound(claim)
    if bound is None or not getattr(bound, "printed", ""):
        return []
    return [lead, Span(f"bound '{bound.version}': paper prints ", bold=True), printed_formula(bound.printed),
            Span("; encoded ", bold=True), formula(bound.expr)]


def _grid_table(o: Outcome) -> list[Block]:
    claim = _drawn(o.claim)
    view = claim.view()
    pct = _pct(claim.level)
    own = view.statistic_columns(claim)  # the statistic's columns (e.g. a limit's distance of the mean)
    generic = view.grid_columns(claim)
    header: list[Inline] = [claim.vary, view.mean_label(claim), f"{pct} CI", "replicas used", "diverged"] if generic else []
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
        ci = "exact" if p.exact else "deterministic" if _deterministic(p) else f"[{_g(low)}, {_g(high)}]"
        row: list[Inline] = [_value(p.value), _g(mean), ci, str(p.samples.size), str(p.diverged)] if generic else []
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


def _claim_section(o: Outcome, images: Mapping[str, str | None], title: str, category: str,
                   twin: Outcome | None = None) -> Details:
    """A claim's section: collapsed when it passes, open when it fails (as expected or not) or is unexpected."""
    claim: Any = o.claim  # each kind reads its own fields
    blocks: list[Block] = [Bullets(_claim_facts(o, title, category))]
    bound = _claimed_bound(claim)
    texts = (claim.statement, claim.expect_reason, o.reason, getattr(bound, "note", ""))
    refs = [r for text in texts for r in plain(text or "")[1]]
    raw: list[Inline] = [[Span(str(claim.source), code=True)]]
    if refs:  # what plain() took out of the texts above, so nothing is lost
        raw.append(["The texts above cite the implementation spec (its sections §, items I, test problems P): ",
                    ", ".join(dict.fromkeys(refs))])
    blocks.append(Details("Raw references (paper file, implementation spec)", [Bullets(raw)]))
    if "hunt" in o.evidence:
        blocks += _hunt(o, images)
    image = images.get(claim.id)
    if image is not None:
        blocks.append(Image(image, f"{claim.id}: {claim.kind} plot"))
        blocks.append(Para(_plot_caption(o)))
    elif "hunt" not in o.evidence:
        blocks.append(Para("No plot: no grid point has a finite replica."))
    blocks += _grid_table(o)
    if twin is not None:
        blocks.append(Para([Span("Monte-Carlo check: ", bold=True), f"{twin.claim.id} reads these exact runs in this "
                            f"profile ({twin.verdict}, as expected); it draws its own replicas in the full profile."]))
    summary: list[str | Span] = [Span(claim.id, code=True), f" - {claim.title} ", _badge(category)]
    return Details(summary, blocks, open=category not in (counts.PASS, counts.TWIN, counts.OBSERVATION),
                   anchor=_anchor("claim", claim.id), cls="claim")


def _plot_caption(o: Outcome) -> str:
    text = _drawn(o.claim).view().caption(_as_drawn(o))
    if o.observation:
        text += " An observation: the number is reported, with no verdict."
    return text


def _theorem_section(t: Theorem, title: str = "") -> list[Block]:
    blocks: list[Block] = [
        Heading(3, [Span(t.id, code=True), f" - {t.title}"], anchor=_anchor("theorem", t.id)),
        Bullets([
            [Span("Source: ", bold=True), readable_source(t.source, title)],
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
            table.rows.append([c.name, formula(c.relation), readable_source(c.source, title), c.note])
        blocks.append(table)
    blocks.append(Para(Span("Bound versions", bold=True)))
    table = Table(["version", "bound", "source", "note"])
    for b in t.bounds:
        table.rows.append([Span(b.version, bold=True), formula(b.expr), readable_source(b.source, title), b.note])
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


def _toc(entries: Sequence[tuple[str, str]], claims: Sequence[Outcome]) -> Details:
    items: list[Inline] = [Span(text, fragment=anchor) for text, anchor in entries]
    claim_links: list[Inline] = [Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)) for o in claims]
    return Details("Contents", [Bullets(items), Details(f"Every claim ({len(claims)})", [Bullets(claim_links)])],
                   open=True, cls="toc")


def _paper_page(paper: str, group: Sequence[Outcome], module: Paper | None,
                images: Mapping[str, str | None], profile: Profile, provenance: Sequence[Inline],
                figures: Sequence[tuple[str, str, str]] = (), twin_ids: Mapping[str, str] | None = None) -> list[Block]:
    title = module.title if module is not None else paper
    twin_ids = dict(twin_ids if twin_ids is not None else counts.twins(group))
    tally = counts.tally(group, twin_ids)
    cats = tally.categories
    by_id = {o.claim.id: o for o in group}
    twin_of = {exact: by_id[t] for t, exact in twin_ids.items() if t in by_id and cats[t] == counts.TWIN}
    shown = [o for o in group if cats[o.claim.id] != counts.TWIN]
    head: list[Inline] = [[Span("Paper: ", bold=True), readable_source(module.seed, title) if module else paper]]
    head += [[Span("Summary: ", bold=True), tally.sentence()], [Span("Back to the index", page="index")]]
    unexpected = [o for o in group if cats[o.claim.id] == counts.UNEXPECTED]
    controls = [o for o in group if cats[o.claim.id] == counts.CONTROL]
    attention = [o for o in shown if cats[o.claim.id] != counts.PASS and cats[o.claim.id] != counts.OBSERVATION]
    passing = [o for o in shown if cats[o.claim.id] == counts.PASS]
    extra = module.report_sections if module is not None else None
    extras = list(extra(group) if extra else [])
    theorems = _theorems(group, module)
    sections = [("Errata", "errata")] + ([("Unexpected verdicts", "unexpected")] if unexpected else [])
    sections += [("Verdicts", "verdicts"), ("Observations", "observations"), ("Claims", "claims")]
    sections += [(heading, _anchor("section", heading)) for heading, _ in extras]
    sections += [(t, _anchor("figure", t)) for t, _, _ in figures]
    sections += [("Theorems", "theorems")] if theorems else []
    sections += [("Provenance", "provenance")]
    blocks: list[Block] = [Heading(1, title), Bullets(head), _toc(sections, shown),
                           Heading(2, f"Errata confirmed by a claim ({tally[counts.ERRATUM]})" + (
                               f" and not checkable ({len(module.unchecked_errata)})"
                               if module is not None and module.unchecked_errata else ""), anchor="errata"),
                           *_errata_table(group, cats, title, module.unchecked_errata if module else (),
                                           module.seed if module else "")]
    if extras and any("errat" in h.lower() for h, _ in extras):
        heading = next(h for h, _ in extras if "errat" in h.lower())
        blocks.append(Para(["Every erratum the paper's specification lists, checkable or not, with the reason: ",
                            Span(heading, fragment=_anchor("section", heading)), "."]))
    if unexpected:
        blocks += [Heading(2, "Unexpected verdicts", anchor="unexpected"), _verdict_table(unexpected, cats)]
    blocks += [Heading(2, "Verdicts", anchor="verdicts"), Bullets(legend())]
    if attention:
        blocks.append(Para(Span(f"Failing, unexpected and negative controls ({len(attention)}; "
                                f"{len(controls)} negative controls)", bold=True)))
        blocks.append(_verdict_table(attention, cats))
    if passing:
        blocks.append(Details(f"Passing claims ({len(passing)})", [_verdict_table(passing, cats)]))
    blocks += [Heading(2, "Observations", anchor="observations"), *_observations(group)]
    blocks.append(Heading(2, "Claims", anchor="claims"))
    blocks.append(Para("Passing claims are collapsed; failing, unexpected and negative-control claims are open."))
    for o in shown:
        blocks.append(_claim_section(o, images, title, cats[o.claim.id], twin_of.get(o.claim.id)))
    for heading, body in extras:
        blocks += [Heading(2, heading, anchor=_anchor("section", heading)), *markdown_blocks(body)]
    for fig_title, src, caption in figures:
        blocks += [Heading(2, fig_title, anchor=_anchor("figure", fig_title)), Image(src, fig_title), Para(caption)]
    if theorems:
        blocks.append(Heading(2, "Theorems", anchor="theorems"))
        for t in theorems:
            blocks += _theorem_section(t, title)
    blocks += [Heading(2, "Provenance", anchor="provenance"), Bullets(list(provenance))]
    return blocks
