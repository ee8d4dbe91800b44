"""FESS-GDA: "Stochastic Smoothed Gradient Descent Ascent for Federated Minimax Optimization".

Paper: ../shared/seeds/004_57c332141565532a.txt (arXiv:2311.00944, Shen, Huang, Zhang, Shen; AISTATS 2024).
Spec:  ../shared/spec/fessgda.md (§4 theorems with explicit constants, §4.8 complexity table, §6 test
problems, §8 pitfalls, §9 inconsistencies).

Symbols follow spec §4.0: eta_x = eta_{x,g} eta_{x,l} and eta_y = eta_{y,g} eta_{y,l} are the
EFFECTIVE step sizes every theorem is stated in; eta_xl, eta_yl the local ones (only capped); K local
steps, T rounds, m of M clients per round.

Runs use the practical constants of spec §6.0 wherever the theory constants (1000, 256, 80000, ...)
would make progress invisible; then the theorem is evaluated symbolically only, and claims that
need its conditions (A1) use the theory step sizes exactly.

theorems.py: the theorems in sympy and the derived complexity table; claims.py: run bindings,
configurations and the claims of spec §6; report.py: the paper's report sections.
"""

from __future__ import annotations

from ratecheck.paper import Paper

from .claims import *  # noqa: F401,F403
from .claims import CLAIMS
from .constants import CLAIMS as CONSTANT_CLAIMS  # constants against independent computations (issue #23)
from .costs import CLAIMS as COSTS  # recorded costs against the algorithm boxes (issue #23)
from .errata import UNCHECKED_ERRATA
from .hunts import HUNTS, SPACES  # counterexample searches (issue #13)
from .oracles import CLAIMS as ORACLES  # trajectory oracle (issue #23)
from .oracles_projected import CLAIMS as PROJECTED_ORACLES  # a replay on a simplex Y, projections active (#23)
from .oracles_replay import CLAIMS as REPLAY_ORACLES  # noise-free Monte-Carlo runs replayed from the boxes (#23)
from .oracles_variants import CLAIMS as VARIANT_ORACLES  # the variants' and baselines' trajectory oracles (#23)
from .report import *  # noqa: F401,F403
from .report import report_sections
from .step_sizes import STEP_SIZE_CLAIMS  # issue #21: the exact rate against eta
from .theorems import *  # noqa: F401,F403
from .theorems import KEY, SEED, THEOREMS, TITLE
from .unbiased import CLAIMS as UNBIASED  # the stochastic oracles' means (unbiasedness)

PAPER = Paper(
    key=KEY,
    title=TITLE,
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS + ORACLES + STEP_SIZE_CLAIMS + HUNTS + VARIANT_ORACLES + COSTS + CONSTANT_CLAIMS  # #13: hunts; #21: rate against eta
           + PROJECTED_ORACLES  # #23: the local projection onto a constrained Y
           + REPLAY_ORACLES
           + UNBIASED,  # #23: oracles, costs, replays
    spec="../shared/spec/fessgda.md",
    spaces=SPACES,  # issue #13: where `ratecheck hunt THEOREM` searches
    report_sections=report_sections,
    unchecked_errata=UNCHECKED_ERRATA,
)
