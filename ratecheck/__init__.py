"""ratecheck: check convergence theorems of federated algorithms against computation."""

__version__ = "0.1.0"  # first: modules imported below read it (ratecheck.identity)

import os as _os

if _os.environ.get("RATECHECK_MUTANT"):  # `ratecheck mutate`: serve the mutant before anything imports the module
    from .mutate.hook import install_from_env as _install_mutant

    _install_mutant()

from .engine import run, run_config
from .participation import Participation
from .problem import Constant
from .trace import RunConfig, Trace

__all__ = ["Constant", "Participation", "RunConfig", "Trace", "check", "run", "run_config"]


def __getattr__(name: str):
    if name == "check":  # lazily: claims and sympy are not needed to run an algorithm
        from .checking import check  # start-up: claims and sympy load on first use

        return check
    raise AttributeError(f"module 'ratecheck' has no attribute {name!r}")
