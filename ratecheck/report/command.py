"""The report's CLI: ``--figures`` and ``--single-file`` of ``check``/``report``, where a report is
written (a subset never overwrites the full report), and ``ratecheck export latex PAPER``.
cli.py only registers these; they live here to keep it small."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import FIGURE_FORMATS

SUBSETS = "subsets"  # a subset's report: <report dir>/subsets/<pattern>/, beside the full one


def add_options(p: argparse.ArgumentParser) -> None:
    """The report options of ``check`` and ``report``."""
    p.add_argument("--figures", default="svg", type=_formats, metavar="FORMATS",
                   help="figure formats, comma-separated, from svg, png, pdf (default svg, shown by the HTML and the "
                        "Markdown; png adds a PNG twin the Markdown then shows; pdf, vector figures a paper can include)")
    p.add_argument("--single-file", action="store_true",
                   help="also write report.html: every page in one self-contained file, figures inlined")


def _formats(text: str) -> tuple[str, ...]:

    formats = tuple(f.strip().lower() for f in text.split(",") if f.strip())
    bad = [f for f in formats if f not in FIGURE_FORMATS]
    if bad or not formats:
        raise argparse.ArgumentTypeError(f"--figures {text!r}: each format must be one of {', '.join(FIGURE_FORMATS)}")
    return formats


def report_dir(args: argparse.Namespace) -> Path:
    """The full report's directory, or for a subset (a pattern) its own folder under it."""
    base = Path(args.report_dir)
    pattern = getattr(args, "pattern", None)
    if not pattern:
        return base
    return base / SUBSETS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", pattern).strip("_.") or "subset")


def write(args: argparse.Namespace, profile: Any, outcomes: Sequence[Any], seconds: float) -> Path:
    """Write the report of a check (``check`` and ``report`` call this)."""
    # start-up: the CLI imports this module to register options; the writer loads sympy and matplotlib
    from .. import registry
    from . import write_report

    meta = {"check": f"{seconds:.1f} s wall (runs and verdicts)", "jobs": args.jobs or "all cores"}
    if getattr(args, "pattern", None):
        meta["subset"] = f"claims matching {args.pattern!r} (the full report is in {args.report_dir})"
    return write_report(outcomes, report_dir(args), profile=profile, papers=registry.papers(), meta=meta,
                        jobs=args.jobs, figures=getattr(args, "figures", ("svg",)),
                        single_file=getattr(args, "single_file", False))


def register_export(sub: Any, add_paper_option: Callable[[argparse.ArgumentParser], None],
                    outcomes: Callable[[argparse.Namespace], Any], default_cache: str,
                    usage_error: type[Exception] = ValueError) -> None:
    """``ratecheck export latex PAPER``: a LaTeX table of the paper's claims and verdicts, with PDF figures
    (the verdicts come from the cache; what it lacks is run, serially unless --jobs)."""
    p = sub.add_parser("export", help="export a paper's verdicts for an appendix: `export latex PAPER`")
    p.add_argument("format", choices=("latex",), help="latex: a table (booktabs, longtable) and PDF figures")
    p.add_argument("paper_key", metavar="PAPER", help="paper key (see `ratecheck list`)")
    p.add_argument("--out", default="export", help="output directory (default export)")
    p.add_argument("--full", action="store_true", help="full profile (default quick)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for runs the cache lacks (default 1)")
    p.add_argument("--cache-dir", default=default_cache, help=f"run cache (default {default_cache})")
    p.add_argument("--no-cache", action="store_true", help="ignore the cache")
    add_paper_option(p)
    p.set_defaults(dask=None, dask_local=False, force_jobs=False, json=True)

    def run(args: argparse.Namespace) -> int:
        # start-up, as in write(): the export loads matplotlib only when it runs
        from .. import registry
        from .latex_export import write_latex

        papers = registry.papers()
        key = args.paper_key
        if key not in papers:  # the CLI's usage error: one line, exit status 2
            raise usage_error(f"export: paper {key!r} is not registered (known: {', '.join(sorted(papers))})")
        args.pattern = key
        _, found, _ = outcomes(args)
        mine = [o for o in found if o.claim.paper == key]
        path = write_latex(mine, papers[key], Path(args.out), jobs=args.jobs)
        print(f"latex: {path}")
        return 0

    p.set_defaults(func=run)
