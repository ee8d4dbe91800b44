"""The golden check of theorem encodings (issue #23 item 3): an encoded theorem, evaluated at a reference point,
against numbers computed by hand from the paper's printed expressions (in each tests/test_goldens_<paper>.py)."""

from collections.abc import Mapping

import pytest


def assert_goldens(theorem, values: Mapping[str, float], bounds: Mapping[str, float],
                   conditions: Mapping[str, tuple[float, float]] | None, schedule: Mapping[str, float] | None = None,
                   rel: float = 1e-12) -> None:
    """Every bound version and every condition (lhs, rhs) of ``theorem`` at ``values`` equals its hand value;
    none may be left without one (a new bound or condition needs its golden). ``conditions=None``: the
    conditions are not covered here (the test says why). ``schedule``: the prescribed step sizes, evaluated
    with the schedule applied."""
    ev = theorem.evaluate(values, use_schedule=False)
    assert set(ev.bounds) == set(bounds), f"{theorem.id}: bounds without a golden: {set(ev.bounds) ^ set(bounds)}"
    for version, hand in bounds.items():
        assert ev.bounds[version] == pytest.approx(hand, rel=rel), (theorem.id, version)
    if conditions is None:
        conditions = {}
        ev = type(ev)(conditions=(), bounds=ev.bounds, schedule=ev.schedule, values=ev.values)
    names = {c.name for c in ev.conditions}
    assert names == set(conditions), f"{theorem.id}: conditions without a golden: {names ^ set(conditions)}"
    for c in ev.conditions:
        lhs, rhs = conditions[c.name]
        assert (c.lhs, c.rhs) == (pytest.approx(lhs, rel=rel), pytest.approx(rhs, rel=rel)), (theorem.id, c.name)
    if schedule is not None:
        given = {k: v for k, v in values.items() if k not in schedule}  # the schedule sets its own symbols
        sched = theorem.evaluate(given, use_schedule=True).schedule
        assert set(sched) == set(schedule), (theorem.id, set(sched) ^ set(schedule))
        for name, hand in schedule.items():
            assert sched[name] == pytest.approx(hand, rel=rel), (theorem.id, name)
