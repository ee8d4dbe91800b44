"""A stored computation other than a run (``Task``): pure data, so a claim of any layer can ask for one.

The sweep (``ratecheck.runner.sweep``) answers a claim's ``requests`` for tasks from the store or on the
executor, calling the claim's ``compute_task(task)``; ``ratecheck.runner.tasks`` has the rest of the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..seeding import stable_hash

__all__ = ["Task"]


@dataclass(frozen=True)
class Task:
    """One stored computation of claim ``claim``: ``kind`` (e.g. "hunt") and its parameters."""

    kind: str
    claim: str
    spec: Mapping[str, Any]

    def key(self) -> str:
        """The task's key among a check's results (the store adds the code: ratecheck.runner.identity.stored_task_key)."""
        return stable_hash({"task": self.kind, "claim": self.claim, "spec": dict(self.spec)})
