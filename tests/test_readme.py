"""The README's worked example runs and says what the README says it does."""

import re
from pathlib import Path

import sympy as sp

README = Path(__file__).resolve().parents[1] / "README.md"


def test_worked_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    namespace: dict = {}
    exec(blocks[0], namespace)  # the theorem encoding
    theorem = namespace["theorem"]
    assert theorem.order("n", version="corrected", dominant_in="T") == sp.Rational(-1, 2)
    ev = theorem.evaluate({"L": 4, "sigma": 10, "Delta": 8.17, "n": 4, "K": 5, "T": 2000, "lam": 2})
    assert ev.all_hold
    assert ev.bounds["corrected"] / ev.bounds["main_text"] > 10  # the printed bound is far lower
