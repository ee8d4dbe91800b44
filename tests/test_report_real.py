"""The real report (issue #18): every registered claim of the quick profile, checked once per module from
a run cache (RATECHECK_REPORT_CACHE, default .ratecheck-cache in the checkout: the first run fills it).

Asserts that the counts agree between the index, the paper pages, the CLI's summary line and
``check --json`` (one counting function, ratecheck.report.counts), and walks every figure of the report:
its y axis names the claim's own quantity, it has as many legend entries as drawn series, and no
single-point plot is drawn. The browser tests (tests/test_report_browser.py) load the same pages."""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
from pathlib import Path

import matplotlib
import pytest

from ratecheck.interfaces import cli
from ratecheck.report import counts
from ratecheck.report.command import write
from ratecheck.report.plots import _drawn, _figure

pytestmark = pytest.mark.claims  # decides every registered claim

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("RATECHECK_REPORT_CACHE", ROOT / ".ratecheck-cache"))


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory):
    """(outcomes, report directory, CLI text, CLI JSON) of one cached check of every registered claim."""
    reports = tmp_path_factory.mktemp("reports")
    args = cli.build_parser().parse_args(["report", "--cache-dir", str(CACHE), "--jobs", "1",
                                          "--report-dir", str(reports)])
    profile, outcomes, seconds = cli._outcomes(args)
    write(args, profile, outcomes, seconds)
    text, data = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(text):
        cli.main(["check", "--no-report", "--cache-dir", str(CACHE), "--jobs", "1"])
    with contextlib.redirect_stdout(data):
        cli.main(["check", "--no-report", "--json", "--cache-dir", str(CACHE), "--jobs", "1"])
    return outcomes, reports, text.getvalue(), json.loads(data.getvalue())


def _numbers(sentence: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", sentence)]


def test_counts_agree_between_index_pages_cli_and_json(real):
    outcomes, reports, text, data = real
    tally = counts.tally(outcomes)
    sentence = tally.sentence()
    index = (reports / "index.html").read_text(encoding="utf-8")
    assert html.escape(sentence) in index
    assert sentence in " ".join(text.split())  # the CLI's summary (wrapped to the terminal) is the same sentence
    assert data["counts"] == tally.to_dict()
    assert tally.claims == sum(1 for c in tally.categories.values() if c not in (counts.OBSERVATION, counts.TWIN))
    # each paper page states its own tally, and the pages add up to the index
    total = [0] * len(_numbers(sentence))
    for paper in {o.claim.paper for o in outcomes}:
        group = [o for o in outcomes if o.claim.paper == paper]
        mine = counts.tally(group, counts.twins(outcomes)).sentence()
        assert html.escape(mine) in (reports / f"{paper}.html").read_text(encoding="utf-8")
        nums = _numbers(mine)
        nums += [0] * (len(total) - len(nums))  # a page without twins omits their count
        total = [a + b for a, b in zip(total, nums)]
    assert total == _numbers(sentence)
    # the JSON's per-claim flags agree with the categories
    by_id = {c["claim"]: c for c in data["claims"]}
    for cid, category in tally.categories.items():
        assert by_id[cid]["erratum"] == (category == counts.ERRATUM) or category == counts.UNEXPECTED


def test_errata_and_unexpected_are_one_click_from_the_index(real):
    outcomes, reports, _, _ = real
    index = (reports / "index.html").read_text(encoding="utf-8")
    for o in outcomes:
        if counts.category(o, counts.twins(outcomes)) in (counts.ERRATUM, counts.UNEXPECTED):
            anchor = "claim-" + re.sub(r"[^A-Za-z0-9_-]", "_", o.claim.id)
            assert f'href="{o.claim.paper}.html#{anchor}"' in index
            assert f'id="{anchor}"' in (reports / f"{o.claim.paper}.html").read_text(encoding="utf-8")


def test_every_figure_names_its_quantity_and_legends_its_series(real):
    outcomes, _, _, _ = real
    twin_ids = counts.twins(outcomes)
    drawn = 0
    for o in outcomes:
        if counts.category(o, twin_ids) == counts.TWIN:
            continue
        fig = _figure(o)
        if fig is None:
            continue
        try:
            drawn += 1
            ax = fig.axes[0]
            claim = _drawn(o.claim)
            label = ax.get_ylabel().replace("\n", " ")
            assert label and "claim summary" not in label, (o.claim.id, label)
            if claim.summary is None and not callable(getattr(claim, "draw_plot", None)):
                assert claim.measure in label or "rounds" in label or claim.view().ylabel(claim) in label, o.claim.id
            xs = {round(float(x), 12) for x in claim.view().x_values(o)}
            assert len(xs) >= 2, f"{o.claim.id}: a single-point plot"
            handles, labels = ax.get_legend_handles_labels()
            shown = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
            assert len(shown) == len(labels), o.claim.id
            for artist in ax.lines + ax.collections:  # every labelled series is in the legend
                lab = artist.get_label()
                if not lab.startswith("_"):
                    assert lab in labels, (o.claim.id, lab)
            _assert_inside(fig, o.claim.id)
        finally:
            matplotlib.pyplot.close(fig)
    assert drawn > 50


def _assert_inside(fig, claim_id: str) -> None:
    """Nothing drawn (tick labels, axis labels, title, legend) is clipped by the figure's edges."""
    fig.canvas.draw()  # labels are placed (below their tick labels) when the figure is drawn
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    boxes = [("axes and their labels", fig.axes[0].get_tightbbox(renderer))]
    boxes += [("legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    for what, box in boxes:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
            (claim_id, what, box, (width, height))


# -- in a real browser: headless Chromium (Debian package chromium + chromium-driver; .ci/run installs them)

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.path.exists(p)), None)
DRIVER = "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None
browser = pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                             reason="headless Chromium not installed (apt-get install chromium chromium-driver; "
                                    ".ci/run installs it, so these tests run in CI)")

