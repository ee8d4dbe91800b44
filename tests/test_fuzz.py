"""Seeded fuzzing of the inputs (issue #7): `ratecheck run` through cli.main, and the Python API
(make_problem, make_algorithm, engine.run, RunConfig.from_dict).

Every generated input must either be refused with a clear error (exit 2 and one line naming the
parameter on the command line; a ValueError from the API) or be accepted only if it is plausible
for its parameter (``_plausible``, an oracle written independently of ratecheck.params: numbers
are finite non-bool numbers, integers are integral, flags are booleans, step sizes are positive,
counts are >= 1). Zero uncaught exceptions, zero silent acceptances. Derandomized: the same
inputs every run. COUNTS records how many inputs ran, so the suite can assert the total.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import problems  # noqa: E402
from ratecheck import registry  # noqa: E402
from ratecheck.algorithms import REGISTRY, make_algorithm  # noqa: E402
from ratecheck.cli import main  # noqa: E402
from ratecheck.engine import run  # noqa: E402
from ratecheck.trace import RunConfig  # noqa: E402

COUNTS: Counter[str] = Counter()
OUTCOMES: Counter[int] = Counter()  # exit codes of the CLI inputs
FUZZ = settings(derandomize=True, deadline=None, database=None, print_blob=False,
                suppress_health_check=list(HealthCheck))

registry.default().ensure("algorithm", "problem")  # every registered name, whatever ran before
ALGORITHMS = sorted(i.name for i in registry.default().items("algorithm"))
FAMILIES = sorted(i.name for i in registry.default().items("problem"))
# CLI value texts: odd numbers, words, JSON of every kind, and empty text
CLI_VALUES = ["nan", "NaN", "inf", "-inf", "Infinity", "-1", "0", "-0", "0.0", "1", "2", "2.0", "0.05", "1e-300",
              "1e12", "1e999", "10000000000", "abc", "", " ", "true", "false", "True", "False", "null", "None",
              "[]", "[1, 2]", "[1.0, 2.0, 3.0, 4.0]", "{}", '{"a": 1}', '"x"', "full", "with_replacement:2",
              "without_replacement:99", "without_replacement:0", "constant:1", "uniform:-1", "kind:x", ":", "=",
              "1:2:3", "\u00e9", "\x00", "[[1]]", "1" * 400]
# API values: the same in Python form plus types JSON cannot express (shared with plugins: ratecheck.testing)

from ratecheck.testing.fuzz import API_VALUES  # noqa: E402  (shared with plugins)
from ratecheck.testing.fuzz import algorithm_kinds as _algorithm_kinds  # noqa: E402
from ratecheck.testing.fuzz import plausible as _plausible  # noqa: E402
from ratecheck.testing.fuzz import problem_kinds as _problem_kinds  # noqa: E402


def _home(algorithm: str) -> str:
    """A problem family the algorithm runs on."""
    if algorithm not in REGISTRY:
        return "quadratic"
    kinds = getattr(REGISTRY[algorithm], "problem_kinds", ())
    return kinds[0] if kinds else "quadratic"


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def _names(kinds: dict[str, Any]) -> list[str]:
    return sorted(kinds) + ["nope", "", "eta", "x" * 60]


@st.composite
def cli_runs(draw: Any) -> tuple[list[str], dict[str, Any], dict[str, Any], str, str]:
    algorithm = draw(st.sampled_from(ALGORITHMS + ["no_such_algorithm"]))
    # mostly a family the algorithm runs on, so that the values themselves get tested
    family = draw(st.sampled_from([_home(algorithm)] * 6 + FAMILIES + ["no_such_family"]))
    argv = ["run", algorithm, "--problem", family,
            "--rounds", draw(st.sampled_from(["1", "2", "3", "1", "2", "0", "-1", "x"])),
            "--replicas", draw(st.sampled_from(["1", "2", "1", "0"])), "--seed", draw(st.sampled_from(["0", "7", "0", "-3"]))]
    sets: dict[str, str] = {}
    problem_sets: dict[str, str] = {}
    akinds = _algorithm_kinds(algorithm) if algorithm in REGISTRY else {}
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(_names(akinds)))
        sets[key] = draw(st.sampled_from(CLI_VALUES))
    if family in problems.FAMILIES:
        pkinds = _problem_kinds(family, {})
        for _ in range(draw(st.integers(0, 2))):
            key = draw(st.sampled_from(_names(pkinds)))
            problem_sets[key] = draw(st.sampled_from(CLI_VALUES))
    for k, v in sets.items():
        argv += ["--set", f"{k}={v}"]
    for k, v in problem_sets.items():
        argv += ["--problem-set", f"{k}={v}"]
    return argv, sets, problem_sets, algorithm, family


@settings(FUZZ, max_examples=450)
@given(cli_runs())
def test_fuzz_ratecheck_run(case):
    from ratecheck.cli import _parse_value

    argv, sets, problem_sets, algorithm, family = case
    COUNTS["cli"] += 1
    code, err = _cli(argv)
    OUTCOMES[code] += 1
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.startswith("ratecheck:") or line.startswith("usage:")]
        assert lines, (argv, err)  # one clear line
        return
    # accepted: every value must be plausible for its parameter (zero silent acceptances)
    akinds = _algorithm_kinds(algorithm)
    for key, text in sets.items():
        assert key in akinds, (argv, key)
        assert _plausible(key, _parse_value(text), akinds[key]), (argv, key, text)
    pkinds = _problem_kinds(family, {k: _parse_value(v) for k, v in problem_sets.items()})
    for key, text in problem_sets.items():
        assert key in pkinds, (argv, key)
        assert _plausible(key, _parse_value(text), pkinds[key]), (argv, key, text)


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(FAMILIES), st.dictionaries(st.sampled_from(["kind", "clients", "dim", "zeta", "noise", "seed",
                                                                    "rotate", "mu", "L", "x0", "y0", "a", "c", "sigma",
                                                                    "radius", "upper", "start", "duplicate", "split",
                                                                    "weights", "nope"]),
                                                  st.sampled_from(API_VALUES + ["ncpl", "pwmax", "wgan", "tanh"]),
                                                  max_size=3))
def test_fuzz_make_problem(family, params):
    COUNTS["make_problem"] += 1
    try:
        problem = problems.make_problem(family, params)
    except ValueError as exc:
        assert str(exc), (family, params)
        return
    kinds = _problem_kinds(family, params)
    for key, value in params.items():
        assert key in kinds and _plausible(key, value, kinds[key]), (family, params, key)
    assert problem.num_clients >= 1


@settings(FUZZ, max_examples=300)
@given(st.sampled_from(ALGORITHMS), st.data())
def test_fuzz_make_algorithm(name, data):
    COUNTS["make_algorithm"] += 1
    kinds = _algorithm_kinds(name)
    params = data.draw(st.dictionaries(st.sampled_from(_names(kinds)), st.sampled_from(API_VALUES), max_size=3))
    try:
        algorithm = make_algorithm(name, params)
    except ValueError as exc:
        assert str(exc), (name, params)
        return
    for key, value in params.items():
        assert key in kinds and _plausible(key, value, kinds[key]), (name, params, key)
    assert algorithm.name == name


SMALL = {"quadratic": {"dim": 2, "clients": 4}, "quadratic_bilevel": {"dim_x": 2, "dim_y": 2, "clients": 4},
         "minimax": {"kind": "ncpl", "clients": 2}}


@settings(FUZZ, max_examples=120)
@given(st.sampled_from(ALGORITHMS), st.sampled_from(FAMILIES),
       st.sampled_from([1, 2, 0, -1, True, 2.0, None, "3", 10**12, float("nan")]),
       st.sampled_from([1, 2, 0, True, 2.5, [0, 1], [1, 1], [], "2", 10**9]),
       st.sampled_from([0, 3, -1, None, 1.5, True, 2**70]))
def test_fuzz_engine_run(name, family, rounds, replicas, seed):
    COUNTS["engine.run"] += 1
    algorithm = make_algorithm(name)
    problem = problems.make_problem(family, SMALL.get(family, {}))  # a new family: its defaults
    try:
        trace = run(algorithm, problem, rounds, replicas=replicas, seed=seed)
    except ValueError as exc:
        assert str(exc)
        return
    assert _plausible("rounds", rounds, "int") and _plausible("seed", seed, "int"), (rounds, seed)
    assert isinstance(replicas, list) or _plausible("replicas", replicas, "int")
    assert trace.replicas >= 1


@settings(FUZZ, max_examples=100)
@given(st.dictionaries(st.sampled_from(["algorithm", "params", "problem", "problem_params", "rounds", "replicas",
                                        "seed", "checkpoints", "extra"]), st.sampled_from(API_VALUES), max_size=9))
def test_fuzz_run_config_from_a_cache_file(data):
    COUNTS["RunConfig"] += 1
    try:
        config = RunConfig.from_dict(data)
    except ValueError:
        return
    assert isinstance(config.algorithm, str) and isinstance(config.params, dict)
    assert _plausible("rounds", config.rounds, "int")


def test_fuzz_ran_at_least_1000_inputs():
    """Runs last in this module (pytest keeps file order): the total over the tests above."""
    if len(COUNTS) < 5:
        pytest.skip("run the whole module to count")
    print(f"\nfuzz inputs: {dict(COUNTS)}, total {sum(COUNTS.values())}; CLI exit codes {dict(OUTCOMES)}")
    assert sum(COUNTS.values()) >= 1000, COUNTS
