"""ratecheck: check convergence theorems of federated algorithms against computation."""

__version__ = "0.1.0"  # first: modules imported below read it (ratecheck.runner.identity)

import os as _os

if _os.environ.get("RATECHECK_MUTANT"):  # `ratecheck mutate`: serve the mutant before anything imports the module
    from .mutate.hook import install_from_env as _install_mutant

    _install_mutant()

from .model.participation import Participation
from .notebook_runs import run, run_config  # traces with .plot(measure) (issue #22)
from .problem import Constant
from .trace import RunConfig, Trace

__all__ = ["Constant", "Participation", "RunConfig", "Trace", "check", "run", "run_config"]


def __getattr__(name: str):
    if name == "check":  # lazily: claims and sympy are not needed to run an algorithm
        from .notebook import check  # start-up: claims and sympy load on first use; outcomes shown in Jupyter

        return check
    raise AttributeError(f"module 'ratecheck' has no attribute {name!r}")


# -- problems/ and proofs/ as ratecheck.problems and ratecheck.proofs (tools/relayer.py) ----------------
# An installed wheel holds them inside this package (the package-dir mapping in pyproject.toml) and an
# editable install's finder maps them; a checkout on sys.path (tests run from its root) has them beside
# this folder: this finder maps those two names there, and nothing else.
def _checkout_packages() -> None:
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import pathlib
    import sys

    here = pathlib.Path(__file__).resolve().parent
    roots = {f"{__name__}.{name}": here.parent / name for name in ("problems", "proofs")
             if not (here / name).exists() and (here.parent / name / "__init__.py").exists()}
    if not roots:
        return

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: object = None, target: object = None
                      ) -> importlib.machinery.ModuleSpec | None:
            if fullname in roots:
                return importlib.util.spec_from_file_location(
                    fullname, roots[fullname] / "__init__.py", submodule_search_locations=[str(roots[fullname])])
            return None

    sys.meta_path.insert(0, _Finder())  # before an editable install's finder, which may map another checkout


_checkout_packages()
