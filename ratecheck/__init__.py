"""ratecheck: check convergence theorems of federated algorithms against computation."""

from .engine import run, run_config
from .participation import Participation
from .problem import Constant
from .trace import RunConfig, Trace

__all__ = ["Constant", "Participation", "RunConfig", "Trace", "run", "run_config"]
__version__ = "0.1.0"
