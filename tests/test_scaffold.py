"""`ratecheck new`: the generated plugin passes its check and its tests as generated; LaTeX drafts."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ratecheck.interfaces.cli import main
from ratecheck.interfaces.scaffold import ScaffoldError, new_package
from ratecheck.interfaces.tex_drafts import draft_list, drafts

ROOT = Path(__file__).resolve().parents[1]

TEX = r"""
% \begin{theorem} in a comment is not a theorem
\begin{theorem}[Convergence]\label{thm:main}
If \[ \bar{\eta} \le \frac{1}{4 \sqrt{3} L K}, \qquad \] then
\begin{align*}
\frac{1}{T}\sum_{t=0}^{T-1} \mathbb{E}\|\nabla F(x_t)\|^2 &\le \frac{4 \Delta}{K T \eta \bar{\eta}}
  + 8 L \eta \bar{\eta} \sigma^2 .
\end{align*}
\end{theorem}
\begin{lemma}\label{lem:plain} Nothing displayed. \end{lemma}
"""


@pytest.mark.claims  # decides the generated paper's four claims (about 20 s)
def test_the_generated_package_passes_its_check_and_its_tests(tmp_path: Path):
    new_package("mytheorem", tmp_path)
    package = tmp_path / "mytheorem"
    env = {**os.environ, "PYTHONPATH": f"{package}{os.pathsep}{ROOT}"}
    check = subprocess.run([sys.executable, "-m", "ratecheck", "check", "mytheorem", "--paper", "mytheorem.paper",
                            "--no-cache", "--no-report", "--jobs", "1"], cwd=package, env=env, capture_output=True,
                           text=True, timeout=600)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "4 claims: 3 pass" in check.stdout and "1 negative controls fail as designed, 0 unexpected" in check.stdout
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--paper",
                            "mytheorem.paper"], cwd=package, env=env, capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "6 passed" in tests.stdout  # one test per claim (this paper's only) and the two of its own


def test_names_and_folders_are_checked(tmp_path: Path):
    for bad in ("MyTheorem", "1st", "class", "ratecheck", "my-theorem", ""):
        with pytest.raises(ScaffoldError, match="is invalid: a lowercase Python identifier"):
            new_package(bad, tmp_path)
    new_package("mine", tmp_path)
    with pytest.raises(ScaffoldError, match="already exists"):
        new_package("mine", tmp_path)


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "paper.tex").write_text(TEX)
    assert main(["new", "mine", "--dir", str(tmp_path), "--from-tex", str(tmp_path / "paper.tex")]) == 0
    assert str(tmp_path / "mine" / "mine" / "paper.py") in capsys.readouterr().out
    assert "Bound.from_latex" in (tmp_path / "mine" / "drafts_from_tex.py").read_text()
    assert main(["new", "Mine", "--dir", str(tmp_path)]) == 2
    assert "NAME = 'Mine' is invalid" in capsys.readouterr().err


def test_latex_drafts_split_relations_at_the_top_level_and_list_symbols():
    found = draft_list(TEX)
    assert [(d.kind, d.label) for d in found] == [("condition", "thm:main"), ("bound", "thm:main")]
    condition, bound = found
    assert condition.latex == r"\bar{\eta} \le \frac{1}{4 \sqrt{3} L K}"  # spacing and comma dropped
    assert condition.symbols == ("K", "L", "etabar")
    # the sum's t=0 is inside braces: the relation is the \le after the expectation
    assert bound.latex.startswith(r"\frac{4 \Delta}{K T \eta \bar{\eta}}")
    assert bound.symbols == ("Delta", "K", "L", "T", "eta", "etabar", "sigma")
    text = drafts(TEX)
    assert "# lemma: lem:plain (no displayed relation)" in text
    module = ast.parse(text)
    assert len(module.body) == 1 and ast.get_docstring(module)  # a docstring and comments: nothing runs
