"""Client participation, shared by every algorithm, vectorized over replicas.

Three conventions appear in the papers:

* ``full``: every client, every round.
* ``without_replacement``: m distinct clients uniformly at random (SimFBO, FESS-GDA, FedJAX).
* ``with_replacement``: m i.i.d. uniform draws, a multiset; a client drawn twice counts twice
  (DeFedAvg, fedpa). Each draw has weight 1/m, so the aggregate is unbiased for the client mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .options import KindOption
from .seeding import ReplicaStream

MODES = ("full", "without_replacement", "with_replacement")


@dataclass(frozen=True)
class Participation(KindOption):
    """Parse from 'full', 'with_replacement:8' or 'without_replacement:8'."""

    label: ClassVar[str] = "participation"
    example: ClassVar[str] = "with_replacement:8"

    mode: str = "full"
    clients: int | None = None  # m, the number of draws per round (None for full)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"participation mode must be one of {MODES}, got {self.mode!r}")
        if self.mode == "full":
            if self.clients is not None:
                raise ValueError("participation 'full' takes no client count (it uses all N clients)")
        elif (isinstance(self.clients, (bool, np.bool_)) or not isinstance(self.clients, (int, np.integer))
              or self.clients < 1):
            raise ValueError(
                f"participation {self.mode!r} needs an integer client count m >= 1, got {self.clients!r}"
            )
        else:
            object.__setattr__(self, "clients", int(self.clients))

    def __str__(self) -> str:
        return self.mode if self.clients is None else f"{self.mode}:{self.clients}"

    def per_round(self, num_clients: int) -> int:
        """Number of slots per round (draws, counted with multiplicity)."""
        self.validate(num_clients)
        return num_clients if self.mode == "full" else int(self.clients)

    def validate(self, num_clients: int) -> None:
        if self.mode == "without_replacement" and self.clients > num_clients:
            raise ValueError(
                f"participation without replacement needs m <= N, got m={self.clients} > N={num_clients}"
            )

    def sample(self, num_clients: int, stream: ReplicaStream) -> np.ndarray:
        """Client ids of shape (R, m): row r is replica r's draw for this round."""
        m = self.per_round(num_clients)
        replicas = stream.count
        if self.mode == "full":
            return np.broadcast_to(np.arange(num_clients), (replicas, num_clients))
        if self.mode == "with_replacement":
            return stream.integers(num_clients, (m,))
        # A uniformly random m-subset: the ranks of i.i.d. uniforms are a uniform permutation.
        keys = stream.uniform((num_clients,))
        return np.argpartition(keys, m - 1, axis=1)[:, :m] if m < num_clients else np.argsort(keys, axis=1)

    def inclusion_probability(self, num_clients: int) -> float:
        """P(client i is drawn at least once in a round), exact."""
        m = self.per_round(num_clients)
        if self.mode == "with_replacement":
            return 1.0 - (1.0 - 1.0 / num_clients) ** m
        return m / num_clients


def first_occurrence(clients: np.ndarray) -> np.ndarray:
    """For each slot (R, m), the slot index of the first draw of the same client in that row.

    Used so that a client drawn twice contributes the same update twice (multiset semantics), not two
    independent ones.
    """
    same = clients[:, :, None] == clients[:, None, :]
    return np.argmax(same, axis=2)
