"""Seeded fuzzing of the inputs (issue #7): `ratecheck run` through cli.main, and the Python API
(make_problem, make_algorithm, engine.run, RunConfig.from_dict).

Every generated input must either be refused with a clear error (exit 2 and one line naming the
parameter on the command line; a ValueError from the API) or be accepted only if it is plausible
for its parameter (``_plausible``, an oracle written independently of ratecheck.params: numbers
are finite non-bool numbers, integers are integral, flags are booleans, step sizes are positive,
counts are >= 1). Zero uncaught exceptions, zero silent acceptances. Derandomized: the same
inputs every run. COUNTS records how many inputs ran, so the suite can assert the total.

Issue #24 adds: every declared parameter of every algorithm and family corrupted by its own rule,
and a table of hand-written bad inputs (plugins, LaTeX, cache folders, sizes, addresses, options,
algorithm/family mismatches), each refused with a clear error or handled. The default run is
small; ``--full`` runs the large counts (benchmarks/fuzz_counts.py prints them).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections import Counter
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import ratecheck.problems as problems  # noqa: E402
from ratecheck import registry  # noqa: E402
from ratecheck.algorithms import REGISTRY  # noqa: E402
from ratecheck.interfaces.cli import main  # noqa: E402
from ratecheck.params import declarations, inferred_declarations  # noqa: E402
from ratecheck.registry import make_algorithm  # noqa: E402
from ratecheck.simulate.engine import run  # noqa: E402
from ratecheck.testing.fuzz import algorithm_kinds, plausible, problem_kinds  # noqa: E402
from ratecheck.trace import RunConfig  # noqa: E402

FULL = "--full" in sys.argv  # the plugin's option; read here, since hypothesis settings are fixed at import
COUNTS: Counter[str] = Counter()
pytestmark = pytest.mark.xdist_group("test_fuzz")  # one worker: the last test reads the counts of the others
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
# API values: the same in Python form plus types JSON cannot express
API_VALUES = [None, True, False, 0, 1, 2, -1, 2.0, 0.05, -0.5, 1e-300, 1e300, float("nan"), float("inf"),
              -float("inf"), 10**12, 10**400, "", "abc", "1", "nan", "False", [], [1.0, 2.0], [[1.0]], {}, {"a": 1},
              (1.0,), b"x", object(), 1 + 2j, "with_replacement:2", "full", "constant:1", "shared"]

# the independent oracle of what a careful reader would accept lives in the conformance kit, so a
# plugin's fuzz holds its parameters to the same rule
_plausible, _algorithm_kinds, _problem_kinds = plausible, algorithm_kinds, problem_kinds


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
    if family == "least_squares_interpolation":  # its default takes seconds to build (see SMALL)
        argv += [f"--problem-set={k}={v}" for k, v in SMALL[family].items() if k not in problem_sets]
    return argv, sets, problem_sets, algorithm, family


@settings(FUZZ, max_examples=450 if FULL else 40)
@given(cli_runs())
def test_fuzz_ratecheck_run(case):
    from ratecheck.interfaces.cli import _parse_value

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


@settings(FUZZ, max_examples=300 if FULL else 60)
@given(st.sampled_from(FAMILIES), st.dictionaries(st.sampled_from(["kind", "clients", "dim", "zeta", "noise", "seed",
                                                                    "rotate", "mu", "L", "x0", "y0", "a", "c", "sigma",
                                                                    "radius", "upper", "start", "duplicate", "split",
                                                                    "weights", "nope"]),
                                                  st.sampled_from(API_VALUES + ["ncpl", "pwmax", "wgan", "tanh"]),
                                                  max_size=3))
def test_fuzz_make_problem(family, params):
    COUNTS["make_problem"] += 1
    try:
        problem = problems.make_problem(family, {**SMALL.get(family, {}), **params})
    except ValueError as exc:
        assert str(exc), (family, params)
        return
    kinds = _problem_kinds(family, params)
    for key, value in params.items():
        assert key in kinds and _plausible(key, value, kinds[key]), (family, params, key)
    assert problem.num_clients >= 1


@settings(FUZZ, max_examples=300 if FULL else 120)
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
         "minimax": {"kind": "ncpl", "clients": 2},
         # its default (d = 2000) takes seconds to build: the values under test are the same on a small one
         "least_squares_interpolation": {"dim": 40, "clients": 2, "rows": 5, "batch": 5}}


@settings(FUZZ, max_examples=120 if FULL else 24)
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


# -- issue #24: every declared parameter, corrupted by its own declaration ----------------------------

def _corrupt(param: Any) -> list[Any]:
    """Values the declaration ``param`` must refuse: the wrong type, and each side of its range."""
    kind = param.kind
    values: list[Any] = [object(), b"x", [[1.0]]] if kind != "option" else [object(), [[1.0]], "no such option"]
    if not param.nullable:
        values.append(None)
    if kind in ("int", "real", "vector"):
        values += [True, "1", float("nan")] + ([float("inf")] if param.finite else [])
        if kind == "int":
            values.append(2.5)
        if param.low is not None:
            values.append(param.low if param.low_open else param.low - 1)
        if param.high is not None:
            values.append(param.high if param.high_open else param.high + 1)
    elif kind == "bool":
        values += [0, 1, "False", "true"]
    elif kind in ("str", "choice"):
        values += [1, True] + (["no such choice"] if kind == "choice" else [])
    return values


DECLARED = sorted((name, pname, param) for name in ALGORITHMS for pname, param in declarations(REGISTRY[name]).items())


@pytest.mark.parametrize("name, pname, param", DECLARED, ids=[f"{n}.{p}" for n, p, _ in DECLARED])
def test_every_declared_algorithm_parameter_refuses_what_its_declaration_excludes(name, pname, param):
    for value in _corrupt(param):
        COUNTS["declared"] += 1
        with pytest.raises(ValueError, match=re.escape(pname)):  # ParamError or the algorithm's own check, naming it
            make_algorithm(name, {pname: value})


FAMILY_PARAMS = sorted((family, pname, param) for family in FAMILIES
                       for pname, param in inferred_declarations(problems.FAMILIES[family]).items()
                       if param is not None and hasattr(problems.FAMILIES[family], "declared"))


@pytest.mark.parametrize("family, pname, param", FAMILY_PARAMS, ids=[f"{f}.{p}" for f, p, _ in FAMILY_PARAMS])
def test_every_declared_family_parameter_refuses_what_its_declaration_excludes(family, pname, param):
    for value in _corrupt(param):
        COUNTS["declared"] += 1
        with pytest.raises(ValueError, match=re.escape(pname)):  # naming the parameter, not any refusal
            problems.make_problem(family, {**SMALL.get(family, {}), pname: value})


def test_every_algorithm_and_family_is_fuzzed():
    """The declared-parameter sweep reaches every algorithm and every declared family; the generated
    inputs draw from every family (sampled_from(FAMILIES)) and every algorithm."""
    assert {name for name, _, _ in DECLARED} | {n for n in ALGORITHMS if not declarations(REGISTRY[n])} == set(ALGORITHMS)
    declared_families = {f for f in FAMILIES if hasattr(problems.FAMILIES[f], "declared")}
    assert {family for family, _, _ in FAMILY_PARAMS} == declared_families


# -- issue #24: hand-written bad inputs ----------------------------------------------------------------

from bad_inputs import BAD_INPUTS  # noqa: E402  (tests/bad_inputs.py: the table, beside this module)


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[c.name for c in BAD_INPUTS])
def test_hand_written_bad_input_is_refused_clearly_or_handled(case, tmp_path):
    COUNTS["hand"] += 1
    case.check(tmp_path)


def test_fuzz_ran_at_least_1000_inputs():
    """Runs last in this module (pytest keeps file order): the total over the tests above."""
    if len(COUNTS) < 5:
        pytest.skip("run the whole module to count")
    fuzzed = sum(v for k, v in COUNTS.items() if k != "hand")
    print(f"\nfuzz inputs: {dict(COUNTS)}, fuzzed {fuzzed}, hand-written {COUNTS['hand']}; "
          f"CLI exit codes {dict(OUTCOMES)}; uncaught 0, silently accepted 0 (every case asserts both)")
    assert fuzzed >= 1000 and COUNTS["hand"] >= 75, COUNTS
