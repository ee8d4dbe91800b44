"""FedAvgM: FedAvg whose server keeps a momentum buffer (Hsu, Qi and Brown 2019, arXiv:1909.06335).

    v^{t+1} = beta v^t + Delta^t,    w^{t+1} = w^t - eta v^{t+1}

Only the server step changes: sampling, local steps, delays and duplicate clients are FedAvg's.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratecheck.algorithms.fedavg import FedAvg
from ratecheck.params import real


@dataclass(frozen=True)
class FedAvgM(FedAvg):
    name: ClassVar[str] = "fedavgm"
    source: ClassVar[str] = "Hsu, Qi, Brown 2019 (arXiv:1909.06335), FedAvgM: server momentum"

    beta: float = real(0.9, "server momentum (0: plain FedAvg)", low=0.0, high=1.0, high_open=True)

    def server_init(self, x0: np.ndarray) -> np.ndarray:
        return np.zeros_like(x0)  # v^0 = 0

    def server_step(self, x, direction, server, t):
        velocity = self.beta * server + direction
        return x - self.eta_global * velocity, velocity
