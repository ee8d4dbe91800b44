"""Hand-written bad inputs (issue #24), each refused with a clear error or handled: tests/test_fuzz.py
runs them and benchmarks/fuzz_counts.py counts them.

A case is a function of a scratch folder that feeds one bad input to an entry point, and what must
come of it: an exception of a given type whose message contains a given text (a clear refusal), or
``None`` (handled: the call returns normally, e.g. an unreadable cache entry is set aside).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sympy as sp

from ratecheck.interfaces.cli import main
from ratecheck.model.latex import LatexError, expression, relation
from ratecheck.model.store import Store
from ratecheck.params import ParamError, check_size
from ratecheck.registry import Registry, RegistryError
from ratecheck.runner.executors import check_dask_address, make_executor
from ratecheck.trace import RunConfig

L, K, T = sp.symbols("L K T", positive=True)
SYMBOLS = (L, K, T)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[Path], Any]
    error: type[BaseException] | None
    match: str = ""

    def check(self, tmp_path: Path) -> None:
        if self.error is None:
            self.run(tmp_path)
            return
        with pytest.raises(self.error, match=self.match or None):
            self.run(tmp_path)


def _cli(argv: list[str]) -> Callable[[Path], None]:
    def run(tmp_path: Path) -> None:
        file = tmp_path / "FILE"
        file.write_text("")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
        text = err.getvalue()
        if code != 2 or "Traceback" in text or not text.startswith("ratecheck:") and "usage:" not in text:
            raise AssertionError(f"{argv}: exit {code}, {text!r}")
        raise UsageRefusal(text)
    return run


class UsageRefusal(Exception):
    """Exit 2 with one clear line (what a CLI case must end in)."""


def _plugin(body: str) -> Callable[[Path], None]:
    def run(tmp_path: Path) -> None:
        path = tmp_path / f"bad_plugin_{abs(hash(body))}.py"
        path.write_text(body)
        Registry(entry_points=list).add_source(str(path))
    return run


def _under_cli(case: Callable[[Path], None]) -> Callable[[Path], None]:
    """Run ``case`` under the command line's SIGINT handler (only there is a KeyboardInterrupt with no
    Ctrl-C behind it told apart; a library's host handles its own)."""
    def run(tmp_path: Path) -> None:
        from ratecheck.model.interrupts import cli_interrupts

        with cli_interrupts():
            case(tmp_path)
    return run


def _latex(text: str, symbols: Any = SYMBOLS, kind: Callable[..., Any] = expression) -> Callable[[Path], None]:
    return lambda tmp_path: kind(text, symbols, "bound 'b'")


def _config(**changes: Any) -> Callable[[Path], None]:
    base = dict(algorithm="fedavg", params={}, problem="quadratic", problem_params={"dim": 2, "clients": 4},
                rounds=3)
    return lambda tmp_path: RunConfig(**{**base, **changes})


def _engine(algorithm: str, family: str, params: dict | None = None, problem: dict | None = None,
            **run: Any) -> Callable[[Path], None]:
    def go(tmp_path: Path) -> None:
        from ratecheck.registry import make_algorithm, make_problem
        from ratecheck.simulate.engine import run as run_

        run_(make_algorithm(algorithm, params or {}), make_problem(family, problem or {}),
             run.pop("rounds", 2), **{"replicas": 1, **run})
    return go


def _size(**changes: Any) -> Callable[[Path], None]:
    base = dict(rounds=10, replicas=2, clients=4, dim=2)
    return lambda tmp_path: check_size("run", **{**base, **changes})


def _unreadable_entry(make: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(tmp_path: Path) -> None:
        store = Store(tmp_path / "cache")
        key = "ef" * 16
        store.put(key, {"x": [1.0]}, {"config": {}})
        path = store.path(key)
        make(path)
        assert store.get(key) is None  # set aside, no exception
        store.put(key, {"x": [2.0]}, {"config": {}})
        assert store.get(key)[0]["x"].tolist() == [2.0]  # and recomputed
    return run


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "x").write_text("x")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "nowhere")


