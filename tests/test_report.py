"""Tests of ratecheck.report on hand-built outcomes (no simulation runs).

A tiny theorem y <= c * a / x with two bound versions ('printed' c = 1, 'corrected' c = 4) and
synthetic replicas with mean 2 a / x: the corrected bound holds, the printed one fails (a registered
erratum). Every random input comes from an explicitly seeded numpy Generator.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
import sympy as sp

from ratecheck.claims import (
    BoundClaim,
    ExpectedOrder,
    LimitClaim,
    Outcome,
    PointResult,
    Profile,
    SlopeClaim,
    Verdict,
)
from ratecheck.paper import Paper
from ratecheck.report import write_report
from ratecheck.theory import Bound, Condition, Source, Theorem
from ratecheck.trace import RunConfig

PAPER = "toy"
GRID = (1.0, 2.0, 4.0, 8.0, 16.0)
REPLICAS = 16
PROFILE = Profile("quick", replicas=REPLICAS)

a, x = sp.symbols("a x", positive=True)
SRC = Source("toy.txt", "Theorem 1")
THEOREM = Theorem(
    id="toy.theorem1",
    title="Toy theorem <y> & friends",  # characters that must be escaped in HTML
    source=SRC,
    measure="y",
    constants=(a,),
    parameters=(x,),
    conditions=(Condition("x >= 2", x >= 2, SRC),),  # violated at x = 1 on purpose
    bounds=(
        Bound("printed", a / x, SRC, "drops the factor 4 of the proof"),
        Bound("corrected", 4 * a / x, SRC, "what the proof shows"),
        # equal to 'corrected' on every grid point, and a fourth version: exercises every line style
        Bound("general", 4 * a * x / x**2, SRC, "general form"),
        Bound("loose", 10 * a / x, SRC, "a loose version"),
    ),
    assumptions=("A1 toy smoothness",),
)


def configure(value: float, profile: Profile) -> RunConfig:
    return RunConfig("toy_alg", {"x": value}, "quadratic", {}, rounds=10, replicas=profile.replicas)


def bindings(config: RunConfig, trace=None) -> dict[str, float]:
    return {"a": 1.0, "x": float(config.params["x"])}


COMMON = dict(paper=PAPER, source=SRC, vary="x", grid={"quick": GRID}, configure=configure, measure="y")


def points(rng: np.random.Generator, exponent: float, scale: float, theorem: bool = True) -> list[PointResult]:
    """Replicas scale * x**exponent * lognormal noise (mean-one noise, so the mean follows the law)."""
    out = []
    for v in GRID:
        noise = np.exp(0.2 * rng.standard_normal(REPLICAS) - 0.02)
        config = configure(v, PROFILE)
        evaluation = THEOREM.evaluate(bindings(config), use_schedule=False) if theorem else None
        out.append(PointResult(v, config, scale * v**exponent * noise, diverged=0, evaluation=evaluation))
    return out


def decided(claim, pts: list[PointResult]) -> Outcome:
    # the claim's own decision rule, so the evidence has exactly the shape the report gets in real runs
    verdict, reason, evidence = claim._decide(pts)
    return Outcome(claim, verdict, reason, evidence, pts)


SLOPE = SlopeClaim(
    id="toy.slope",
    title="Rate in x",
    statement="y falls like 1/x.",
    expected=ExpectedOrder(THEOREM, "x", "corrected"),
    theorem=THEOREM,
    bindings=bindings,
    require_conditions=False,
    **COMMON,
)
SLOPE_EARLY = SlopeClaim(
    id="toy.slope_early",
    title="Rate in x, regime not reached",
    statement="y falls like 1/x once x is large.",
    expected=ExpectedOrder(value=-1.0, why="by hand"),
    **COMMON,
)
BOUND_OK = BoundClaim(
    id="toy.bound_corrected", title="Corrected bound", statement="y <= 4a/x.", version="corrected",
    theorem=THEOREM, bindings=bindings, **COMMON,
)
BOUND_ERRATUM = BoundClaim(
    id="toy.bound_printed", title="Printed bound", statement="y <= a/x.", version="printed",
    theorem=THEOREM, bindings=bindings, expect=Verdict.FAIL,
    expect_reason="erratum: the printed bound lacks the factor 4", **COMMON,
)
LIMIT = LimitClaim(
    id="toy.limit", title="Converges to x*", statement="The iterate converges to x* = 0.",
    target=lambda config: np.zeros(2), tolerance=0.05, **COMMON,
)


def limit_outcome(rng: np.random.Generator) -> Outcome:
    pts = []
    for v in GRID:
        final = 0.01 / v + 0.01 * rng.standard_normal((REPLICAS, 2))
        per_replica = np.linalg.norm(final, axis=1)
        dist = float(np.linalg.norm(final.mean(axis=0)))
        stats = {"distance": dist, "low": dist * 0.5, "high": dist * 1.5 + 0.005}
        pts.append(PointResult(v, configure(v, PROFILE), per_replica, 0, stats=stats))
    return decided(LIMIT, pts)


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    rng = np.random.default_rng(20240511)
    slope = decided(SLOPE, points(rng, -1.0, 2.0))
    # INCONCLUSIVE before any fit (as Claim.decide does for a failed precheck): evidence is empty, and
    # one grid point lost all replicas; expected PASS, so this one is UNEXPECTED
    early_pts = points(rng, -1.0, 2.0, theorem=False)
    early_pts[0] = PointResult(GRID[0], early_pts[0].config, np.empty(0), diverged=REPLICAS)
    early = Outcome(SLOPE_EARLY, Verdict.INCONCLUSIVE, "too few non-diverged replicas at x=1", {}, early_pts)
    bound_ok = decided(BOUND_OK, points(rng, -1.0, 2.0))
    bound_bad = decided(BOUND_ERRATUM, points(rng, -1.0, 2.0))
    return [slope, early, bound_ok, bound_bad, limit_outcome(rng)]


@pytest.fixture(scope="module")  # drawn by forked workers (jobs = cores); the tests' other reports draw here (jobs=1)
def report(outcomes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    module = Paper(key=PAPER, title="Toy paper", seed="toy.txt", theorems=(THEOREM,))
    return write_report(outcomes, out / "rc", profile=PROFILE, papers={PAPER: module},
                        meta={"wall_seconds": 12.5, "ratecheck": "9.9.9"}, figures=("svg", "png"))


def section(md: str, title: str) -> str:
    """The text of a '## title' section of a Markdown page."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", md, flags=re.S | re.M)
    assert match, f"no section {title!r}"
    return match.group(1)


