"""ratecheck.report: Markdown and HTML reports of claim outcomes, with one plot per claim.

``write_report`` writes into ``out_dir``::

    index.md, index.html          what failed and why (unexpected, errata, controls), one row per paper
    <paper>.md, <paper>.html      errata first, verdicts, one section per claim, the theorems, provenance
    <paper>/<claim_id>.svg/.png   one plot per claim (the id's dots replaced by underscores); .pdf on request
    report.html                   with ``single_file``: every page in one file, figures inlined

Both formats are rendered from one small document model (blocks of inline spans), so they always carry
the same content; long sympy formulas are MathML in HTML (browsers render it natively) and code in
Markdown. Every number shown comes from the outcomes and theorems passed in. A claim's plot layers,
axis labels, caption, table columns and facts come from its pieces (``claim.view()``,
ratecheck.claims.views), never from a branch on its kind: slopes draw their tolerance band (one-sided
for one-sided claims), hitting times are labelled as rounds to a threshold, rates are drawn on a linear
round axis, and an observation draws the plot of the claim it reads. Expected FAILs are not painted as failures,
deterministic points say so instead of a zero-width CI, and a bound equal to 0 is noted on a log axis.

Modules: counts.py (the one counting function), document.py (the document model and its two renderers),
format.py (numbers, anchors, badges, readable sources), plots.py (the frame of each claim's plot, paper
figures, parallel drawing), pages.py (the paper pages), index.py (the index), provenance.py, single.py
(--single-file), latex_export.py (`ratecheck export latex`), command.py (the CLI's options), write.py
(write_report).
"""

from __future__ import annotations

import importlib
from typing import Any

# write_report, and the document model for paper modules and tests; imported when first used, so the
# CLI (which registers the report's options) does not pay for sympy or matplotlib at start-up
__all__ = ["Bullets", "Details", "Heading", "Image", "Para", "Span", "Table", "formula", "markdown_blocks",
           "paper_figures", "plot_all", "render_html", "render_markdown", "write_report"]

FIGURE_FORMATS = ("svg", "png", "pdf")

_HOME = {"paper_figures": "plots", "plot_all": "plots", "write_report": "write"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOME.get(name, 'document')}", __name__), name)
