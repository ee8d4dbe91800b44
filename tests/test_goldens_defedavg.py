"""Goldens of DeFedAvg's theorem encodings (issue #23 item 3): every bound and condition of Theorems 1 and 2 at a
reference point against plain arithmetic on the printed expressions (paper eqs. (11)-(14), (46), Appendix A.2.2,
as quoted in spec defedavg §4.1-4.2)."""

from math import sqrt

from goldens import assert_goldens

from ratecheck.proofs import defedavg as d

L, sigma, nu, G, Delta = 1.3, 0.7, 0.4, 2.1, 3.0
n, K, T, lam, eta, etabar = 4, 5, 7000, 3, 0.9, 0.002
VALUES = {"L": L, "sigma": sigma, "nu": nu, "G": G, "Delta": Delta, "n": n, "K": K, "T": T, "lam": lam,
          "eta": eta, "etabar": etabar}


def test_theorem1_goldens():
    A1 = 4 * sigma**2 * L + 2 * L * K * G**2  # the denominator of eta-bar and of (12)'s second term
    # (12) as stated: sqrt(256 Delta (16 sigma^2 L + 8 L G^2 K)/(nKT)) + 8 L^2 (sigma^2 + 8 K nu^2)/((4 sigma^2 L + 2 LKG^2) K T)
    stated = sqrt(256 * Delta * (16 * sigma**2 * L + 8 * L * G**2 * K) / (n * K * T)) \
        + 8 * L**2 * (sigma**2 + 8 * K * nu**2) / (A1 * K * T)
    # (46), first line: 4 Delta/(K T eta etabar) + (16 sigma^2 L + 8 L G^2 K) eta etabar/n + 8 L^2 K (sigma^2 + 8 K nu^2) etabar^2
    general = 4 * Delta / (K * T * eta * etabar) + (16 * sigma**2 * L + 8 * L * G**2 * K) * eta * etabar / n \
        + 8 * L**2 * K * (sigma**2 + 8 * K * nu**2) * etabar**2
    # (11): etabar <= 1/(8LK); eta etabar <= min{1/(4LK lam), (2 sigma^2 + G^2 K)/(8 sigma^2 L K lam + 4 L G^2 K^2 lam^2)}
    conditions = {
        "etabar <= 1/(8LK)": (etabar, 1 / (8 * L * K)),
        "eta etabar <= 1/(4LK lam)": (eta * etabar, 1 / (4 * L * K * lam)),
        "eta etabar <= (2 sigma^2 + G^2 K)/(8 sigma^2 L K lam + 4 L G^2 K^2 lam^2)":
            (eta * etabar, (2 * sigma**2 + G**2 * K) / (8 * sigma**2 * L * K * lam + 4 * L * G**2 * K**2 * lam**2)),
    }
    # Theorem 1's step sizes: eta = sqrt(4 n K Delta), etabar = 1/(K sqrt((4 sigma^2 L + 2 L K G^2) T))
    schedule = {"eta": sqrt(4 * n * K * Delta), "etabar": 1 / (K * sqrt(A1 * T))}
    assert_goldens(d.THEOREM_1, VALUES, {"stated": stated, "general": general}, conditions, schedule)


def test_theorem2_goldens():
    # (14) main text: sqrt(128 Delta/(nKT)) + 8L/(KT); Appendix A.2.2: sqrt(128 L Delta/(nKT)) + 8L/(KT);
    # corrected (spec §4.2): sqrt(128 L sigma^2 Delta/(nKT)) + 8L/(KT)
    tail = 8 * L / (K * T)
    bounds = {
        "main_text": sqrt(128 * Delta / (n * K * T)) + tail,
        "appendix": sqrt(128 * L * Delta / (n * K * T)) + tail,
        "corrected": sqrt(128 * L * sigma**2 * Delta / (n * K * T)) + tail,
        # sum of (52): 4 Delta/(K T eta etabar) + 8 L sigma^2 eta etabar/n + 8 L^2 K sigma^2 etabar^2
        "general": 4 * Delta / (K * T * eta * etabar) + 8 * L * sigma**2 * eta * etabar / n
        + 8 * L**2 * K * sigma**2 * etabar**2,
    }
    # (13): etabar <= 1/(4 sqrt(3) L K), eta etabar <= 1/(4 L K lam)
    conditions = {"etabar <= 1/(4 sqrt(3) L K)": (etabar, 1 / (4 * sqrt(3) * L * K)),
                  "eta etabar <= 1/(4LK lam)": (eta * etabar, 1 / (4 * L * K * lam))}
    # eta = sqrt(nK Delta/2), etabar = 1/(K sqrt(sigma^2 L T))
    schedule = {"eta": sqrt(n * K * Delta / 2), "etabar": 1 / (K * sqrt(sigma**2 * L * T))}
    assert_goldens(d.THEOREM_2, VALUES, bounds, conditions, schedule)
