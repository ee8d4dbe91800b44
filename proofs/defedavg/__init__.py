"""DeFedAvg: "Achieving Linear Speedup in Asynchronous Federated Learning with Heterogeneous Clients".

Paper: ../shared/seeds/003_2fcc6b9d543c5aab.txt (arXiv:2402.11198v1, Wang, Li, Jin, Zhang 2024).
Spec:  ../shared/spec/defedavg.md (§4.1 Theorem 1, §4.2 Theorem 2, §4.7 errata, §6 test problems).

theorems.py: Theorems 1-2 in sympy; claims.py: delay-schedule claims (P1, P2);
asynchronous.py: event-timeline, stability and sampling-noise claims; wallclock.py: the wall-clock claims;
interpolation.py: P4; interpolation_exact.py: P4's exact second moments (multiplicative noise);
local_steps_exact.py: identical data with a stochastic Hessian, where the local steps K matter;
oracles.py: trajectory oracles (issue #23); oracles_scale.py: one large enough for composed local steps;
oracles_events.py: the event-timeline algorithms' replays;
modes.py: exact expectations in the quick profile and Monte-Carlo twins; report.py: the page.
"""

from __future__ import annotations

from ratecheck.claims import PROFILES  # noqa: F401  (re-exported for tests and notebooks)
from ratecheck.paper import Paper

from .asynchronous import CLAIMS as _ASYNC_CLAIMS
from .claims import *  # noqa: F401,F403
from .claims import CLAIMS as _SCHEDULE_CLAIMS
from .claims import lyapunov_noise_floor, t2_config  # noqa: F401
from .constants import CLAIMS as _CONSTANT_CLAIMS  # constants against independent computations (issue #23)
from .costs import CLAIMS as _COST_CLAIMS  # recorded costs against the algorithm boxes (issue #23)
from .costs_exact import CLAIMS as _EXACT_COST_CLAIMS
from .errata import UNCHECKED_ERRATA
from .horizon import CLAIMS as _HORIZON_CLAIMS
from .hunts import HUNTS, SPACES  # noqa: E402  (counterexample searches, issue #13)
from .interpolation import CLAIMS as _INTERPOLATION_CLAIMS
from .interpolation_exact import CLAIMS as _INTERPOLATION_EXACT_CLAIMS
from .local_steps_exact import CLAIMS as _LOCAL_STEPS_EXACT_CLAIMS
from .oracles import CLAIMS as _ORACLE_CLAIMS
from .oracles_events import CLAIMS as _EVENT_ORACLE_CLAIMS
from .oracles_noise import CLAIMS as _NOISY_ORACLE_CLAIMS
from .oracles_scale import CLAIMS as _SCALE_ORACLE_CLAIMS  # exact mode's composed K local steps
from .report import bound_sections, report_figures, timeline_sections
from .report import report_sections as _rate_sections
from .theorems import *  # noqa: F401,F403
from .theorems import A1, KEY, SEED, THEOREMS, TITLE  # noqa: F401
from .unbiased import CLAIMS as _UNBIASED_CLAIMS  # the stochastic oracles' means (unbiasedness)

# replaces the CLAIMS of claims.py that the star import above brought in
CLAIMS = (_SCHEDULE_CLAIMS + _HORIZON_CLAIMS + _ASYNC_CLAIMS + _INTERPOLATION_CLAIMS  # type: ignore[assignment]  # the star import's CLAIMS, another tuple type
          + _INTERPOLATION_EXACT_CLAIMS + _ORACLE_CLAIMS + _EVENT_ORACLE_CLAIMS + _NOISY_ORACLE_CLAIMS + HUNTS
          + _LOCAL_STEPS_EXACT_CLAIMS
          + _SCALE_ORACLE_CLAIMS
          + _COST_CLAIMS + _EXACT_COST_CLAIMS
          + _CONSTANT_CLAIMS
          + _UNBIASED_CLAIMS)


def report_sections(outcomes):
    """Rates and errata, bounds stated vs proof, timeline delays and wall clock."""
    return _rate_sections(outcomes) + bound_sections(outcomes) + timeline_sections(outcomes)


PAPER = Paper(
    key=KEY,
    title=TITLE,
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS,
    spec="../shared/spec/defedavg.md",
    report_sections=report_sections,
    report_figures=report_figures,
    spaces=SPACES,
    unchecked_errata=UNCHECKED_ERRATA,
)
