"""Random streams: every stream derives from (seed, run identity, replica, purpose).

A replica's numbers must not depend on which other replicas or configurations ran, nor on the
executor. So each replica owns its own generator per purpose ("noise", "sampling", "delay", ...),
spawned from ``SeedSequence(seed, spawn_key=(*run_key_words, replica, purpose_word))``.

Drawing from R generators one by one in every local step would put a Python loop over replicas in
the hot path. ``ReplicaStream`` instead refills a per-replica buffer in large chunks (one loop over
replicas per chunk) and serves slices of shape (R, ...). numpy's Generator yields the same sequence
whether numbers are drawn in one call or in pieces, so the chunk size never changes the numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .params import check_run

_CHUNK = 1 << 14  # floats per replica and refill (what is left unused at the end of a run is drawn for nothing)


def stable_hash(obj: Any) -> str:
    """SHA-256 of a canonical JSON rendering: the same on every machine and Python version."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot hash object of type {type(obj).__name__} in a run configuration")


def _words(hex_digest: str, count: int = 4) -> tuple[int, ...]:
    """The first `count` 32-bit words of a hex digest (SeedSequence wants small ints)."""
    return tuple(int(hex_digest[8 * i : 8 * (i + 1)], 16) for i in range(count))


def replica_generator(seed: int, run_key: str, replica: int, purpose: str) -> np.random.Generator:
    """The generator of one (run, replica, purpose): independent of everything else that runs."""
    check_run("replica_generator", "seed", seed)
    purpose_word = _words(hashlib.sha256(purpose.encode()).hexdigest(), 1)
    seq = np.random.SeedSequence(seed, spawn_key=(*_words(run_key), int(replica), *purpose_word))
    return np.random.Generator(np.random.PCG64(seq))


class ReplicaStream:
    """Per-replica buffered draws, served with a leading replica axis.

    ``normal((m, d))`` returns an array of shape (R, m, d) whose row r comes from replica r's own
    generator only. A served array is a view of the buffer that is never served again, so callers
    may scale it in place. Normal and uniform draws use separate buffers of the same generator; the order of
    requests is part of the algorithm, so it is deterministic.
    """

    def __init__(self, seed: int, run_key: str, replicas: Sequence[int], purpose: str):
        check_run("ReplicaStream", "seed", seed)
        self.replicas = tuple(int(r) for r in replicas)
        self._key = (seed, run_key, purpose)
        self._generators: list[np.random.Generator] | None = None  # made at the first draw: a stream
        # asked for but never drawn from (the delay stream of a run without delays) costs nothing
        self._buffers: dict[str, np.ndarray] = {}
        self._pos: dict[str, int] = {}

    @property
    def count(self) -> int:
        return len(self.replicas)

    @property
    def _gens(self) -> list[np.random.Generator]:
        if self._generators is None:
            seed, run_key, purpose = self._key
            self._generators = [replica_generator(seed, run_key, r, purpose) for r in self.replicas]
        return self._generators

    def _take(self, kind: str, size: int) -> np.ndarray:
        buf = self._buffers.get(kind)
        pos = self._pos.get(kind, 0)
        if buf is None or pos + size > buf.shape[1]:
            rest = buf.shape[1] - pos if buf is not None else 0
            fresh = np.empty((self.count, max(_CHUNK, 2 * size)))
            if rest:
                assert buf is not None
                fresh[:, :rest] = buf[:, pos:]
            for row, gen in zip(fresh, self._gens):  # one loop per chunk, not per draw
                if kind == "normal":
                    gen.standard_normal(out=row[rest:])
                else:
                    gen.random(out=row[rest:])
            buf, pos = fresh, 0
            self._buffers[kind] = buf
        self._pos[kind] = pos + size
        return buf[:, pos : pos + size]

    def normal(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Standard normal draws of shape (R, *shape)."""
        size = math.prod(int(s) for s in shape)  # not np.prod: ~20 us a call on the engine's hot path
        return self._take("normal", size).reshape((self.count, *shape))

    def uniform(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Uniform [0, 1) draws of shape (R, *shape)."""
        size = int(np.prod(shape, dtype=np.int64))
        return self._take("uniform", size).reshape((self.count, *shape))

    def integers(self, high: int, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Uniform integers in {0, ..., high-1} of shape (R, *shape) (floor of high * U)."""
        return np.minimum((self.uniform(shape) * high).astype(np.int64), high - 1)


class Streams:
    """The named random streams of one run, each a ReplicaStream over the same replicas."""

    def __init__(self, seed: int, run_key: str, replicas: Sequence[int] | np.ndarray):
        self.seed = seed
        self.run_key = run_key
        self.replicas = tuple(int(r) for r in replicas)
        self._streams: dict[str, ReplicaStream] = {}

    def __getitem__(self, purpose: str) -> ReplicaStream:
        if purpose not in self._streams:
            self._streams[purpose] = ReplicaStream(self.seed, self.run_key, self.replicas, purpose)
        return self._streams[purpose]


def restart_seed(seed: int, restart: int, seed_offset: int = 0) -> int:
    """The hypothesis seed of restart ``restart`` of a hunt registered with ``seed``, under ``seed_offset``.

    Offset 0 is the registered search: seed + restart. Under an offset the seed is drawn by a
    ``SeedSequence`` from (seed, offset, restart) and moved into [2^64, 2^65): the searches of two offsets, or
    of two restarts, never share a seed (``seed + restart + offset`` made offsets 1 apart share all but one
    restart, and an offset's restarts collide with the registered searches of a hunt seeded higher)."""
    if not seed_offset:
        return int(seed) + int(restart)
    words = np.random.SeedSequence([int(seed), int(seed_offset), int(restart)]).generate_state(2, np.uint32)
    return (1 << 64) | (int(words[0]) << 32) | int(words[1])
