"""write_report: the pages and figures of a report into a directory (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..claims import Outcome, Profile
from ..paper import Paper
from . import FIGURE_FORMATS, counts
from .document import render_html, render_markdown
from .format import _safe
from .index import _index_page, provenance
from .pages import _group, _paper_page
from .plots import extra_figures, paper_figures, plot_all
from .provenance import Clock, gather
from .single import write_single


def write_report(
    outcomes: Sequence[Outcome],
    out_dir: str | Path,
    *,
    profile: Profile,
    papers: Mapping[str, Paper] | None = None,
    meta: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    figures: Sequence[str] = ("svg",),
    single_file: bool = False,
) -> Path:
    """Write the Markdown/HTML report of ``outcomes`` into ``out_dir``; returns the path of index.html.

    Claim plots are drawn by ``jobs`` processes (default: all cores), saved in each of ``figures``
    (the HTML shows the SVG; the Markdown the PNG when one is written, else the SVG; a PDF is for a
    paper's appendix). SVG only by default: a PNG costs about twice an SVG's CPU (issue #19 item 5).
    ``papers`` maps a paper key to its Paper (title, seed, theorems, report hooks); without it a paper page
    lists the theorems its claims use. ``meta`` entries (wall time, jobs, ...) join the provenance block
    on every page. ``single_file`` also writes report.html: every page and figure in one file.
    """

    clock = Clock()
    bad = [f for f in figures if f not in FIGURE_FORMATS]
    if bad or not figures:
        raise ValueError(f"figures: {bad or list(figures)} not among {', '.join(FIGURE_FORMATS)}")
    formats = tuple(dict.fromkeys(["svg", *figures]))  # the HTML needs the SVG
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    papers = dict(papers or {})
    info = gather(outcomes, profile, dict(meta or {}))

    groups = _group(outcomes)
    twin_ids = counts.twins(outcomes)
    stems: dict[str, str] = {}
    for paper in groups:
        stem = _safe(paper)
        # a paper called "index" must not overwrite the summary page; two keys must not share a file
        while stem in ("index", "report") or stem in stems.values():
            stem += "_"
        stems[paper] = stem

    shown = [(paper, o) for paper, group in groups.items() for o in group
             if counts.category(o, twin_ids) != counts.TWIN]
    tasks = [(o, out / stems[paper] / _safe(o.claim.id), formats) for paper, o in shown]
    # extra figures (a hunt's best run against its bound): images keyed "<claim id>:<name>"
    extra = [(o, out / stems[paper] / f"{_safe(o.claim.id)}_{name}", formats, name, f"{o.claim.id}:{name}")
             for paper, o in shown for name in extra_figures(o)]
    done = plot_all(tasks + [task[:4] for task in extra], jobs)
    drawn = {o.claim.id: f"{path.parent.name}/{path.name}.svg" for (o, path, _), ok in zip(tasks, done) if ok}
    drawn.update({key: f"{path.parent.name}/{path.name}.svg"
                  for (_, path, _, _, key), ok in zip(extra, done[len(tasks):]) if ok})
    pages: dict[str, tuple[str, list]] = {}
    for paper, group in groups.items():
        stem = stems[paper]
        images = {key: src for key, src in drawn.items() if src.startswith(f"{stem}/")}
        module = papers.get(paper)
        with np.errstate(all="ignore"):  # a paper's figure of diverged runs draws what it can
            figs = paper_figures(module, group, out, stem, formats)
        info["report"] = clock.text() + " so far (drawing and writing this report)"
        blocks = _paper_page(paper, group, module, images, profile, provenance(info), figs, twin_ids)
        pages[stem] = (module.title if module is not None else paper, blocks)
    info["report"] = clock.text() + " (drawing and writing this report)"
    pages["index"] = ("ratecheck report", _index_page(groups, stems, papers, provenance(info), twin_ids))
    for stem, (title, blocks) in pages.items():
        (out / f"{stem}.md").write_text(render_markdown(blocks, png="png" in formats), encoding="utf-8")
        (out / f"{stem}.html").write_text(render_html(blocks, title), encoding="utf-8")
    if single_file:

        write_single(out, pages)
    return out / "index.html"
