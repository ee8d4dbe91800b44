"""The errata of spec §4.9 (../shared/spec/fedbio.md) that no claim decides, with the reason: shown in the
report's errata table under those a claim confirms (item 24, the dropped cross terms of Lemmas 2, 8 and 14:
fedbio.S5.tau_floor, fedbio.hunt.lemma8_stated). The texts follow proofs/fedbio/report.py's ERRATA."""

from __future__ import annotations

from ratecheck.paper import Erratum

_S = "§4.9 item "

UNCHECKED_ERRATA = (
    Erratum("Corollary 2", "kappa^12 and T = O(kappa^6 eps^-1.5) should read kappa^16 and kappa^8",
            "an order in kappa with unstated constants: checked symbolically (tests/test_fedbio_theory.py), "
            "no instance can contradict an O(.)", _S + "15"),
    Erratum("Theorems 5 and 7, cube-root term", "coefficient 1 where balancing gives 2",
            "the printed bound is the smaller one and both are encoded ('final', 'final_printed'); the "
            "difference is a constant factor in one term, not a claim of its own", _S + "12"),
    Erratum("Theorem 1 (main text) noise term", "(kappa^4/b_y + sigma^2/b_x) sigma^2/M vs the appendix's "
            "kappa^4 sigma^2/(b_y M) + sigma^2/(b_x M)", "two forms of an order term; both are encoded", _S + "9"),
    Erratum("FedBiOAcc alpha_t", "delta/(u + t)^(1/3) in the statement vs delta/(u + sigma^2 t)^(1/3) in the proof",
            "a choice of schedule: the proof's version is implemented (the statement's vanishes at sigma = 0)",
            _S + "10"),
    Erratum("Eq. (4); Prop. 2", "the 1/2 on the quadratic term is missing; G_2^2 is divided by b_x twice",
            "typos whose corrected readings the package uses", _S + "1, 16"),
    Erratum("Algorithms 1, 2, 4; Appendix B.2", "mu_t with u_{t+1}; the sign of p; no sampling step; q_1 without "
            "the client index; Alg. 4's title and stray u-update; one batch size b for b_x and b_y",
            "typos in the algorithms' text: the package follows the proofs' reading", _S + "2, 3, 4, 6, 7, 27"),
    Erratum("prose of §§1-4", "momenta mislabelled; the upper level is what is communicated; FedNest's "
            "O(kappa^9 eps^2) lacks a minus; experiments mentioned that do not exist; the communication gain "
            "attributed to local steps while the proof sets I = O(1)", "statements in prose: nothing to compute",
            _S + "5, 8, 22, 23"),
    Erratum("Lemmas 7, 14, 18; Theorems 6, 7, 8; Props. 3, 7", "step conditions on L~_2 vs those used; kappa^2 vs "
            "Lbar^2; ||tau^2 q|| for ||tau q||; u_bar's order; eta_bar's constants vs the proof; an extra kappa "
            "in Delta_y; mislabelled items and references", "constants and labels inside proofs (Theorem 7's "
            "step size: the safe reading is used)", _S + "11, 13, 14, 17, 19, 20, 21, 26"),
    Erratum("sample complexities for eq. (5)", "JV, HV listed without M^-1; HV kappa^9 (text) vs kappa^8 (Table 1)",
            "orders in a complexity table with unstated constants", _S + "18"),
    Erratum("implicit assumptions H1-H5", "used by the proofs, not stated", "assumptions, not a statement a "
            "measurement can contradict (spec §3.2 lists them)", _S + "25"),
)