BAD_INPUTS: list[Case] = [
    # -- plugins (a plugin cannot end or interrupt ratecheck, or fake success) --------------------
    Case("plugin sys.exit(0)", _plugin("import sys\nsys.exit(0)\n"), RegistryError, r"sys\.exit\(0\)"),
    Case("plugin sys.exit(4)", _plugin("import sys\nsys.exit(4)\n"), RegistryError, r"sys\.exit\(4\)"),
    Case("plugin SystemExit text", _plugin("raise SystemExit('bye')\n"), RegistryError, "sys.exit"),
    Case("plugin KeyboardInterrupt", _under_cli(_plugin("raise KeyboardInterrupt\n")), RegistryError, "KeyboardInterrupt"),
    Case("plugin GeneratorExit", _plugin("raise GeneratorExit\n"), RegistryError, "GeneratorExit"),
    Case("plugin MemoryError", _plugin("raise MemoryError('big')\n"), RegistryError, "MemoryError"),
    Case("plugin RecursionError", _plugin("def f(): f()\nf()\n"), RegistryError, "RecursionError"),
    Case("plugin syntax error", _plugin("def (:\n"), RegistryError, "SyntaxError"),
    Case("plugin defines nothing", _plugin("X = 1\n"), RegistryError, "defines no PAPER"),
    Case("plugin PAPER of wrong kind", _plugin("PAPER = 3\n"), RegistryError, "PAPER must be"),
    Case("plugin PROBLEMS not a mapping", _plugin("PROBLEMS = [1]\n"), RegistryError, "PROBLEMS must map"),
    Case("plugin ALGORITHMS of wrong kind", _plugin("ALGORITHMS = [int]\n"), RegistryError, "not an Algorithm"),
    Case("plugin file absent", lambda p: Registry(entry_points=list).add_source(str(p / "absent.py")),
         RegistryError, "no such file"),
    Case("plugin module absent", lambda p: Registry(entry_points=list).add_source("no_such_module_x"),
         RegistryError, "ModuleNotFoundError"),
    # -- LaTeX ----------------------------------------------------------------------------------------
    Case("latex 3000 parentheses", _latex("(" * 3000 + "L" + ")" * 3000), LatexError, "characters long"),
    Case("latex 400 nested fractions", _latex("\\frac{1}{" * 400 + "L" + "}" * 400), LatexError, "characters"),
    Case("latex 30 nested braces", _latex("{" * 30 + "L" + "}" * 30), LatexError, "nests groups 30 deep"),
    Case("latex 30 nested sqrt", _latex("\\sqrt{" * 30 + "L" + "}" * 30), LatexError, "nests groups"),
    Case("latex sum of 500 terms", _latex(" + ".join(["L"] * 500)), LatexError, "characters long"),
    Case("latex sum of 5000 terms", _latex(" + ".join(["L"] * 5000)), LatexError, "characters long"),
    Case("latex 200k characters", _latex("L" * 200_000), LatexError, "characters long"),
    Case("latex division by zero", _latex(r"\frac{L}{0}"), LatexError, "not a real finite number"),
    Case("latex root of a negative", _latex(r"\sqrt{-L}"), LatexError, "not a real finite number"),
    Case("latex log of a negative", _latex(r"\log(-L)"), LatexError, "not a real finite number"),
    Case("latex condition over zero", _latex(r"L \le \frac{1}{0}", kind=relation), LatexError, "non-real"),
    Case("latex symbols as strings", _latex("L", ["L", "K"]), LatexError, "not a sympy Symbol"),
    Case("latex symbols a string", _latex("L", "L"), LatexError, "must be sympy Symbols"),
    Case("latex symbol dict of strings", _latex("L", {"L": "L"}), LatexError, "not a sympy Symbol"),
    Case("latex symbols a number", _latex("L", 3), LatexError, "must be sympy Symbols"),
    Case("latex empty", _latex("   "), LatexError, "expected a LaTeX string"),
    Case("latex not a string", _latex(None), LatexError, "expected a LaTeX string"),
    Case("latex unclosed", _latex(r"\frac{1}{K"), LatexError, "never closed"),
    Case("latex undeclared symbol", _latex(r"\kappa L"), LatexError, "not declared"),
    Case("latex relation expected", _latex("L", kind=relation), LatexError, "expected an inequality"),
    # -- run configuration and sizes -------------------------------------------------------------------
    Case("checkpoints=1", _config(checkpoints=1), ParamError, "checkpoints"),
    Case("checkpoints=0", _config(checkpoints=0), ParamError, "checkpoints"),
    Case("checkpoints=10**9", _config(checkpoints=10**9), ParamError, "checkpoints"),
    Case("replicas=2**70", _config(replicas=2**70), ParamError, "replicas"),
    Case("replicas=True", _config(replicas=True), ParamError, "replicas"),
    Case("rounds=1.5", _config(rounds=1.5), ParamError, "rounds"),
    Case("rounds=0", _config(rounds=0), ParamError, "rounds"),
    Case("seed=-1", _config(seed=-1), ParamError, "seed"),
    Case("mode unknown", _config(mode="exactly"), ParamError, "mode"),
    Case("run replicas=[1, 2**70]", _engine("fedavg", "quadratic", replicas=[1, 2**70]), ParamError, "replicas"),
    Case("run replicas=[]", _engine("fedavg", "quadratic", replicas=[]), ParamError, "replicas"),
    Case("run replicas=[1, 1]", _engine("fedavg", "quadratic", replicas=[1, 1]), ParamError, "replicas"),
    Case("run replicas=[-1]", _engine("fedavg", "quadratic", replicas=[-1]), ParamError, "replicas"),
    Case("run replicas=10**8", _engine("fedavg", "quadratic", replicas=10**8), ParamError, "replicas"),
    Case("run checkpoints=10**9", _engine("fedavg", "quadratic", checkpoints=10**9), ParamError, "checkpoints"),
    Case("run rounds=10**11", _engine("fedavg", "quadratic", rounds=10**11), ParamError, "rounds x replicas"),
    Case("run rounds=10**9 replicas=10**6",
         _engine("fedavg", "quadratic", rounds=10**9, replicas=10**6), ParamError, "replicas"),
    Case("run eta_local=-1.0", _engine("fedavg", "quadratic", {"eta_local": -1.0}), ParamError, "eta_local"),
    Case("size: 10**6 clients on the event timeline",
         _size(clients=10**6, timeline_clients=10**6, replicas=16), ParamError, "ms per client"),
    Case("size: 10**5 clients on the timeline, 64 replicas",
         _size(clients=10**5, timeline_clients=10**5, replicas=64), ParamError, "clients x replicas"),
    Case("size: exact-mode moments of 10**5 numbers", _size(state=10**5), ParamError, "exact mode"),
    Case("size: exact-mode rounds x state^3", _size(rounds=10**6, state=3000), ParamError, r"state\^3"),
    Case("size: checkpoints x replicas", _size(checkpoints=10**6, rounds=10**7, replicas=10**5), ParamError,
         "checkpoints x replicas"),
    Case("size: clients x dim", _size(clients=10**5, dim=10**4), ParamError, "replicas x clients x dim"),
    Case("size: local_steps 0", _size(local_steps=0), ParamError, "local_steps"),
    # -- algorithm / family mismatches ----------------------------------------------------------------
    Case("fedbio on quadratic", _engine("fedbio", "quadratic"), ValueError,
         "algorithm 'fedbio' does not run on problem family 'quadratic'"),
    Case("fedbioacc on minimax", _engine("fedbioacc", "minimax", problem={"kind": "ncpl", "clients": 2}),
         ValueError, "algorithm 'fedbioacc' does not run on problem family 'minimax'"),
    Case("fedbio_local on quadratic_bilevel", _engine("fedbio_local", "quadratic_bilevel"), ValueError,
         "algorithm 'fedbio_local' does not run on problem family 'quadratic_bilevel'"),
    Case("exact_projection_gd on quadratic", _engine("exact_projection_gd", "quadratic", {"lam": 0.25}),
         ValueError, "algorithm 'exact_projection_gd' does not run on problem family 'quadratic'"),
    Case("exact_projection_gd lam on a family without", _engine("exact_projection_gd", "least_squares",
                                                                {"lam": 0.25}), ParamError,
         "^exact_projection_gd: parameter lam"),
    Case("ipir_fedavg lam on a family without", _engine("ipir_fedavg", "least_squares", {"lam": 0.25}),
         ParamError, "^ipir_fedavg: parameter lam"),
    # -- the cache ------------------------------------------------------------------------------------------
    Case("cache entry is a directory", _unreadable_entry(_directory), None),
    Case("cache entry truncated", _unreadable_entry(_truncate), None),
    Case("cache entry with a flipped byte", _unreadable_entry(_flip), None),
    Case("cache entry empty", _unreadable_entry(lambda path: path.write_bytes(b"")), None),
    Case("cache entry a dangling link", _unreadable_entry(_dangling), None),
    Case("cache dir ''", lambda p: Store(""), ValueError, "non-empty path"),
    Case("cache dir under a file", lambda p: (p / "F").write_text("x") and Store(p / "F" / "sub"),
         NotADirectoryError, "is not a directory"),
    Case("cache dir is a file", lambda p: (p / "F").write_text("x") and Store(p / "F"), NotADirectoryError,
         "is not a directory"),
    Case("cache key not hex", lambda p: Store(p).get("../../etc/passwd"), ValueError, "invalid store key"),
    Case("cache put of text arrays", lambda p: Store(p).put("ab" * 8, {"x": ["a"]}, {}), ValueError, "non-numeric"),
    # -- executors and addresses --------------------------------------------------------------------------
    Case("dask 'not a url'", lambda p: check_dask_address("not a url"), ValueError, "malformed"),
    Case("dask ''", lambda p: check_dask_address(""), ValueError, "non-empty"),
    Case("dask http scheme", lambda p: check_dask_address("http://h:1"), ValueError, "unknown scheme"),
    Case("dask no host", lambda p: check_dask_address("tcp://"), ValueError, "malformed"),
    Case("dask port 0", lambda p: check_dask_address("tcp://h:0"), ValueError, "port 0"),
    Case("dask port 99999", lambda p: check_dask_address("tcp://h:99999"), ValueError, "port 99999"),
    Case("dask None", lambda p: check_dask_address(None), ValueError, "non-empty string"),
    Case("dask and dask-local", lambda p: make_executor(dask="tcp://h:1", dask_local=True), ValueError, "not both"),
    Case("jobs 0", lambda p: make_executor(jobs=0), ValueError, "parameter jobs = .* is invalid"),
    Case("jobs True", lambda p: make_executor(jobs=True), ValueError, "parameter jobs = .* is invalid"),
    Case("jobs 2.5", lambda p: make_executor(jobs=2.5), ValueError, "parameter jobs = .* is invalid"),
    # -- the command line (exit 2 and one line, before any run) ---------------------------------------
    Case("cli --cache-dir ''", _cli(["check", "defedavg", "--no-report", "--cache-dir", ""]), UsageRefusal,
         "non-empty path"),
    Case("cli --cache-dir FILE/sub", _cli(["check", "defedavg", "--no-report", "--cache-dir", "{tmp}/FILE/sub"]),
         UsageRefusal, "not a directory"),
    Case("cli --dask 'not a url'", _cli(["check", "defedavg", "--no-report", "--dask", "not a url"]),
         UsageRefusal, "malformed"),
    Case("cli --jobs 0", _cli(["check", "--jobs", "0"]), UsageRefusal, "--jobs: parameter jobs = 0"),
    Case("cli --jobs x", _cli(["check", "--jobs", "x"]), UsageRefusal, "invalid int"),
    Case("cli run --rounds 0", _cli(["run", "fedavg", "--problem", "quadratic", "--rounds", "0"]), UsageRefusal,
         "rounds"),
    Case("cli run --set eta_local=-1", _cli(["run", "fedavg", "--problem", "quadratic", "--set", "eta_local=-1"]),
         UsageRefusal, "eta_local"),
    Case("cli hunt --budget 0", _cli(["hunt", "defedavg.theorem2", "--budget", "0", "--no-cache"]), UsageRefusal,
         "--budget"),
    Case("cli cache --cache-dir ''", _cli(["cache", "info", "--cache-dir", ""]), UsageRefusal, "non-empty"),
]

assert len({c.name for c in BAD_INPUTS}) == len(BAD_INPUTS), "case names must be unique"
assert all(c.match == "" or re.compile(c.match) for c in BAD_INPUTS)
