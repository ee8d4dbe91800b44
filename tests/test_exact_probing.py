"""The probe layout helpers every exact model reads its normal draws through (ratecheck.exact.probing): the columns
of a probe's standard-normal draws, the script that serves them call after call, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest

from ratecheck.exact import NotExact
from ratecheck.exact.probing import ProbeStream, ProbeStreams, column_script, normal_layout


def _journal(*draws):
    """Log the draws (purpose, kind, shape) as a probe with two purposes would."""
    journal: list = []
    streams = ProbeStreams(1, lambda purpose: ProbeStream(1, None, lambda i, s: np.full((1, *s), 0.5),
                                                          purpose=purpose, journal=journal))
    for purpose, kind, shape in draws:
        getattr(streams[purpose], kind)(shape)
    return journal


def test_the_layout_gives_each_calls_columns_per_client():
    sizes, offsets = normal_layout(_journal(("noise", "normal", (3, 2)), ("data", "normal", (3, 2, 2)),
                                            ("noise", "normal", (3,))), 3, "probe")
    assert sizes == [2, 4, 1] and offsets.tolist() == [0, 2, 6, 7]


@pytest.mark.parametrize("draw, why", [(("noise", "uniform", (3,)), "uniform numbers of shape"),
                                       (("noise", "normal", (2, 3)), "normal numbers of shape \\(2, 3\\)"),
                                       (("noise", "normal", ()), "normal numbers of shape \\(\\)")])
def test_the_layout_refuses_other_draws_naming_them(draw, why):
    with pytest.raises(NotExact, match=f"probe drew {why}.*client axis first \\(3 clients\\)"):
        normal_layout(_journal(("noise", "normal", (3, 1)), draw), 3, "probe")


def test_the_script_serves_the_columns_call_after_call_across_streams():
    Z = np.arange(2 * 3 * 7, dtype=float).reshape(2, 3, 7)  # (R, clients, columns)
    script = column_script(Z, [2, 4, 1], "drawn otherwise")
    streams = ProbeStreams(2, lambda purpose: ProbeStream(2, script, purpose=purpose))
    a, b, c = streams["noise"].normal((3, 2)), streams["data"].normal((3, 2, 2)), streams["noise"].normal((3,))
    assert np.array_equal(a, Z[:, :, 0:2]) and np.array_equal(b, Z[:, :, 2:6].reshape(2, 3, 2, 2))
    assert np.array_equal(c, Z[:, :, 6])
    with pytest.raises(NotExact, match="drawn otherwise"):  # a fourth call: not in the probed layout
        streams["noise"].normal((3,))


def test_the_script_without_a_client_axis_and_its_size_refusal():
    Z = np.arange(2 * 5, dtype=float).reshape(2, 5)  # (R, columns): a whole round's draws
    script = column_script(Z, [3, 2], "sizes differ")
    assert np.array_equal(script(0, (3,)), Z[:, :3]) and np.array_equal(script(0, (1, 2)), Z[:, 3:].reshape(2, 1, 2))
    with pytest.raises(NotExact, match="sizes differ"):
        column_script(Z, [3, 2], "sizes differ")(0, (4,))