PAGE_FACTS = """
const body = parseFloat(getComputedStyle(document.body).fontSize);
const errata = document.getElementById('errata');
return {
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  broken_images: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
  small_math: [...document.querySelectorAll('math')].filter(
      m => parseFloat(getComputedStyle(m).fontSize) < body - 0.01).length,
  maths: document.querySelectorAll('math').length,
  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  errata_top: errata ? errata.getBoundingClientRect().top : null,
  screen: window.innerHeight,
};
"""


@pytest.fixture(scope="module")
def chrome():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is a test dependency ([test] extra)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)  # the system driver, never a download
    yield driver
    driver.quit()


@browser
@pytest.mark.parametrize("width", [1400, 800])
def test_pages_in_a_real_browser(real, chrome, width):
    outcomes, reports, _, _ = real
    pages = ["index.html"] + sorted(f"{p}.html" for p in {o.claim.paper for o in outcomes})
    ids = {}
    links = {}
    for page in pages:
        chrome.set_window_size(width, 900)
        chrome.get((reports / page).as_uri())
        facts = chrome.execute_script(PAGE_FACTS)
        assert facts["overflow"] <= 0, f"{page} at {width}px: the body overflows by {facts['overflow']}px"
        assert not facts["broken_images"], f"{page}: images that do not load: {facts['broken_images'][:5]}"
        assert facts["small_math"] == 0, f"{page}: {facts['small_math']} formulas below the body's font size"
        if page != "index.html":
            assert facts["errata_top"] is not None and facts["errata_top"] < facts["screen"], \
                f"{page} at {width}px: the errata table starts at {facts['errata_top']}px, below the first screen"
        ids[page] = set(facts["ids"])
        links[page] = facts["links"]
    for page, hrefs in links.items():
        for href in hrefs:
            if href.startswith(("http://", "https://", "mailto:")):
                continue
            target, _, fragment = href.partition("#")
            target = target or page
            assert (reports / target).exists(), f"{page}: link to a missing file {href}"
            if fragment and target in ids:
                assert fragment in ids[target], f"{page}: link to a missing anchor {href}"
