"""Probe streams: scripted draws served through the ReplicaStream interface, the layout of a probe's
standard-normal draws as columns and the script that serves them, the tolerance every read-off map is
checked to, and the NotExact refusal."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..seeding import ReplicaStream, Streams

AFFINE_RTOL = 1e-9  # a read-off map must reproduce the code on random inputs to this relative error
PROBE_ELEMENTS = 2**23  # gathered elements a probe call may allocate per chunk of rows (64 MB of floats)
DIVERGENCE_THRESHOLD = 1e100  # as in the engine: a second moment beyond this counts as divergence


class NotExact(ValueError):
    """The run is not linear-Gaussian (or not supported): the message says which piece and why."""


class ProbeStream(ReplicaStream):
    """A ReplicaStream that serves scripted draws instead of random ones.

    ``normal`` serves, call after call, the arrays a ``script(call, shape)`` returns (R, *shape);
    every request is logged in ``calls`` as (kind, shape), so probes can be laid out per draw.
    ``uniform`` serves ``uniform_script`` the same way, or raises NotExact: a uniform draw inside a
    step that should be linear-Gaussian (minibatch sampling, say) is not Gaussian noise.
    """

    def __init__(self, replicas: int, script: Callable[[int, tuple[int, ...]], np.ndarray] | None = None,
                 uniform_script: Callable[[int, tuple[int, ...]], np.ndarray] | None = None,
                 purpose: str = "noise", journal: list | None = None):
        self.replicas = tuple(range(replicas))
        self.purpose = purpose
        self.journal = journal  # shared by the streams of one probe: (purpose, kind, shape) in call order
        self._script = script
        self._uniform_script = uniform_script
        self._integers: int | None = None  # set while integers() draws its uniforms
        self.calls: list[tuple[str, tuple[int, ...]]] = []

    def normal(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        shape = tuple(int(s) for s in shape)
        index = sum(kind == "normal" for kind, _ in self.calls)
        self.calls.append(("normal", shape))
        if self.journal is not None:
            self.journal.append((self.purpose, "normal", shape))
        if self._script is None:
            return np.zeros((self.count, *shape))
        return np.array(self._script(index, shape), dtype=float).reshape((self.count, *shape))

    def uniform(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        shape = tuple(int(s) for s in shape)
        index = sum(kind != "normal" for kind, _ in self.calls)
        kind = "uniform" if self._integers is None else f"integers:{self._integers}"
        self.calls.append((kind, shape))
        if self.journal is not None:
            self.journal.append((self.purpose, kind, shape))
        if self._uniform_script is None:
            raise NotExact(f"stream {self.purpose!r} drew uniform numbers where only Gaussian noise is "
                           "linear-Gaussian")
        return np.array(self._uniform_script(index, shape), dtype=float).reshape((self.count, *shape))

    def integers(self, high: int, shape: tuple[int, ...] = ()) -> np.ndarray:
        """As ReplicaStream.integers (floor of high * U), logged as kind 'integers:<high>'."""
        self._integers = int(high)
        try:
            draws = self.uniform(shape)
        finally:
            self._integers = None
        return np.minimum((draws * high).astype(np.int64), high - 1)


def normal_layout(journal: list, clients: int, what: str) -> tuple[list[int], np.ndarray]:
    """The columns of a probe's draws, read off its ``journal`` (purpose, kind, shape): each call's draws per
    client (``sizes``) and where they start in a client's row of columns (``offsets``, one more than calls).
    Every draw must be standard normal with the client axis (``clients`` long) first; NotExact names the first
    that is not and ``what`` drew it."""
    for purpose, kind, shape in journal:
        if kind != "normal" or not shape or shape[0] != clients:
            raise NotExact(f"{what} drew {kind} numbers of shape {shape} from {purpose!r}: exact mode reads only "
                           f"standard-normal draws with the client axis first ({clients} clients)")
    sizes = [int(np.prod(shape[1:], dtype=np.int64)) for _, _, shape in journal]
    return sizes, np.concatenate([[0], np.cumsum(sizes)]).astype(int)


def column_script(Z: np.ndarray, sizes: tuple[int, ...] | list[int], refusal: str
                  ) -> Callable[[int, tuple[int, ...]], np.ndarray]:
    """A normal script serving the columns of Z, call after call, in the layout ``sizes``: Z is (R, *lead,
    columns), its ``lead`` axes the leading axes of every draw's shape (the client axis, or none), and call j
    takes the next sizes[j] columns. A call beyond the layout or of another size is NotExact(``refusal``):
    the code draws otherwise than probed (data-dependent control flow)."""
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    lead = Z.ndim - 2
    order = iter(range(len(sizes)))

    def script(index: int, shape: tuple[int, ...]) -> np.ndarray:
        call = next(order, None)  # counted here: a call's index is per stream, the layout across streams
        if call is None or int(np.prod(shape[lead:], dtype=np.int64)) != sizes[call]:
            raise NotExact(refusal)
        return Z[..., offsets[call]:offsets[call + 1]].reshape((Z.shape[0], *shape))

    return script


class ProbeStreams(Streams):
    """Streams whose every purpose is a ProbeStream built by ``factory(purpose)``."""

    def __init__(self, replicas: int, factory: Callable[[str], ProbeStream]):
        self.seed = 0
        self.run_key = "probe"
        self.replicas = tuple(range(replicas))
        self._factory = factory
        self._streams: dict[str, ProbeStream] = {}  # type: ignore[assignment]  # this subclass stores ProbeStreams only

    def __getitem__(self, purpose: str) -> ProbeStream:
        if purpose not in self._streams:
            self._streams[purpose] = self._factory(purpose)
        return self._streams[purpose]


def _close(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Largest deviation relative to the size of the values (0 when identical)."""
    scale = max(float(np.max(np.abs(actual), initial=0.0)), float(np.max(np.abs(predicted), initial=0.0)), 1.0)
    return float(np.max(np.abs(actual - predicted), initial=0.0)) / scale
