"""The ``claims`` marker for this suite (the ratecheck pytest plugin adds it to tests that use its claim
fixtures, are parametrized over claims or are marked ``full``): here also every test that reads the
registered claims' runs (``registered_traces``), the modules that decide claims on broken variants, run
counterexample searches or fuzz a thousand inputs, and the Monte-Carlo sweeps that check exact values
against their CI. ``pytest -m "not claims"`` is the unit layer (see the README for its time).

The rule for a new test. The unit layer's budget is one minute on two idle cores for about a thousand
tests, so a unit test takes well under 0.3 s. Mark a test ``@pytest.mark.claims`` (with a comment saying
which of these it does), or name its module to match CLAIM_MODULES, when it
- decides a registered claim on its own runs: ``check_claims``, ``claim.decide`` on ``claim.runs(profile)``,
  ``ratecheck check`` / ``report`` / ``mutate`` through the CLI, on the code or on a broken variant
  (trajectory oracles, sensitivity tests, goldens that run the claim);
- runs a search (hunt) or fuzzes many inputs;
- sweeps Monte-Carlo replicas to check an exact value inside their CI (name it ``..._inside_monte_carlo_ci``:
  SWEEP_TESTS; split such a check out of a unit test rather than mark the whole test);
- starts new processes that import ratecheck to decide claims.
A golden that evaluates a theorem's formula at fixed constants, a recursion on a small instance, or a
property of a small instance (a few clients, dimension up to about 8, tens of rounds) is a unit test.
Prefer making a test cheap to marking it: the smallest instance on which every factor under test is
non-trivial; expensive setup shared by a module- or session-scoped fixture (``process_executor``,
``dask_executor`` below: the tests on the Dask cluster run last, together); pytest sessions in this process
(tests/test_pytest_plugin.py: a new registry per session). A module of claims tests alone is not imported by
the unit layer. Measure CPU, not wall time, on a shared machine: ``/usr/bin/time -v python -m pytest -m "not
claims" -q --durations=20`` (user + sys counts the worker processes and the Dask cluster too).

Both cores. A run of whole directories (``pytest``, ``pytest -m "not claims"``) is distributed over
pytest-xdist workers (pytest_cmdline_main below; ``-n 0`` or ``-p no:xdist`` keeps it in one process, and a
run of named files stays there anyway). Each worker collects the suite and makes its own session fixtures, so
a test that shares an expensive fixture must say so to be sent to the worker that has it: take a fixture of
SHARED_FIXTURES by name (or as a parameter value naming it), or a module-scoped fixture defined in the suite
(its module is then one work unit, _xdist_group); a new session fixture that is expensive joins
SHARED_FIXTURES. Tests write under ``tmp_path`` (a directory per worker); the tests that write one fixed path
(tests/test_report_real.py's run cache in the checkout) are one work unit, through their module fixture."""

import gc
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ratecheck.runner.executors import DaskExecutor, ProcessExecutor

# modules whose every test decides registered claims (sensitivity to broken variants: test_sensitivity_*.py,
# and the trajectory oracles on the code and on plausible bugs: test_oracles_*.py), runs hunts
# (test_hunt.py, test_hunts_*.py) or fuzzes the inputs (about 1,300 generated runs and CLI calls)
CLAIM_MODULES = ("test_sensitivity_", "test_oracles_", "test_hunt", "test_fuzz")
# tests that sweep Monte-Carlo replicas to check an exact value inside their CI (test_exact.py; exact runs
# that agree "_with_monte_carlo" at 4 SE over 2,000-3,000 replicas: test_exact_multiplicative.py,
# test_stochastic_hessian.py; its noise's moments over 100,000 draws a slot), or an exact minibatch variance
# with 20,000 replicas (test_quadratic_bilevel.py)
SWEEP_TESTS = ("inside_monte_carlo_ci", "_with_monte_carlo", "test_n3_finite_sum_minibatch_variance_is_exact")


def _runs_claims_or_sweeps(item: pytest.Item) -> bool:
    module = item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) is not None else ""
    name = getattr(item, "originalname", item.name)
    return ("registered_traces" in getattr(item, "fixturenames", ()) or module.startswith(CLAIM_MODULES)
            or any(pattern in name for pattern in SWEEP_TESTS))


def _deselects_claims(markexpr: str) -> bool:
    """True when ``-m markexpr`` deselects every test marked ``claims``, whatever its other markers: the
    expression is false for each set of the names it mentions that holds ``claims``."""
    if not markexpr:
        return False
    try:
        from _pytest.mark.expression import Expression

        expression = Expression.compile(markexpr)
    except Exception:  # pytest's parser moved, or the expression is bad (pytest says so itself)
        return False
    names = sorted(set(re.findall(r"[\w.+-]+", markexpr)) - {"and", "or", "not", "True", "False", "claims"})
    if len(names) > 10:
        return False
    for chosen in itertools.chain.from_iterable(itertools.combinations(names, k) for k in range(len(names) + 1)):
        present = {"claims", *chosen}
        try:
            if expression.evaluate(lambda name, /, **kwargs: not kwargs and name in present):
                return False
        except Exception:  # a marker with arguments (name(key=value)): do not guess
            return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module whose every test is marked ``claims`` (CLAIM_MODULES) is not even imported when ``-m``
    deselects those tests: the unit layer does not pay for importing and rewriting them."""
    if collection_path.suffix == ".py" and collection_path.name.startswith(CLAIM_MODULES) \
            and _deselects_claims(config.getoption("markexpr", "")):
        return True
    return None


# the session-scoped fixtures of this suite that are expensive to make (a Dask cluster, the registered claims'
# sweep, a process pool): under xdist the tests that use one run on one worker, so it is made once
SHARED_FIXTURES = ("dask_executor", "registered_traces", "process_executor")
MAX_WORKERS = 4  # each worker collects the suite anew (about 9 CPU-s) and holds its imports in memory


def _uses_dask_cluster(item: pytest.Item) -> bool:
    """The test takes ``dask_executor``, by name or as the value of a parameter that names the executor."""
    return _shared_fixture(item) == "dask_executor"


def _shared_fixture(item: pytest.Item) -> str | None:
    """The first of SHARED_FIXTURES the test takes, by name or as the value of a parameter that names it
    (``"dask"`` or ``"dask_executor"``, for ``request.getfixturevalue``)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    named = set(getattr(item, "fixturenames", ())) | {value for value in params.values() if isinstance(value, str)}
    return next((name for name in SHARED_FIXTURES if {name, name.removesuffix("_executor")} & named), None)


