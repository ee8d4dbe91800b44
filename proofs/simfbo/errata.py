"""The errata of spec §4.8 (../shared/spec/simfbo.md) that no claim decides, with the reason: shown in the
report's errata table under those a claim confirms (items 1 and 19, the hidden condition C6:
simfbo.hunt.T1_as_stated)."""

from __future__ import annotations

from ratecheck.paper import Erratum

_S = "§4.8 item "

UNCHECKED_ERRATA = (
    Erratum("Prop. 2 vs Lemma 10", "the main text has (L_v^2 + L_vx/4) and 2 L_v/delta', the appendix "
            "(L_v^2 + L_vx/2) and 4 L_v/delta'", "an intermediate inequality: the theorems use the "
            "appendix's values, and the claims check the theorems", _S + "2"),
    Erratum("tau_bar (end of Appendix B)", "defined as sum_i tau_i where Prop. 3 and §D.5 use the mean",
            "a definition clash: the package uses the mean, as the theorems' proofs do", _S + "3"),
    Erratum("h definitions (Appendix B)", "sum k = 1..tau_i where eq. (4) and the algorithm sum k = 0..tau_i - 1",
            "an indexing typo: the package follows the algorithm", _S + "4"),
    Erratum("eqs. (9)-(10), (47)-(48)", "the partial-participation factor appears as (n-P)/n, (n-P)/(P(n-1)) "
            "and (n-P)/(n-1)", "differences of order 1/n inside an O(.) rate; the claims normalise by Lemma 9's "
            "exact factor (n-P)/(n-1) (simfbo.claims, finite-population claims)", _S + "5"),
    Erratum("Theorem 2 proof; M_2 in §D.6; step-size term 9", "an undefined M_4 (read M_3); L_vx/(2F) for "
            "L_vx/2; (L_v^2 + L_yx/2) probably for (L_y^2 + L_yx/2)", "typos in constants: the encoded "
            "explicit bound uses the spec's readings (M_3, L_vx/2); which reading of term 9 is meant is a "
            "guess, not something a measurement decides", _S + "6, 7, 8"),
    Erratum("Lemma 7, the step-size list", "L_Phi^2/2 where the descent lemma has L_Phi/2",
            "dimensionally inconsistent but conservative when L_Phi >= 1: a proof constant no measurement "
            "isolates", _S + "9"),
    Erratum("eq. (30)(b), delta_t", "absorbs a term without the /2 its definition carries",
            "a proof-internal constant", _S + "10"),
    Erratum("Table 1", "communication complexity O(eps^-1) in a table about partial participation; the theorems "
            "give it for full participation only", "a summary table's complexity claim with unstated "
            "constants: no instance contradicts an O(.)", _S + "11"),
    Erratum("Algorithm 1, eq. (6), notation, §5 citation", "t = 0..T (T+1 rounds); v^(0) not an input; "
            "uploads h without ||a_i||_1; a stray k and a full sum in (6); v_i for v; R^p for R^dx; [69] "
            "for [65]", "typos and omissions in the text; the package runs T rounds and sends the scalar",
            _S + "12, 13, 14, 15"),
    Erratum("Theorem 1, 'step sizes set in §D.5'", "§D.5 gives only orders and caps: the constants are free",
            "an under-specification, not a false statement: nothing to measure", _S + "16"),
    Erratum("Lemma 5", "states the y-heterogeneity bound with y*(x) where the weighted y~*(x) is meant",
            "a notation slip in an intermediate lemma", _S + "17"),
    Erratum("eq. (51)", "bounds the average of rho^(t)/rho_bar by 3/2 where it is exactly 1",
            "harmless: a looser valid constant cannot fail a measurement", _S + "18"),
)
