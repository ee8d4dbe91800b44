"""The global models a run on a timeline still reads, keyed by version (the numerics of spec defedavg §2.7.3).

At round t a run on an event timeline (ratecheck.model.asynchrony) starts each slot's job from w^b, b the slot's
base version. Which versions the rounds to come read is known ahead: the bases of the rounds recorded but not yet
run, counted per version, and, beyond the record, the versions of the updates in flight and every version from the
newest model the clients hold on (``Timelines.pending``). ``VersionedModels`` holds a model only while some round
to come can read it, so its memory, and the time a round spends on it, grow with the number of distinct versions in
flight, not with the span from the oldest to the newest: a job whose base stays old for many rounds costs one model,
not one per round since. Reading a version it no longer holds raises ``TimelineError``; it never returns another
model.

Example (two replicas, one slot a round; the second round reads w^0 again, the third only w^2)::

    >>> import numpy as np
    >>> from ratecheck.model.asynchrony import Timelines
    >>> record = Timelines(np.zeros((2, 3, 1), int), np.array([[[0], [0], [2]]] * 2), np.ones((2, 3)), False, (0, 1))
    >>> models = VersionedModels(np.zeros((2, 4)), record)
    >>> for t in range(3):
    ...     start = models.read(record.base[:, t])
    ...     models = models.advance(t, start[:, 0] + 1.0)
    >>> sorted(models.held())  # w^0 and w^2 were released when their last reader ran
    [3]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from .asynchrony import TimelineError


class Recorded(Protocol):
    """What the store reads of a timeline: the base versions of the rounds recorded so far, (R, T, n), and what
    the rounds after them can read (``Timelines.pending``)."""

    base: np.ndarray

    def pending(self) -> tuple[frozenset[int], float]: ...


class VersionedModels:
    """w^s of R replicas, (R, d) per version s, in one buffer with a slot per version held; ``latest`` is w^t."""

    def __init__(self, x0: np.ndarray, timeline: Recorded, capacity: int = 4):
        replicas, dim = x0.shape
        self.timeline = timeline
        self.buffer = np.empty((replicas, max(1, capacity), dim))
        self.buffer[:, 0] = x0
        self.slot: dict[int, int] = {0: 0}  # version -> its slot in the buffer
        self.spare = list(range(self.buffer.shape[1] - 1, 0, -1))
        self.readers: dict[int, int] = {}  # version -> slots of the recorded rounds still to run that read it
        self.counted = 0  # recorded rounds whose reads are in `readers`
        self.in_flight: frozenset[int] = frozenset()
        self.floor: float = 0.0
        self.t = 0

    @property
    def latest(self) -> np.ndarray:
        """w^t, a copy: its slot is reused once no round reads it."""
        return self.buffer[:, self.slot[self.t]].copy()

    def held(self) -> list[int]:
        """The versions whose models are kept."""
        return list(self.slot)

    def live(self, version: int) -> bool:
        """Whether a round still to run can read w^version."""
        return self.readers.get(version, 0) > 0 or version in self.in_flight or version >= self.floor

    def read(self, base: np.ndarray) -> np.ndarray:
        """The models (R, m, d) the slots of base versions (R, m) start from."""
        self._count_new_rounds()
        try:
            slots = [self.slot[v] for v in base.ravel().tolist()]  # R x m look-ups: cheaper than np.unique's sort
        except KeyError as exc:
            missing = int(exc.args[0])
            raise TimelineError(
                f"round {self.t} reads w^{missing}, a model no longer kept: it was released when no recorded round "
                f"still to run and no update in flight read it (versions kept: {sorted(self.slot)}); a policy that "
                "starts a job from an older version than the updates in flight and the newest model the clients "
                "hold must list it in Simulation.pending_versions()") from None
        return self.buffer[np.arange(base.shape[0])[:, None], np.array(slots, dtype=np.int64).reshape(base.shape)]

    def advance(self, t: int, x_new: np.ndarray) -> VersionedModels:
        """After round t: its reads are done, w^{t+1} = x_new is kept, the models no round to come reads are released."""
        if t != self.t:
            raise TimelineError(f"the models stand at version {self.t}; round {t} cannot follow")
        self._count_new_rounds()
        readers, done = self.readers, set()
        for version in self.timeline.base[:, t].ravel().tolist():
            readers[version] -= 1
            done.add(version)
        read_out = [version for version in done if not readers[version]]
        for version in read_out:
            del readers[version]
        self.slot[t + 1] = self._free_slot()
        self.buffer[:, self.slot[t + 1]] = x_new
        self.t = t + 1
        self._release([t, *read_out])
        return self

    def _count_new_rounds(self) -> None:
        """Count the reads of the rounds the timeline recorded since the last call and take its updates in flight;
        release what neither reads (an update the policy discarded, a pin the new rounds now count)."""
        recorded = self.timeline.base.shape[1]
        if recorded == self.counted:
            return
        versions, counts = np.unique(self.timeline.base[:, self.counted:], return_counts=True)
        for version, count in zip(versions.tolist(), counts.tolist()):
            self.readers[version] = self.readers.get(version, 0) + count
        self.counted = recorded
        self.in_flight, self.floor = self.timeline.pending()
        self._release(list(self.slot))

    def _release(self, versions: Iterable[int]) -> None:
        slot, readers, in_flight, floor = self.slot, self.readers, self.in_flight, self.floor
        for version in versions:  # live() inlined: a round's hot path
            if version in slot and version != self.t and not (
                    readers.get(version, 0) > 0 or version in in_flight or version >= floor):
                self.spare.append(slot.pop(version))

    def _free_slot(self) -> int:
        if not self.spare:
            held = self.buffer.shape[1]
            grown = np.empty((self.buffer.shape[0], 2 * held, self.buffer.shape[2]))
            grown[:, :held] = self.buffer
            self.buffer = grown
            self.spare = list(range(2 * held - 1, held - 1, -1))
        return self.spare.pop()
