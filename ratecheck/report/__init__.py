"""ratecheck.report: Markdown and HTML reports of claim outcomes, with one plot per claim.

``write_report`` writes into ``out_dir``::

    index.md, index.html          summary: one row per paper, the profile, the date and ``meta``
    <paper>.md, <paper>.html      verdicts, confirmed errata, one section per claim, the theorems
    <paper>/<claim_id>.png        one plot per claim (the id's dots replaced by underscores)

Both formats are rendered from one small document model (blocks of inline spans), so they always carry
the same content; long sympy formulas are MathML in HTML (browsers render it natively) and code in
Markdown. Every number shown comes from the outcomes and theorems passed in. A claim's plot layers,
axis labels, caption, table columns and facts come from its pieces (``claim.view()``,
ratecheck.claims.views), never from a branch on its kind: slopes draw their tolerance band (one-sided
for one-sided claims), hitting times are labelled as rounds to a threshold, rates are drawn on a linear
round axis, and an observation draws the plot of the claim it reads. Expected FAILs are not painted as failures,
deterministic points say so instead of a zero-width CI, and a bound equal to 0 is noted on a log axis.

Modules: document.py (the document model and its two renderers), format.py (numbers, anchors,
badges), plots.py (the frame of each claim's plot, paper figures, parallel drawing), pages.py (the index and
the paper pages); this module writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..claims import Outcome, Profile
from ..paper import Paper
from .document import (
    Bullets,
    Heading,
    Image,
    Para,
    Span,
    Table,
    formula,
    markdown_blocks,
    render_html,
    render_markdown,
)
from .format import _safe
from .pages import _group, _index_page, _paper_page
from .plots import extra_figures, paper_figures, plot_all

# write_report, and the document model for paper modules and tests
__all__ = ["Bullets", "Heading", "Image", "Para", "Span", "Table", "formula", "markdown_blocks",
           "paper_figures", "plot_all", "render_html", "render_markdown", "write_report"]


# ---------------------------------------------------------------------------------------------
# Entry point


def write_report(
    outcomes: Sequence[Outcome],
    out_dir: str | Path,
    *,
    profile: Profile,
    papers: Mapping[str, Paper] | None = None,
    meta: Mapping[str, Any] | None = None,
    jobs: int | None = None,
) -> Path:
    """Write the Markdown/HTML report of ``outcomes`` into ``out_dir``; returns the path of index.html.

    Claim plots are drawn by ``jobs`` processes (default: all cores).
    ``papers`` maps a paper key to its Paper (title, seed, theorems, report hooks); without it a paper page lists the
    theorems its claims use. ``meta`` entries (wall time, version, ...) are shown on the index.
    """
    from .. import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    papers = dict(papers or {})
    meta = dict(meta or {})
    meta.setdefault("ratecheck", __version__)
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    groups = _group(outcomes)
    stems: dict[str, str] = {}
    for paper in groups:
        stem = _safe(paper)
        # a paper called "index" must not overwrite the summary page; two keys must not share a file
        while stem == "index" or stem in stems.values():
            stem += "_"
        stems[paper] = stem

    tasks = [(o, out / stems[paper] / f"{_safe(o.claim.id)}.png") for paper, group in groups.items() for o in group]
    # extra figures (a hunt's best run against its bound): images keyed "<claim id>:<name>"
    extra = [(o, out / stems[paper] / f"{_safe(o.claim.id)}_{name}.png", name, f"{o.claim.id}:{name}")
             for paper, group in groups.items() for o in group for name in extra_figures(o)]
    done = plot_all(tasks + [task[:3] for task in extra], jobs)
    drawn = dict(zip((id(o) for o, _ in tasks), done))
    extra_drawn = {key: f"{path.parent.name}/{path.name}" for (_, path, _, key), ok in zip(extra, done[len(tasks):]) if ok}
    for paper, group in groups.items():
        stem = stems[paper]
        images = {o.claim.id: (f"{stem}/{_safe(o.claim.id)}.png" if drawn[id(o)] else None) for o in group}
        images.update({key: src for key, src in extra_drawn.items() if src.startswith(f"{stem}/")})
        module = papers.get(paper)
        figures = paper_figures(module, group, out, stem)
        blocks = _paper_page(paper, group, module, images, profile, generated, figures)
        title = module.title if module is not None else paper
        (out / f"{stem}.md").write_text(render_markdown(blocks), encoding="utf-8")
        (out / f"{stem}.html").write_text(render_html(blocks, title), encoding="utf-8")

    blocks = _index_page(groups, stems, papers, profile, meta, generated)
    (out / "index.md").write_text(render_markdown(blocks), encoding="utf-8")
    (out / "index.html").write_text(render_html(blocks, "ratecheck report"), encoding="utf-8")
    return out / "index.html"