def test_synthetic_outcomes_have_the_intended_verdicts(outcomes):
    verdicts = {o.claim.id: o.verdict for o in outcomes}
    assert verdicts == {
        "toy.slope": Verdict.PASS,
        "toy.slope_early": Verdict.INCONCLUSIVE,
        "toy.bound_corrected": Verdict.PASS,
        "toy.bound_printed": Verdict.FAIL,
        "toy.limit": Verdict.PASS,
    }
    assert [o.claim.id for o in outcomes if o.erratum] == ["toy.bound_printed"]


def test_files_exist_and_plots_are_images(report, outcomes):
    out = report.parent
    assert report == out / "index.html"
    for name in ("index.md", "index.html", f"{PAPER}.md", f"{PAPER}.html"):
        assert (out / name).is_file(), name
    for o in outcomes:
        png = out / PAPER / (o.claim.id.replace(".", "_") + ".png")
        image = mpimg.imread(png)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 300, (png, image.shape)
        svg = png.with_suffix(".svg").read_text()  # the HTML's figure: vector, its text kept as text
        assert svg.startswith("<?xml") and "<text" in svg


def test_paper_page_lists_claims_verdicts_and_status(report, outcomes):
    md = (report.parent / f"{PAPER}.md").read_text()
    table = section(md, "Verdicts")
    for o in outcomes:
        row = next(line for line in table.splitlines() if f"`{o.claim.id}`" in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        # the status comes right after the id, so it survives a narrow window
        assert cells[2:4] == [str(o.verdict), str(o.expected)], row
        status = "UNEXPECTED" if not o.ok else "erratum confirmed" if o.erratum else "pass"
        assert status in cells[1], row
        # the plot is embedded under the claim's section (the PNG in Markdown, the SVG in HTML)
        assert f"]({PAPER}/{o.claim.id.replace('.', '_')}.png)" in md
    assert "**UNEXPECTED**" in md  # toy.slope_early: expected PASS, measured INCONCLUSIVE
    assert "erratum confirmed" in md


def test_numbers_come_from_the_outcomes(report, outcomes):
    md = (report.parent / f"{PAPER}.md").read_text()
    slope = outcomes[0].evidence["fit"]
    assert f"slope {slope['slope']:+.4f}" in md
    # grid table: replica mean with 3 significant digits and the bound values of every version
    first = outcomes[2].points[0]
    assert f"| 1 | {np.mean(first.samples):.3g} |" in md
    assert f"{first.evaluation.bounds['corrected']:.3g}" in md
    # the condition x >= 2 is violated at x = 1 (margin 2/1) and marked so
    assert "**2 = 2/1 violated**" in md
    # the all-diverged grid point shows zero replicas used and the divergence count
    assert f"| 1 | nan | [nan, nan] | 0 | {REPLICAS} |" in md


def test_erratum_in_errata_section(report):
    md = (report.parent / f"{PAPER}.md").read_text()
    errata = section(md, "Errata confirmed by a claim (1)")
    assert "`toy.bound_printed`" in errata
    assert "printed bound" in errata.lower() or "Toy" in errata
    assert "toy.bound_corrected" not in errata
    # errata come before the verdicts, which come before the claims
    assert md.index("## Errata confirmed") < md.index("## Verdicts") < md.index("## Claims")
    claims = section(md, "Claims")
    assert "drops the factor 4 of the proof" in claims  # the bound's note, in the claim's section


def test_bound_claim_lists_every_bound_version(report):
    md = (report.parent / f"{PAPER}.md").read_text()
    claims = section(md, "Claims")
    start = claims.index("**`toy.bound_printed`")
    block = claims[start:claims.index("**`toy.", start + 4) if "**`toy." in claims[start + 4:] else None]
    assert "bound 'printed' (claimed)" in block and "bound 'corrected'" in block
    theorems = section(md, "Theorems")
    assert "bound 'general'" in block and "bound 'loose'" in block
    for version, note in (("printed", "drops the factor 4"), ("corrected", "what the proof shows"),
                          ("general", "general form"), ("loose", "a loose version")):
        assert version in theorems and note in theorems
    assert "A1 toy smoothness" in theorems
    assert "x >= 2" in theorems


def test_index_summary(report):
    md = (report.parent / "index.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith(f"| [**{PAPER}**]"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # claims, pass, errata, negative controls, unexpected, observations, Monte-Carlo checks
    assert cells[1:8] == ["5", "3", "1", "0", "**1**", "0", "0"], row
    assert f"({PAPER}.md)" in md
    assert "wall_seconds" in md and "12.5" in md and "quick" in md and "commit" in md and "numpy" in md
    # what failed comes first: unexpected verdicts, then errata, each linked to its claim
    assert md.index("## Unexpected verdicts") < md.index("## Confirmed errata") < md.index("## Papers")
    assert "toy.slope_early" in section(md, "Unexpected verdicts (1)")
    assert "toy.bound_printed" in section(md, "Confirmed errata (1)")


def test_html_is_escaped_and_coloured(report):
    page = (report.parent / f"{PAPER}.html").read_text()
    assert "Toy theorem &lt;y&gt; &amp; friends" in page and "<y>" not in page
    assert 'class="v-pass"' in page and 'class="v-inconclusive"' in page
    # the confirmed erratum is an expected FAIL: not painted as a failure, but as an erratum
    assert 'class="v-fail-expected"' in page and 'class="v-fail"' not in page and 'class="v-erratum"' in page
    assert '<table class="verdicts">' in page
    assert '<span class="v-unexpected"><strong>UNEXPECTED</strong></span>' in page
    assert '<img src="toy/toy_bound_printed.svg"' in page
    # passing claims collapsed, the erratum and the unexpected one open
    assert '<details id="claim-toy_slope" class="claim">' in page
    assert '<details id="claim-toy_bound_printed" class="claim" open>' in page
    assert 'href="#claim-toy_bound_printed"' in page and 'id="claim-toy_bound_printed"' in page
    index = (report.parent / "index.html").read_text()
    assert 'href="toy.html"' in index


def test_without_paper_modules_uses_the_claims_theorems(outcomes, tmp_path):
    path = write_report(outcomes[2:4], tmp_path, profile=PROFILE, figures=("png",), jobs=1)
    md = (tmp_path / f"{PAPER}.md").read_text()
    assert path == tmp_path / "index.html"
    assert "### `toy.theorem1`" in md
    assert "ratecheck" in (tmp_path / "index.md").read_text()  # the version is shown by default
    assert not math.isnan(mpimg.imread(tmp_path / PAPER / "toy_bound_corrected.png").mean())


def test_negative_control_is_not_listed_as_erratum(tmp_path):
    # expected to FAIL because of the algorithm, not the paper: OK, but no erratum
    control = dataclasses.replace(LIMIT, id="toy.control", expect=Verdict.FAIL, negative_control=True,
                                  tolerance=1e-4, expect_reason="a property of the algorithm")
    outcome = decided(control, limit_outcome(np.random.default_rng(7)).points)
    assert outcome.verdict == Verdict.FAIL and outcome.ok and not outcome.erratum
    write_report([outcome], tmp_path, profile=PROFILE, jobs=1)
    md = (tmp_path / f"{PAPER}.md").read_text()
    assert "negative control" in section(md, "Verdicts")
    assert "toy.control" not in section(md, "Errata confirmed by a claim (0)")
    assert "| 1 | 0 | 0 | 1 | 0 | 0 | 0 |" in (tmp_path / "index.md").read_text()


def test_paper_specific_sections_are_rendered():
    from ratecheck.report import Bullets, Para, Table, markdown_blocks

    blocks = markdown_blocks("Intro line\ncontinued.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n")
    assert isinstance(blocks[0], Para) and blocks[0].content == ["Intro line continued."]
    assert isinstance(blocks[1], Table) and blocks[1].header == [["a"], ["b"]] and blocks[1].rows == [[["1"], ["2"]]]
    assert isinstance(blocks[2], Bullets) and blocks[2].items == [["one"], ["two"]]
    bold = markdown_blocks("* **Head.** body with `code`")[0]  # no raw Markdown reaches the HTML
    assert isinstance(bold, Bullets) and bold.items[0][0].bold and bold.items[0][2].code


def test_paper_figures_hook_draws_and_embeds(tmp_path):
    from ratecheck.report import paper_figures

    def draw(ax):
        ax.plot([1, 2, 3], [3, 2, 1], label="line")

    module = Paper(key="toy", title="Toy", seed="toy.txt",
                   report_figures=lambda outcomes: [("A figure", draw, "caption text")])
    figures = paper_figures(module, [], tmp_path, "paper", ("png", "svg"))
    assert figures == [("A figure", "paper/figure_0.png", "caption text")]
    assert (tmp_path / "paper" / "figure_0.svg").is_file()
    assert (tmp_path / "paper" / "figure_0.png").stat().st_size > 1000
    assert paper_figures(Paper(key="toy", title="Toy", seed="toy.txt"), [], tmp_path, "paper") == []


def test_formulas_are_latex_with_the_papers_symbols_and_mathml_in_html():
    from ratecheck.report import Para, formula, render_html, render_markdown

    x, lam, etabar, lbar = sp.symbols("x lam etabar Lbar", positive=True)
    long = sum(sp.sqrt(x + k) / (k + 1) for k in range(8))
    span = formula(long)
    assert span.math is not None and "<mi>x</mi>" in span.math
    html_page = render_html([Para(span)], "t")
    assert 'class="formula"' in html_page and "<math" in html_page  # in a scrollable block
    assert "sqrt(" not in html_page and "**" not in html_page  # no sympy code in the HTML
    assert "`" in render_markdown([Para(span)])
    text = formula(lam * etabar / lbar).text  # the paper's symbols, not their names
    assert r"\lambda" in text and r"\bar{\eta}" in text and r"\bar{L}" in text and "lam " not in text


def test_observations_rates_and_deterministic_points_are_shown(tmp_path):
    from ratecheck.claims import Observation

    rng = np.random.default_rng(3)
    base = decided(LIMIT, limit_outcome(rng).points)
    obs = Observation(id="toy.obs", paper=PAPER, title="An observation", statement="s", source=LIMIT.source,
                      vary=LIMIT.vary, grid=LIMIT.grid, configure=LIMIT.configure, measure=LIMIT.measure,
                      quantity="a ratio", compute=lambda points, ev: {"ratio": 1.5e-7})
    o_obs = Outcome(obs, Verdict.OBSERVED, "observed a ratio: ratio = 1.5e-07",
                    {"observed": {"ratio": 1.5e-7}, "quantity": "a ratio"}, base.points)
    write_report([base, o_obs], tmp_path, profile=PROFILE, jobs=1)
    md = (tmp_path / f"{PAPER}.md").read_text()
    assert "toy.obs" in section(md, "Observations") and "ratio = 1.5e-07" in section(md, "Observations")
    assert "observation (no verdict)" in section(md, "Verdicts")


def test_single_file_and_latex_export(outcomes, tmp_path):
    from ratecheck.report.latex_export import write_latex

    module = Paper(key=PAPER, title="Toy paper", seed="toy.txt", theorems=(THEOREM,))
    write_report(outcomes, tmp_path / "rc", profile=PROFILE, papers={PAPER: module}, single_file=True, jobs=1)
    single = (tmp_path / "rc" / "report.html").read_text()
    assert single.count("<section") == 2 and 'src="data:image/svg+xml;base64,' in single  # figures inlined
    assert f'href="#{PAPER}--claim-toy_bound_printed"' in single and f'id="{PAPER}--claim-toy_bound_printed"' in single
    tex = write_latex(outcomes, module, tmp_path / "tex").read_text()
    assert r"\begin{longtable}" in tex and r"\texttt{toy.bound\_printed}" in tex and "erratum confirmed" in tex
    assert r"\includegraphics[width=0.8\linewidth]{toy/toy_bound_printed.pdf}" in tex
    assert (tmp_path / "tex" / "toy" / "toy_bound_printed.pdf").read_bytes().startswith(b"%PDF")


def test_unchecked_errata_are_rows_of_the_errata_table_not_claims(outcomes, tmp_path):
    from ratecheck.paper import Erratum

    unchecked = (Erratum("eq. (3)", "the server step has the wrong sign", "a typo in a formula no claim runs",
                         "§4.7 item 1"),)
    module = Paper(key=PAPER, title="Toy paper", seed="toy.txt", theorems=(THEOREM,), unchecked_errata=unchecked)
    out = write_report(outcomes, tmp_path / "rc", profile=PROFILE, papers={PAPER: module}, figures=("svg",), jobs=1)
    md = (out.parent / f"{PAPER}.md").read_text()
    errata = section(md, "Errata confirmed by a claim (1) and not checkable (1)")
    assert "`toy.bound_printed`" in errata  # the confirmed one first
    row = next(line for line in errata.splitlines() if "not checkable**" in line)
    assert "the server step has the wrong sign" in row and "a typo in a formula no claim runs" in row
    assert "implementation spec §4.7 item 1" in row
    assert errata.index("toy.bound_printed") < errata.index("not checkable**")
    assert "not counted" in errata
    from ratecheck.report import counts

    assert counts.tally(outcomes).sentence() in md  # the counts come from the claims alone


def test_every_seed_paper_lists_its_unchecked_errata_with_a_reason_and_spec_place():
    import importlib

    for key in ("defedavg", "simfbo", "fessgda", "fedbio", "strfedavg"):
        paper = importlib.import_module(f"proofs.{key}").PAPER
        assert paper.unchecked_errata, key
        for e in paper.unchecked_errata:
            assert e.where and e.what and e.why_not_checkable, (key, e)
            assert e.spec.startswith("§"), (key, e)  # the place in the paper's implementation spec


def test_spec_jargon_leaves_the_text_for_the_raw_references():
    from ratecheck.report.format import _one_line, plain

    assert plain("dimensionally wrong (spec §4.7 item 4)") == ("dimensionally wrong", ["spec §4.7 item 4"])
    assert plain("C6 (eta_v L_1 <= 1, spec §3.2) is needed") == ("C6 (eta_v L_1 <= 1) is needed", ["spec §3.2"])
    assert plain("holds (a + b <= 1, I10), at") == ("holds (a + b <= 1), at", ["I10"])
    assert plain("arrivals (spec pitfall 4): a") == ("arrivals: a", ["spec pitfall 4"])
    assert plain("Erratum I18: Algorithm 2") == ("Erratum: Algorithm 2", ["I18"])
    assert plain("x_Q of spec §6.3 with") == ("x_Q of the implementation spec §6.3 with", ["spec §6.3"])
    assert plain("as printed (§D.6, Table 1)") == ("as printed (§D.6, Table 1)", [])  # the paper's own places stay
    assert _one_line("wrong (spec §4.7 item 4)") == "wrong"


def test_each_decided_claim_states_its_power(report, outcomes):
    """Issue #23 item 1: the report shows, beside the reason, the smallest change the verdict would see."""
    from ratecheck.claims.power import read

    md = (report.parent / f"{PAPER}.md").read_text().replace("\\*", "*")  # Markdown escapes x*
    shown = [o for o in outcomes if read(o.evidence) is not None]
    assert shown, "the synthetic outcomes carry no power record"
    for o in shown:
        text = read(o.evidence).text().removeprefix("power: ")
        assert f"**Power:** {text}" in md, o.claim.id
    assert "COARSE" in md or not any(read(o.evidence).coarse for o in shown)
