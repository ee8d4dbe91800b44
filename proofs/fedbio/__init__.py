"""FedBiO / FedBiOAcc: "Communication-Efficient Federated Bilevel Optimization with Local and Global
Lower Level Problems" (Li, Huang, Huang).

Paper: ../shared/seeds/002_25acef2c58d2293a.txt. Spec: ../shared/spec/fedbio.md. The package splits by
responsibility: ``theorems`` (Theorems 1-4 / 5-8 and Lemma 8 in sympy, the complexity table), ``claims``
(S1-S15 of spec §6.5: what to run and what to expect; ``acceleration`` holds the exact FedBiOAcc(-Local)
claims S7-S9, S13, S14), ``ball`` (the after-run check that the iterates stayed where C_f is taken),
``hunts`` (the counterexample searches of Lemma 8) and ``report`` (tables and figures drawn from the runs).
"""

from __future__ import annotations

from ratecheck.paper import Paper

from .claims import CLAIMS, KEY
from .constants import CLAIMS as CONSTANT_CLAIMS  # constants against independent computations (issue #23)
from .costs import CLAIMS as COSTS  # recorded costs against the algorithm boxes (issue #23)
from .errata import UNCHECKED_ERRATA
from .hunts import HUNTS, SPACES  # counterexample searches (issue #13)
from .oracles import CLAIMS as ORACLES  # trajectory oracles and the absolute floor (issue #23)
from .oracles_baselines import CLAIMS as BASELINE_ORACLES  # Algorithm 4, MRBO, StocBiO oracles (issue #23)
from .oracles_replay import CLAIMS as NOISY_REPLAYS  # Monte-Carlo runs replayed with their Hessian noise (issue #23)
from .report import report_figures, report_sections
from .theorems import SEED, THEOREMS
from .unbiased import CLAIMS as UNBIASED  # the stochastic oracles' means (unbiasedness)

TITLE = "FedBiO / FedBiOAcc: communication-efficient federated bilevel optimization (global and local lower levels)"

PAPER = Paper(
    key=KEY,
    title=TITLE,
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS + ORACLES + BASELINE_ORACLES + HUNTS + COSTS + CONSTANT_CLAIMS + NOISY_REPLAYS + UNBIASED,  # #13: hunts; #23: oracles
    spec="../shared/spec/fedbio.md",
    report_sections=report_sections,
    report_figures=report_figures,
    spaces=SPACES,  # issue #13: where `ratecheck hunt THEOREM` searches
    unchecked_errata=UNCHECKED_ERRATA,
)
