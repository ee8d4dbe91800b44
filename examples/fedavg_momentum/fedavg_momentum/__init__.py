"""FedAvg with server momentum (FedAvgM), its noise-floor theorem and two claims: a worked example
of checking one's own algorithm with ratecheck from outside the package."""
