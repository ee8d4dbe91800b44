"""The docs extension: a page naming a parameter that does not exist fails the build (warnings are
errors in CI), and a described algorithm's parameters become link targets."""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from ratecheck.docs_ext import escape

CONF = 'extensions = ["myst_parser", "ratecheck.docs_ext"]\nnitpicky = True\n'


def build(tmp_path: Path, page: str) -> tuple[str, str]:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(page)
    warnings: list[str] = []

    class Sink:
        def write(self, text: str) -> None:
            warnings.append(text)

        def flush(self) -> None:
            pass

    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None,
                 warning=Sink(), freshenv=True)
    app.build()
    return (out / "index.html").read_text(), "".join(warnings)


def test_a_described_parameter_is_a_target_and_an_unknown_one_warns(tmp_path: Path):
    html, warnings = build(tmp_path, "# Page\n\n```{rc-describe} fedavg\n```\n\n"
                                     "See {rcparam}`fedavg.eta_local` and {rcparam}`fedavg.eta_locall`.\n")
    assert 'id="rcparam-fedavg.eta_local"' in html and "client (local) step size" in html
    assert "rcparam' reference target not found: fedavg.eta_locall" in warnings  # a build error under -W
    assert "fedavg.eta_local'" not in warnings.replace("eta_locall", "")


def test_text_is_shown_verbatim():
    assert escape("x0 = x* + x0_offset 1_d, |g|, [a, b], $5") == (
        "x0 = x\\* + x0\\_offset 1\\_d, \\|g\\|, \\[a, b\\], \\$5")
