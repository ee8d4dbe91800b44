"""``ratecheck export latex PAPER``: a paper's claims and verdicts as a LaTeX table (booktabs, longtable)
with the claims' figures as vector PDFs, for an appendix. Counts come from ratecheck.report.counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import counts
from .format import BADGES, _safe, readable_source
from .plots import plot_all

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def tex(text: Any) -> str:
    """Plain text as LaTeX (special characters escaped)."""
    return "".join(_SPECIAL.get(ch, ch) for ch in " ".join(str(text).split()))


def write_latex(outcomes: Sequence[Any], paper: Any, out: Path, jobs: int | None = 1) -> Path:
    """Write out/<paper>.tex (a longtable of the claims, then one figure per drawn claim) and the figures
    as out/<paper>/<claim>.pdf; returns the .tex path. Needs booktabs, longtable and graphicx."""

    out.mkdir(parents=True, exist_ok=True)
    twin_ids = counts.twins(outcomes)
    tally = counts.tally(outcomes, twin_ids)
    shown = [o for o in outcomes if tally.categories[o.claim.id] != counts.TWIN]
    stem = _safe(paper.key)
    tasks = [(o, out / stem / _safe(o.claim.id), ("pdf",)) for o in shown]
    drawn = plot_all(tasks, jobs)
    lines = [
        f"% ratecheck export latex {paper.key}: {tex(tally.sentence())}",
        r"% needs \usepackage{booktabs,longtable,graphicx}",
        r"\begin{longtable}{@{}p{0.24\linewidth}p{0.30\linewidth}p{0.16\linewidth}p{0.22\linewidth}@{}}",
        rf"\caption{{{tex(paper.title)}: claims checked by ratecheck. {tex(tally.sentence())}}}\\",
        r"\toprule claim & statement & verdict & source \\ \midrule \endfirsthead",
        r"\toprule claim & statement & verdict & source \\ \midrule \endhead",
        r"\bottomrule \endfoot",
    ]
    for o in shown:
        status = BADGES[tally.categories[o.claim.id]][0]
        lines.append(rf"\texttt{{{tex(o.claim.id)}}} & {tex(o.claim.title)} & {tex(o.verdict)} "
                     rf"({tex(status)}) & {tex(readable_source(o.claim.source, paper.title))} \\")
    lines.append(r"\end{longtable}")
    for (o, path, _), ok in zip(tasks, drawn):
        if ok:
            lines += [r"\begin{figure}[htbp]\centering",
                      rf"\includegraphics[width=0.8\linewidth]{{{path.parent.name}/{path.name}.pdf}}",
                      rf"\caption{{\texttt{{{tex(o.claim.id)}}}: {tex(o.claim.title)} "
                      rf"({tex(o.verdict)}, expected {tex(o.expected)}).}}", r"\end{figure}"]
    target = out / f"{stem}.tex"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target
