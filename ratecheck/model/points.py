"""An algorithm's output as named global points: shared by the Monte-Carlo engine and exact mode."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def as_points(output: np.ndarray | Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An algorithm's output as named global points: a bare array is the point "x"."""
    if isinstance(output, Mapping):
        return dict(output)
    return {"x": output}
