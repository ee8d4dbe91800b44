"""The README's worked example is the example package verbatim, counts its lines right, and its
theorem says what the README says it does."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EXAMPLE = ROOT / "examples" / "fedavg_momentum"


def test_worked_example_is_the_example_package_verbatim():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    sources = "".join(path.read_text() for path in sorted(EXAMPLE.rglob("*.py")))
    assert len(blocks) >= 3
    for block in blocks:
        assert block in sources, f"README block not in examples/fedavg_momentum:\n{block}"


def test_worked_example_counts_its_lines():
    text = README.read_text()
    files = [EXAMPLE / "pyproject.toml", *sorted(EXAMPLE.rglob("*.py"))]
    lines = {path.name: len(path.read_text().splitlines()) for path in files}
    assert f"{sum(lines.values())} lines in all" in text
    for name in ("algorithm.py", "paper.py", "pyproject.toml", "__init__.py"):
        assert f"{name} {lines[name]}" in text
    assert f"tests {lines['test_fedavg_momentum.py']}" in text


def test_worked_example_theorem(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from fedavg_momentum.paper import FLOOR

    assert FLOOR.order("n", version="floor") == -1  # the 1/n the slope claim expects, from sympy
    values = {"L": 1.0, "sigma": 1.0, "n": 4, "eta": 1.0, "etabar": 0.1}
    plain = FLOOR.evaluate({**values, "beta": 0.0}, use_schedule=False)
    assert plain.all_hold and abs(plain.bounds["floor"] - 0.1 / (4 * 1.9)) < 1e-12  # SGD's floor at beta = 0
    unstable = FLOOR.evaluate({**values, "etabar": 3.7, "beta": 0.8}, use_schedule=False)
    assert not unstable.all_hold  # alpha L = 3.7 > 2 (1 + beta) = 3.6
