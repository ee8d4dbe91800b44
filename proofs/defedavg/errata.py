"""The errata of spec §4.7 (../shared/spec/defedavg.md) that no claim decides, with the reason: shown in
the report's errata table under those a claim confirms (item 4, eq. (14): defedavg.T2.bound_main_text,
defedavg.T2.bound_appendix, defedavg.hunt.T2_main_text)."""

from __future__ import annotations

from ratecheck.paper import Erratum

_S = "§4.7 item "

UNCHECKED_ERRATA = (
    Erratum("eq. (3), reference FedAvg", "the server step has the wrong sign",
            "a typo in the baseline's formula: the package implements the correct sign (spec §2.4), so "
            "every FedAvg claim would fail with the printed one", _S + "1"),
    Erratum("eqs. (7)-(8), (15)", "the aggregate divides by |I_t| while the text says |I_t| <= n",
            "an ambiguity, not a false statement: the package reads it as 1/n with multiplicities", _S + "2"),
    Erratum("Theorem 1, eq. (46)", "the last '=' should be '<=': the general form at the step sizes gives "
            "10 sqrt(Delta A1/(nKT)), the stated (12) has 32",
            "the stated bound stays valid (3.2x loose), so no measurement can fail it; the constant is "
            "checked symbolically in tests/test_defedavg_theory.py", _S + "3"),
    Erratum("proof of Theorem 1; remark after Theorem 2", "cite condition (13) and (14) where (11) and (13) "
            "are meant", "wrong cross-references in the text: nothing to compute", _S + "5, 6"),
    Erratum("Assumption 4, 'lambda = 1 means no delay'", "lambda = 1 allows a delay of one round",
            "a wording of a definition; the claims plug max(1, measured delay) into the bounds", _S + "7"),
    Erratum("Theorem 2, the n/T term", "O(1/sqrt(nKT) + n/T) for lambda = 1 does not follow visibly from (14)",
            "an order statement with unstated constants: no instance can contradict it", _S + "8"),
    Erratum("Lemmas 1, 2, 4, 5 (proofs)", "normaliser 1/(sqrt(K) n) for 1/(sqrt(K) N); i in [n] for i in [N]; "
            "Fact 2 with n = 3 for m = 4; a duplicated term in (43); an extra 1/n^2 in (41)(b)",
            "intermediate steps whose final statements are consistent; the theorems they feed are checked",
            _S + "9, 11, 12, 13"),
    Erratum("Lemma 9", "its condition etabar <= 1/(2 sqrt(2) L K) does not make its recursion hold for K >= 5",
            "a proof-internal inequality: Theorem 2 assumes the stronger etabar <= 1/(4 sqrt(3) L K), which "
            "suffices, so the theorem's claims cannot see it", _S + "14"),
    Erratum("notation; Assumptions 2-3 wording", "circular G_i^t, a missing gradient in g_i^{t,k} and the IID "
            "iteration, 'Algorithm 2' for Algorithm 1, 'w' for w^0; 'independent of w' for 'of F'",
            "typos in notation and wording: nothing to compute", _S + "10, 15"),
    Erratum("Theorems 1-2, 'for T >= 1'", "(11)/(13) at the prescribed step sizes force T >= T1_min / T2_min",
            "a hidden requirement, not a false bound: each claim reports the conditions' margins and gives no "
            "verdict where one fails", _S + "16"),
    Erratum("the analysis of random delays", "treats tau_i(t) as exogenous though it depends on past sampling",
            "a modelling gap: the simulator's timing is independent of the data, as the analysis needs",
            _S + "17"),
    Erratum("experiments, §4 and Tables I-II", "latent size 1600 fits CIFAR-10, not 28x28 FashionMNIST (1024); "
            "Table II has n = 5 columns that Table I lacks",
            "about the paper's neural-network experiments, which ratecheck does not rerun", _S + "18, 19"),
)
