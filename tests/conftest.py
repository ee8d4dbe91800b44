"""The ``claims`` marker for this suite (the ratecheck pytest plugin adds it to tests that use its claim
fixtures, are parametrized over claims or are marked ``full``): here also every test that reads the
registered claims' runs (``registered_traces``) and the modules that decide claims on broken variants or
run counterexample searches. ``pytest -m "not claims"`` is the unit layer."""

import pytest

# modules whose every test decides registered claims (sensitivity to broken variants) or runs hunts
CLAIM_MODULES = ("test_sensitivity_", "test_hunts_")


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module is not None else ""
        if "registered_traces" in getattr(item, "fixturenames", ()) or module.startswith(CLAIM_MODULES):
            item.add_marker(pytest.mark.claims)
