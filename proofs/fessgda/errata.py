"""The errata of spec §9 (../shared/spec/fessgda.md, the consolidated list) that no claim decides, with the
reason: shown in the report's errata table under the one a claim confirms (item 9's missing kappa2^2 factor
in the distance conversion: fessgda.hunt.T3_5_distance_printed)."""

from __future__ import annotations

from ratecheck.paper import Erratum

_S = "§9 item "

UNCHECKED_ERRATA = (
    Erratum("all theorems, local-step caps", "printed with the noise scale in the numerator",
            "a cap on step sizes, not a bound on a measured quantity (spec §4.0 reads it as the proofs "
            "need)", _S + "1"),
    Erratum("Theorem 3.1 proof; Theorem E.1 proof", "the partial-participation case is labelled 'm = M or "
            "sigma_G = 0'; beta = O(kappa^-2 m eps^2) is inconsistent with beta = eta_y K mu/80000",
            "labels and O(.) orders in the text of proofs: nothing to compute", _S + "2, 15"),
    Erratum("Lemmas C.7/F.3, E.1-E.3, F.2", "beta's two forms; Assumption 3.1 cited with a compact Y where "
            "strong concavity is needed; constant 6 vs 2 vs 4", "intermediate steps of proofs, not "
            "statements a measurement reaches", _S + "3, 4, 6"),
    Erratum("constrained-Y proofs", "an aggregate identity that ignores local projections",
            "a gap in a proof, not a false statement a measurement can show", _S + "5"),
    Erratum("Appendices G, H, J", "n^-1 for m^-1, inconsistent stationarity tuple, unprojected y-gradient; "
            "theorem labelled 3.2, wrong references; wrong PL-PL branch and a sign typo in Psi~",
            "typos and references in proofs of theorems whose statements the claims check", _S + "7, 8, 11"),
    Erratum("Appendix I (other than the distance conversion)", "recursion sign -b for +b, 126 vs 128, 256 vs "
            "1024, a missing square root on a cap, an eta_y/eta_x swap, a duplicated eta_{x,l} cap",
            "constants and typos inside the derivation, not in a statement a measurement reaches", _S + "9"),
    Erratum("Theorem 3.5 / Table 2", "headline kappa exponents (kappa'^3 kappa''^4, kappa' kappa''^2) disagree "
            "with the appendix (kappa'^5 kappa''^2, kappa'^2 kappa'')", "exponents of condition numbers in an "
            "O(.) complexity with unstated constants: no instance contradicts them", _S + "10"),
    Erratum("eq. (2), §2, Figure 1", "KKT typos and the f_i name clash; Phi smoothness 2 kappa l vs (1 + kappa) l; "
            "the caption omits SAGDA", "typos and an unused constant: nothing to measure", _S + "12, 13, 14"),
)
