"""A run's identity covers the code in its import closure (ratecheck.runner.identity): an edit to a helper
an algorithm imports only indirectly recomputes its runs; an edit to an unrelated paper does not."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# defedavg_iid_events (ratecheck/algorithms/fedavg.py) reads its event timelines from
# ratecheck/model/asynchrony.py; fedbioacc (ratecheck/algorithms/fedbio.py) its STORM estimator and Neumann
# hypergradient from ratecheck/algorithms/periodic.py: neither is a module of the class hierarchy.
CONFIGS = {
    "events": ("defedavg_iid_events", "quadratic"),
    "storm": ("fedbioacc", "quadratic_bilevel"),
}
SCRIPT = """
import json
from ratecheck.runner.identity import stored_key
from ratecheck.trace import RunConfig
print(json.dumps({name: stored_key(RunConfig(alg, {}, fam, {}, 5)) for name, (alg, fam) in %r.items()}))
"""


def _copy(root: Path) -> Path:
    """The package's source tree copied to ``root``, so its files can be edited."""
    for name in ("ratecheck", "problems", "proofs"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """The keys of the unedited tree (one interpreter for the module's tests)."""
    return keys(_copy(tmp_path_factory.mktemp("unedited")))


@pytest.fixture
def copy(tmp_path):
    return _copy(tmp_path / "checkout")


def keys(root: Path) -> dict[str, str]:
    """The stored keys of the runs, computed in a fresh interpreter importing the copy."""
    out = subprocess.run([sys.executable, "-c", SCRIPT % (CONFIGS,)], cwd=root, capture_output=True, text=True,
                         check=True)
    return __import__("json").loads(out.stdout)


def edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")


def test_an_edit_to_an_indirectly_imported_helper_recomputes_the_run(copy, before):
    assert keys(copy) == before  # the identity is a function of the sources (another copy, interpreter)
    edit(copy / "ratecheck" / "model" / "asynchrony.py")
    after = keys(copy)
    assert after["events"] != before["events"]
    edit(copy / "ratecheck" / "algorithms" / "periodic.py")
    assert keys(copy)["storm"] != after["storm"]


def test_an_edit_to_an_unrelated_paper_keeps_the_run(copy, before):
    edit(copy / "proofs" / "strfedavg" / "claims.py")
    edit(copy / "problems" / "least_squares.py")
    assert keys(copy) == before


def test_the_closure_follows_imports_not_a_list():
    from ratecheck.runner.identity import code_identity, import_closure
    from ratecheck.trace import RunConfig

    modules = code_identity(RunConfig("fedbioacc", {}, "quadratic_bilevel", {}, 5))["modules"]
    assert {"ratecheck.algorithms.periodic", "ratecheck.simulate.engine", "ratecheck.seeding",
            "ratecheck.problems.quadratic_bilevel"} <= set(modules)
    assert not any(name.startswith("proofs") for name in modules)
    assert "ratecheck.exact" in import_closure(["ratecheck.exact"])
    # typing-only imports do not run, so they are not followed
    assert "ratecheck.claims" not in import_closure(["ratecheck.paper"])