def _xdist_group(item: pytest.Item) -> str | None:
    """The work unit of a test under ``--dist loadgroup``: the shared fixture it takes, else its module when
    it takes a module-scoped fixture of this suite (made once per worker that runs the module), else none
    (the test is a unit of its own). A module that marks itself ``xdist_group`` keeps its own group (its tests
    share module-level state, as tests/test_fuzz.py's input counts)."""
    if item.get_closest_marker("xdist_group"):
        return None
    if shared := _shared_fixture(item):
        return shared
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(d.scope in ("module", "package", "class") and d.baseid for defs in definitions.values() for d in defs):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _runs_claims_or_sweeps(item):
            item.add_marker(pytest.mark.claims)
    # the tests on the Dask cluster run last, together: the session's one cluster starts once and idles
    # (heartbeats, about 0.1 CPU-s a second) for no other test; the order is otherwise kept
    items[:] = [item for item in items if not _uses_dask_cluster(item)] + \
        [item for item in items if _uses_dask_cluster(item)]
    if getattr(config.option, "loadgroup", False):  # an xdist worker of a --dist loadgroup run
        groups = {item: _xdist_group(item) for item in items}
        for item, group in groups.items():
            if group:
                item.add_marker(pytest.mark.xdist_group(group))
        # the work units are handed out in this order (pytest_cmdline_main turns xdist's reordering off):
        # the longest, the registered claims' sweep, first, so the other worker takes the rest meanwhile
        items.sort(key=lambda item: groups[item] != "registered_traces")


def pytest_collection_finish(session: pytest.Session) -> None:
    """The objects made by importing the package, sympy and the test modules (about 260,000) live to the end of
    the session: frozen, the garbage collector's full passes during the tests (some 30, and pytest's five at
    the end) no longer scan them again each time."""
    gc.freeze()


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.hookimpl(tryfirst=True)  # before xdist reads its options
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A run of whole directories (``pytest``, ``pytest -m "not claims"``, ``pytest tests``) is distributed
    over one pytest-xdist worker a core (at most MAX_WORKERS) with ``--dist loadgroup`` (_xdist_group);
    a run of named files or tests stays in this process, as does any run given ``--dist``, ``--tx``, ``--pdb``,
    ``--trace``, ``--collect-only``, ``-p no:xdist``, one core, or no pytest-xdist installed. A run given
    ``-n N`` alone is distributed over N workers with the same groups (xdist's default ``--dist load`` would
    build the registered claims' sweep and a Dask cluster in every worker)."""
    option = config.option
    if getattr(config, "workerinput", {}).get("ratecheck_loadgroup"):  # a worker of a run distributed below
        option.dist, option.loadgroup = "loadgroup", True  # its tests' node ids then carry their groups
    if hasattr(config, "workerinput") or "PYTEST_XDIST_WORKER" in os.environ or not config.pluginmanager.hasplugin("xdist") \
            or option.dist != "no" or option.tx or option.collectonly or option.usepdb \
            or getattr(option, "trace", False) or _cores() < 2:
        return  # an xdist worker (never distributes again), or the user chose
    if option.numprocesses is not None:  # -n N: the user's count, our groups
        if option.numprocesses not in (0, "0"):
            option.dist = "loadgroup"
            option.loadscopereorder = False
        return
    here = config.invocation_params.dir
    if all((here / arg).is_dir() for arg in config.args):
        option.numprocesses = min(_cores(), MAX_WORKERS)
        option.dist = "loadgroup"
        option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)  # an xdist hook: absent without pytest-xdist
def pytest_configure_node(node: Any) -> None:
    """Workers rebuild their options from the command line alone: tell them the mode set above, so that each
    adds its tests' groups to their node ids (xdist does so only when its own option says loadgroup)."""
    node.workerinput["ratecheck_loadgroup"] = node.config.option.dist == "loadgroup"


@pytest.fixture(scope="session")
def process_executor() -> Iterator[ProcessExecutor]:
    """One pool of two worker processes for the session's executor tests (starting one costs a second; an
    idle pool costs nothing)."""
    with ProcessExecutor(2) as executor:
        yield executor


@pytest.fixture(scope="session")
def dask_executor() -> Iterator[DaskExecutor]:
    """One local Dask cluster of two workers for the session (starting one costs about 3 CPU-s in this
    process and its workers); the tests that use it run last (pytest_collection_modifyitems above)."""
    pytest.importorskip("distributed")
    with DaskExecutor(local_workers=2) as executor:
        yield executor
