"""Client participation, shared by every algorithm, vectorized over replicas.

Three conventions appear in the papers:

* ``full``: every client, every round.
* ``without_replacement``: m distinct clients uniformly at random (SimFBO, FESS-GDA, FedJAX).
* ``with_replacement``: m i.i.d. uniform draws, a multiset; a client drawn twice counts twice
  (DeFedAvg, fedpa). Each draw has weight 1/m, so the aggregate is unbiased for the client mean.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..seeding import ReplicaStream
from .options import KindOption

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
        return num_clients if self.clients is None else int(self.clients)  # None exactly when "full"

    def validate(self, num_clients: int) -> None:
        if self.mode == "without_replacement" and self.clients is not None and self.clients > num_clients:
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

    # -- the sampling distribution, exactly (exact mode, issue #8) ----------------------------------
    def outcome_count(self, num_clients: int) -> int:
        """How many distinct outcomes a round can draw: sets, or multisets with replacement."""
        m = self.per_round(num_clients)
        if self.mode == "full":
            return 1
        if self.mode == "without_replacement":
            return math.comb(num_clients, m)
        return math.comb(num_clients + m - 1, m)

    def outcomes(self, num_clients: int) -> tuple[np.ndarray, np.ndarray]:
        """Every outcome as client ids (K, m) in increasing order, and its exact probability (K,):
        C(N, m) equally likely sets, or multisets with multinomial weights m!/(prod n_i!) N^-m."""
        N, m = num_clients, self.per_round(num_clients)
        if self.mode == "full":
            return np.arange(N)[None, :], np.ones(1)
        if self.mode == "without_replacement":
            clients = np.array(list(itertools.combinations(range(N), m)), dtype=np.int64).reshape(-1, m)
            return clients, np.full(clients.shape[0], 1.0 / clients.shape[0])
        clients = np.array(list(itertools.combinations_with_replacement(range(N), m)), dtype=np.int64).reshape(-1, m)
        counts = (clients[..., None] == np.arange(N)).sum(axis=-2)  # multiplicities, (K, N)
        log_factorials = np.array([math.lgamma(k + 1.0) for k in range(m + 1)])
        return clients, np.exp(math.lgamma(m + 1.0) - log_factorials[counts].sum(axis=1) - m * math.log(N))

    def draws_for(self, clients: np.ndarray, num_clients: int) -> np.ndarray | None:
        """Uniform numbers (K, *draw_shape) that make ``sample`` return each row of ``clients`` (K, m)
        (as a set, or a multiset with replacement): scripted draws for exact mode's probes."""
        N, m = num_clients, self.per_round(num_clients)
        clients = np.asarray(clients, dtype=np.int64).reshape(-1, m)
        if self.mode == "full":
            return None
        if self.mode == "with_replacement":  # floor(N U) = c at the mid-point U of cell c
            return (clients + 0.5) / N
        # the chosen clients hold the m smallest keys, in slot order; the others follow in id order
        chosen = np.zeros((clients.shape[0], N), dtype=bool)
        rows = np.arange(clients.shape[0])[:, None]
        chosen[rows, clients] = True
        if not (chosen.sum(axis=1) == m).all():
            raise ValueError("draws_for: an outcome without replacement repeats a client")
        others = np.argsort(chosen, axis=1, kind="stable")[:, :N - m]
        keys = np.empty((clients.shape[0], N))
        keys[rows, clients] = (np.arange(m) + 0.5) / N
        keys[rows, others] = (m + np.arange(N - m) + 0.5) / N
        return keys

    def multiplicity_moments(self, num_clients: int) -> tuple[np.ndarray, np.ndarray]:
        """E n_i (N,) and E n_i n_k (N, N) of the clients' multiplicities in one round, exact."""
        N, m = num_clients, self.per_round(num_clients)
        if self.mode == "full":
            return np.ones(N), np.ones((N, N))
        if self.mode == "without_replacement":
            second = np.full((N, N), m * (m - 1) / (N * (N - 1)) if N > 1 else 0.0)
            np.fill_diagonal(second, m / N)
        else:  # multinomial(m, 1/N)
            second = np.full((N, N), m * (m - 1) / N**2)
            np.fill_diagonal(second, m / N * (1 - 1 / N) + (m / N) ** 2)
        return np.full(N, m / N), second


def first_occurrence(clients: np.ndarray) -> np.ndarray:
    """For each slot (R, m), the slot index of the first draw of the same client in that row.

    Used so that a client drawn twice contributes the same update twice (multiset semantics), not two
    independent ones.
    """
    same = clients[:, :, None] == clients[:, None, :]
    return np.argmax(same, axis=2)
