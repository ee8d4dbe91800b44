"""SimFBO / ShroFBO: "Towards Simple, Flexible and Communication-efficient Federated Bilevel Learning".

Paper: ../shared/seeds/000_66e1ccf0a50396e9.txt (Yang, Xiao, Ji, arXiv May 2023).
Spec:  ../shared/spec/simfbo.md (§4.1 constants, §4.3 conditions, §4.4 explicit bound before the O(.)
step, §4.5 Theorem 2, §4.7 rates, §4.8 errata, §6 test problems and tests T0-T8).

The measure is (1/T) sum_{t<T} ||grad Phi(x^t)||^2 ("avg:grad_norm_sq"): the proofs bound this average
(spec §2.6). Theorem symbols follow spec §4.6; the run parameters are bound from each run.

theorems.py: Theorems 1-2 and the corollary in sympy; claims.py: run bindings, configurations and the
claims of spec §6.4/§7.2; report.py: the paper's report sections and figures.
"""

from __future__ import annotations

from ratecheck.paper import Paper

from .claims import *  # noqa: F401,F403
from .claims import CLAIMS
from .constants import CLAIMS as CONSTANT_CLAIMS  # constants against independent computations (issue #23)
from .costs import CLAIMS as COSTS  # recorded costs against the algorithm boxes (issue #23)
from .errata import UNCHECKED_ERRATA
from .hunts import HUNTS, SPACES  # counterexample searches (issue #13)
from .oracles import CLAIMS as ORACLES  # trajectory oracles (issue #23)
from .oracles_baselines import CLAIMS as BASELINE_ORACLES  # the §7.2 baselines' oracles (issue #23)
from .oracles_replay import CLAIMS as REPLAYS  # random tau, sampled rho, P_r and diagnostics, replayed (issue #23)
from .report import *  # noqa: F401,F403
from .report import report_figures, report_sections
from .theorems import *  # noqa: F401,F403
from .theorems import KEY, SEED, THEOREMS, TITLE
from .unbiased import CLAIMS as UNBIASED  # the stochastic oracles' means (unbiasedness)

PAPER = Paper(
    key=KEY,
    title=TITLE,
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS + ORACLES + BASELINE_ORACLES + HUNTS + COSTS + REPLAYS + CONSTANT_CLAIMS  # issue #13: registered hunts; #23: oracles
           + UNBIASED,  # the stochastic oracles' means
    spec="../shared/spec/simfbo.md",
    spaces=SPACES,  # issue #13: where `ratecheck hunt THEOREM` searches
    report_sections=report_sections,
    report_figures=report_figures,
    unchecked_errata=UNCHECKED_ERRATA,
)
