"""StR-FedAvg / IPIR-FedAvg: "Self-tuned Regularized Federated Methods with Guarantees for Optimal
Solution Selection" (Ebrahimi, Qiu, Cui, Yousefian).

Paper: ../shared/seeds/001_511a8e816d499631.txt (arXiv 2503.08634v2).
Spec:  ../shared/spec/strfedavg.md (§4.10 errata I1-I31, §4.11 sympy encoding, §6 TP0-TP4, §8 pitfalls).

theorems.py: Theorems 1-3 (stated and corrected) and Table 1 derived; claims.py: the runs and verdicts;
hunts.py: counterexample searches for Theorem 1 (erratum I10); report.py: the report page.
"""

from ratecheck.paper import Paper

from .claims import CLAIMS, KEY
from .constants import CLAIMS as CONSTANTS  # constants against independent computations (issue #23)
from .costs import CLAIMS as COSTS  # recorded costs against the algorithm boxes (issue #23)
from .errata import UNCHECKED_ERRATA
from .hunts import HUNTS, SPACES  # counterexample searches (issue #13)
from .oracles import CLAIMS as ORACLES  # trajectory oracle (issue #23)
from .oracles_additive import CLAIMS as ADDITIVE_ORACLES  # the oracle on exact mode's additive sampling design
from .oracles_baselines import CLAIMS as BASELINE_ORACLES  # the baselines' trajectory oracles (issue #23)
from .report import report_figures, report_sections
from .theorems import SEED, THEOREMS
from .unbiased import CLAIMS as UNBIASED  # the stochastic oracles' means (unbiasedness)

PAPER = Paper(
    key=KEY,
    title="StR-FedAvg / IPIR-FedAvg (arXiv 2503.08634): optimal solution selection",
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS + ORACLES + HUNTS + BASELINE_ORACLES + COSTS + ADDITIVE_ORACLES + CONSTANTS + UNBIASED,
    spec="../shared/spec/strfedavg.md",
    report_sections=report_sections,
    report_figures=report_figures,
    spaces=SPACES,
    unchecked_errata=UNCHECKED_ERRATA,
)
