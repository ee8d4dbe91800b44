"""The errata of spec §4.10 (../shared/spec/strfedavg.md, items I1-I31) that no claim decides, with the
reason: shown in the report's errata table under those a claim confirms (I18, the gradient of F_lambda:
strfedavg.T3.stationary_point_paper_definition; I10, Theorem 1's unstated a + b <= 1:
strfedavg.hunt.T1_printed_range)."""

from __future__ import annotations

from ratecheck.paper import Erratum

_S = "§4.10 "

UNCHECKED_ERRATA = (
    Erratum("Algorithm 1, lines 7 and 14; output average", "y^r_{i,k-1} for y^r_{i,0}; x^{r+1} := x^r + ... for "
            "x^r := x^{r-1} + ...; the sum to R-1 and x^R used for two things",
            "typos in the algorithm's text: the package implements the intended iteration", _S + "I1-I3"),
    Erratum("Lemmas 1-2", "a spurious 1/N in G_Psi and B_F for B_Psi; Lemma 2 valid only for eta <= 1",
            "intermediate steps: the encoded theorems are what the claims check", _S + "I4, I5"),
    Erratum("Theorems 1-2, step conditions", "the 1/(27 K B^2 (L_h + eta L_f)) condition and Prop. 3's "
            "R-condition are missing from the statements", "missing hypotheses: the encodings carry them as "
            "conditions, whose margins the claims report", _S + "I6"),
    Erratum("Props. 1-3, 7", "Prop. 1 drops a factor 3; eta M vs 2 eta M; a factor 2 between Prop. 3 (ii-3) "
            "and Prop. 7; a wrong equation reference", "constants of intermediate propositions: the encoded "
            "bounds carry Prop. 1's factor 3 ('_corrected' versions)", _S + "I7, I8, I29, I31"),
    Erratum("Theorem 1 exponents and terms", "root index bp/2 for b + p/2; R^{p/2} for R^{eta p/2} when "
            "kappa = 1; the placement of ||grad f(x*)||^kappa; (4M)^{1/kappa} without its prefactor; alpha "
            "outside the 1/kappa root", "the printed forms are not encoded as bound "
            "versions of their own, so no claim runs them (the kappa = 1 case no smooth h allows, I23)", _S + "I9, I11, I12, I15, I16"),
    Erratum("Theorem 2; eta_hat", "eta_hat from the strongly convex case and an inconsistent range of a, b; "
            "eta_hat = 11 is the argmax, the maximum is 24/(5e)", "a schedule constant and a range, not a "
            "bound a measurement contradicts", _S + "I13, I14"),
    Erratum("Theorem 3 and its proof", "sigma_f where grad g is exact; G^2 and L_f for G_ncvx and 1; 5/4 for "
            "3/4, <= 1/2 for >= 1/2, a gamma/lambda for gamma/lambda^2; R_t = t degenerate at t in {0, 1}",
            "constants and typos inside the statement's derivation, not a statement a measurement reaches",
            _S + "I17, I19, I20"),
    Erratum("Table 1", "the IPIR kappa = 1 entry conflicts with Remark 4; the kappa > 1 entry ignores T^(-1/6); "
            "the dist column counts one inner call; kappa = 1 impossible for smooth h",
            "orders in a complexity table with unstated constants: no instance contradicts an O(.)",
            _S + "I21, I22, I23, I30"),
    Erratum("abstract, §5, problem (2)", "EMNIST/CIFAR-10 experiments not in the body; 'three choices' of K "
            "listing four; eps_r sums over N and normalises by S; x/y mix-up; the experiments' step size",
            "about the paper's text and experiments, which ratecheck does not rerun", _S + "I24-I28"),
)
