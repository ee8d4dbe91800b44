"""Faults that cross a boundary (issue #24): errors from worker processes and Dask keep their type and
message and the other runs are kept; workers end with their parent; unreadable cache entries are set
aside and recomputed; a plugin cannot end or interrupt ratecheck; bad options are usage errors."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ratecheck import registry as registry_module
from ratecheck.exact import NotExact
from ratecheck.interfaces.cli import RunFailure, UsageError, main
from ratecheck.model import store as store_module
from ratecheck.model.asynchrony import TimelineError
from ratecheck.model.latex import LatexError
from ratecheck.model.store import Store
from ratecheck.params import ParamError
from ratecheck.registry import LoadError, RegistryError
from ratecheck.runner.checking import ClaimFailure
from ratecheck.runner.executors import JobError, SerialExecutor
from ratecheck.runner.identity import stored_key
from ratecheck.runner.sweep import run_configs
from ratecheck.trace import RunConfig

ROOT = Path(__file__).resolve().parent.parent
GOOD = [RunConfig("fedavg", {}, "quadratic", {"dim": 2, "clients": 4}, rounds=3, replicas=2, seed=s) for s in range(3)]
BAD_STEP = RunConfig("fedavg", {"eta_local": -1.0}, "quadratic", {"dim": 2, "clients": 4}, rounds=3, replicas=2)
TOO_BIG = RunConfig("fedavg", {}, "quadratic", {"dim": 2, "clients": 4}, rounds=10**11, replicas=2)


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("error", [
    ParamError("a", "b", 1, "r"), ParamError("fedavg", "f", lambda: 1, "no lambdas"), JobError(3, "job 3 failed"),
    LatexError("x"), RegistryError("x"), TimelineError("x"), NotExact("x"), ClaimFailure("x"), UsageError("x"),
    RunFailure("x"),
])
def test_every_project_exception_pickles_with_its_type_and_message(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    assert pickle.loads(pickle.dumps(LoadError("--paper x.py", "boom"))) == LoadError("--paper x.py", "boom")


@pytest.mark.parametrize("bad, message", [
    (BAD_STEP, r"ParamError: fedavg: parameter eta_local = -1.0 is invalid"),
    (TOO_BIG, r"ParamError: run: parameter rounds x replicas x clients x dim x local_steps"),
])
@pytest.mark.parametrize("where", ["serial", "process_executor", "dask_executor"])
def test_a_refused_run_in_a_worker_names_its_cause_and_the_others_are_kept(where, bad, message, request, tmp_path):
    executor = SerialExecutor() if where == "serial" else request.getfixturevalue(where)
    store = Store(tmp_path)
    with pytest.raises(JobError, match=message) as info:
        run_configs([GOOD[0], bad, GOOD[1], GOOD[2]], store=store, executor=executor, progress=False)
    assert "BrokenProcessPool" not in str(info.value) and info.value.index == 1
    assert store.puts == 3  # the other runs finished and are cached: a rerun computes only the bad one
    assert sorted(store.keys()) == sorted(stored_key(c) for c in GOOD)


def test_pool_workers_end_when_their_parent_is_killed(tmp_path):
    script = textwrap.dedent("""
        import os, sys, time
        from ratecheck.runner.executors import ProcessExecutor
        if __name__ == "__main__":
            executor = ProcessExecutor(2)
            futures = [executor.pool.submit(os.getpid) for _ in range(8)]
            print(" ".join(str(p) for p in sorted({f.result() for f in futures})), flush=True)
            time.sleep(600)
    """)
    path = tmp_path / "parent.py"
    path.write_text(script)
    parent = subprocess.Popen([sys.executable, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})  # this tree's code, not main's
    try:
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert workers and all(_alive(pid) for pid in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), workers
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_polling_watchdog_ends_a_worker_whose_parent_exits(tmp_path):
    """Without the death signal (a pool started off the main thread, or not Linux) the watchdog's
    polling alone ends the worker: here its parent exits normally, and a second worker is told to
    watch a parent that had already died before it started."""
    child = ("import sys, time\nfrom ratecheck.runner.executors import end_with_parent\n"
             "end_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else None, poll=0.05)\n"
             "print('watching', flush=True)\ntime.sleep(600)\n")
    (tmp_path / "child.py").write_text(child)
    middle = tmp_path / "middle.py"
    middle.write_text(textwrap.dedent(f"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, {str(tmp_path / "child.py")!r}], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        assert child.stdout.readline().strip() == "watching"
        print(child.pid, flush=True)
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # a script's folder, not the cwd, leads sys.path
    pid = int(subprocess.run([sys.executable, str(middle)], cwd=ROOT, capture_output=True, text=True, env=env,
                             timeout=120).stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    late = subprocess.run([sys.executable, str(tmp_path / "child.py"), gone.stdout.strip()], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=60)
    assert late.returncode == 1 and "watching" not in late.stdout  # its recorded parent was gone already


def test_a_pool_started_off_the_main_thread_outlives_that_thread(tmp_path):
    """The death signal fires when the thread that started a worker ends: a pool created in a thread
    that then ends keeps its workers (no signal asked), and a pool created on the main thread starts
    all its workers there, so a map from another thread cannot start one tied to that thread."""
    script = textwrap.dedent("""
        import os, threading
        from ratecheck.runner.executors import ProcessExecutor
        if __name__ == "__main__":
            made = {}
            def start(key):
                made[key] = ProcessExecutor(2)
                made[key].pool.submit(os.getpid).result()
            thread = threading.Thread(target=start, args=("thread",))
            thread.start(); thread.join()
            main = ProcessExecutor(2)
            main.pool
            mapper = threading.Thread(target=lambda: sorted(main.map_unordered(abs, [-1, -2, -3, -4])))
            mapper.start(); mapper.join()
            for executor in (made["thread"], main):
                print(sorted(v for _, v in executor.map_unordered(abs, [-1, -2, -3])), flush=True)
                executor.close()
    """)
    path = tmp_path / "threads.py"
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.split("\n")[:2] == ["[1, 2, 3]"] * 2, done.stderr


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has ended (whoever adopted it may not reap it at once)


# -- the cache --------------------------------------------------------------------------------------

def _entry(store: Store) -> str:
    key = "ab" * 16
    store.put(key, {"x": [1.0, 2.0]}, {"config": {}})
    return key


def test_a_directory_where_an_entry_should_be_is_set_aside_and_recomputed(tmp_path):
    store = Store(tmp_path)
    key = _entry(store)
    path = store.path(key)
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("x")
    code, out, _ = _cli(["cache", "info", "--cache-dir", str(tmp_path)])
    assert code == 0 and "1 unreadable" in out and "0 from code that has changed" in out
    assert store.get(key) is None  # set aside, not an IsADirectoryError
    assert Path(str(path) + ".corrupt").is_dir()
    store.put(key, {"x": [3.0]}, {"config": {}})
    assert store.get(key)[0]["x"].tolist() == [3.0]
    assert store.prune()["corrupt"] == 1 and not Path(str(path) + ".corrupt").exists()


def test_an_entry_that_cannot_be_opened_is_set_aside(tmp_path, monkeypatch):
    store = Store(tmp_path)
    key = _entry(store)

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(store.path(key)))

    monkeypatch.setattr(store_module, "open", refuse, raising=False)
    assert store.get(key) is None
    monkeypatch.undo()
    assert not store.path(key).exists() and Path(str(store.path(key)) + ".corrupt").exists()


@pytest.mark.parametrize("error, fails", [(errno.EMFILE, 99), (errno.ENFILE, 99), (errno.EIO, 99), (errno.EINTR, 99),
                                          (errno.EINTR, 2), (errno.EAGAIN, 1)])
def test_a_transient_open_error_keeps_the_entry(tmp_path, monkeypatch, error, fails):
    """Too many open files, an I/O error, an interrupted open: the machine's trouble, not the entry's.
    An interrupted open is retried (twice at most); otherwise the error is raised naming the file,
    and the entry stays for the next run to read."""
    store = Store(tmp_path)
    key = _entry(store)
    real, calls = open, []

    def flaky(path, *args, **kwargs):
        calls.append(path)
        if len(calls) <= fails:
            raise OSError(error, os.strerror(error))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store_module, "open", flaky, raising=False)
    if fails < store_module.OPEN_ATTEMPTS and error in (errno.EINTR, errno.EAGAIN):
        assert store.get(key)[0]["x"].tolist() == [1.0, 2.0] and len(calls) == fails + 1
    else:
        with pytest.raises(OSError, match=re.escape(str(store.path(key)))):
            store.get(key)
    monkeypatch.undo()
    assert store.path(key).exists() and not Path(str(store.path(key)) + ".corrupt").exists()
    assert store.get(key)[0]["x"].tolist() == [1.0, 2.0]


def test_a_full_disk_names_the_path(tmp_path, monkeypatch):
    def full(fh, members, meta_json):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module, "_write_entry", full)
    store = Store(tmp_path)
    with pytest.raises(OSError, match="No space left on device") as info:
        store.put("cd" * 16, {"x": [1.0]}, {})
    assert info.value.filename == str(store.path("cd" * 16)) and str(tmp_path) in str(info.value)
    assert not list(store.path("cd" * 16).parent.glob(".*.tmp"))  # no temp file left behind


# -- plugins ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, cause", [
    ("import sys\nsys.exit(0)\n", "sys.exit(0)"),
    ("import sys\nsys.exit(4)\n", "sys.exit(4)"),
    ("raise SystemExit('bye')\n", "sys.exit('bye')"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ("raise GeneratorExit\n", "GeneratorExit"),
])
@pytest.mark.parametrize("command", [["list"], ["check", "--no-report", "--jobs", "1", "--no-cache"]])
def test_a_plugin_that_exits_or_interrupts_on_import_is_a_broken_plugin(tmp_path, body, cause, command):
    plugin = tmp_path / f"plugin_{abs(hash((body, tuple(command))))}.py"
    plugin.write_text(body)
    code, out, err = _cli([*command, "--paper", str(plugin)])
    assert code == 2 and str(plugin) in err and cause in err, (code, err)


def test_a_real_ctrl_c_while_a_plugin_loads_interrupts(tmp_path):
    plugin = tmp_path / "slow_plugin.py"
    plugin.write_text("import time\nprint('loading', flush=True)\ntime.sleep(60)\n")
    # the package's own entry points skipped: the child reaches the plugin without importing the papers first
    env = {**os.environ, "RATECHECK_SKIP_PLUGINS": "ratecheck"}
    child = subprocess.Popen([sys.executable, "-m", "ratecheck", "list", "--paper", str(plugin)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "loading"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        assert child.returncode == 130 and "interrupted" in err
    finally:
        if child.poll() is None:
            child.kill()


# -- options found bad before any run --------------------------------------------------------------

@pytest.mark.parametrize("options, message", [
    (["--cache-dir", "{file}/sub"], "is not a directory"),
    (["--cache-dir", "{file}/a/b"], "is not a directory"),
    (["--cache-dir", "{file}"], "is not a directory"),
    (["--cache-dir", ""], "non-empty path"),
    (["--dask", "not a url"], "malformed"),
    (["--dask", "http://h:1"], "unknown scheme"),
    (["--dask", "tcp://h:70000"], "port 70000"),
    (["--dask", "tcp://h:1", "--dask-local"], "not both"),
    (["--jobs", "0"], "--jobs: parameter jobs = 0 is invalid: must be an integer >= 1"),
])
def test_bad_options_are_usage_errors_before_any_run(tmp_path, options, message):
    file = tmp_path / "FILE"
    file.write_text("")
    argv = ["check", "defedavg", "--no-report", *[o.replace("{file}", str(file)) for o in options]]
    started = time.monotonic()
    code, out, err = _cli(argv)
    assert code == 2 and message in err and "Traceback" not in err, (code, err)
    assert time.monotonic() - started < 60  # no connection attempt, no run


def test_jobs_beyond_the_cores_are_capped_unless_forced(monkeypatch):
    from ratecheck.interfaces import cli, cli_options

    monkeypatch.setattr(cli_options, "default_jobs", lambda: 2)
    args = cli.build_parser().parse_args(["check", "--jobs", "1000"])
    assert cli._check_run_options(args) is None and args.jobs == 2
    args = cli.build_parser().parse_args(["check", "--jobs", "1000", "--force-jobs"])
    assert cli._check_run_options(args) is None and args.jobs == 1000


@pytest.mark.claims  # runs a search: `ratecheck hunt` through the CLI
def test_a_hunt_whose_budget_runs_out_says_so(tmp_path):
    code, out, err = _cli(["hunt", "defedavg.theorem2", "--budget", "1e-9", "--cache-dir", str(tmp_path)])
    if code == 2 and "no search space" in err:
        pytest.skip("no search space for defedavg.theorem2 in this checkout")
    assert code == 0 and "budget" in out and "ran out" in out and "misses the theorem" not in out, out


# -- algorithm / family mismatches ------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["run", "fedbio", "--problem", "quadratic"], "algorithm 'fedbio' does not run on problem family 'quadratic'"),
    (["run", "fedbioacc", "--problem", "minimax"], "algorithm 'fedbioacc' does not run on problem family 'minimax'"),
    (["run", "fedbio_local", "--problem", "quadratic_bilevel"], "'fedbio_local' does not run on problem family"),
    (["run", "exact_projection_gd", "--problem", "quadratic", "--set", "lam=0.25"],
     "algorithm 'exact_projection_gd' does not run on problem family 'quadratic'"),
    (["run", "exact_projection_gd", "--problem", "least_squares", "--set", "lam=0.25"],
     "exact_projection_gd: parameter lam = 0.25"),
])
def test_mismatches_name_the_algorithm_and_the_family(argv, message):
    code, out, err = _cli([*argv, "--rounds", "2", "--replicas", "1"])
    assert code == 2 and message in err and "ipir_fedavg" not in err and "KeyError" not in err, err


def test_exact_moments_too_large_fall_back_to_monte_carlo_in_auto_mode(monkeypatch):
    """A size refusal of exact mode's moments is a reason for Monte Carlo under mode 'auto' (as NotExact
    is), and an error only under mode 'exact'."""
    from ratecheck import params
    from ratecheck.simulate.engine import run_config

    monkeypatch.setattr(params, "MOMENT_BYTES_BUDGET", 1)  # every exact run is too large
    config = RunConfig("fedavg", {"eta_local": 0.05, "local_steps": 2}, "quadratic", {"dim": 3, "clients": 4},
                       rounds=4, replicas=2, mode="auto")
    trace = run_config(config)
    assert "exact mode" in trace.info["exact_fallback"] and not trace.exact
    with pytest.raises(ParamError, match="exact mode"):
        run_config(dataclasses.replace(config, mode="exact"))


def test_sizes_and_options_are_checked_by_their_declarations():
    """One declaration per parameter: check_size, the executors and the CLI refuse through
    params (RUN_PARAMS, SIZE_PARAMS, OPTION_PARAMS), so the rule in the message is the declared one."""
    from ratecheck.params import OPTION_PARAMS, RUN_PARAMS, ParamError, check_size, replica_ids
    from ratecheck.runner.executors import make_executor

    sizes = dict(rounds=10, replicas=2, clients=3, dim=4)
    with pytest.raises(ParamError, match=rf"parameter checkpoints = 1 is invalid: must be {re.escape(RUN_PARAMS['checkpoints'].rule())}"):
        check_size("run", **sizes, checkpoints=1)
    with pytest.raises(ParamError, match=r"parameter replicas = 100000000 is invalid: must be an integer >= 1 and <= 1e\+07"):
        check_size("run", **{**sizes, "replicas": 10**8})
    with pytest.raises(ParamError, match=r"parameter dim = 2.0 is invalid"):
        check_size("run", **{**sizes, "dim": 2.0})
    with pytest.raises(ParamError, match=re.escape(f"at most {RUN_PARAMS['replicas'].high:g} of them")):
        replica_ids("run", [1, 2**70])
    for make in (lambda: make_executor(jobs=0), lambda: make_executor(jobs=0, dask_local=True)):
        with pytest.raises(ParamError, match=rf"parameter jobs = 0 is invalid: must be {re.escape(OPTION_PARAMS['jobs'].rule())}"):
            make()


# -- a claim's own code cannot fake success ---------------------------------------------------------

_EXITING_CLAIM = """
import dataclasses
import sys

from ratecheck.paper import Paper
from ratecheck.registry import default

base = default().select_claims("fessgda.A5.drift_bias")[0]  # five noise-free runs


def decide(self, profile, traces):
    {action}


def runs(self, profile):
    {runs}


Exiting = type("Exiting", (type(base),), {{"decide": decide, **({{"runs": runs}} if {override_runs} else {{}})}})
fields = {{f.name: getattr(base, f.name) for f in dataclasses.fields(base) if f.init}}
PAPER = Paper(key="{key}", title="a claim that ends the program", seed="none",
              claims=[Exiting(**{{**fields, "id": "{key}.c1", "paper": "{key}"}})])
"""


@pytest.mark.parametrize("action, cause", [
    ("sys.exit(0)", "sys.exit(0)"),
    ("sys.exit(4)", "sys.exit(4)"),
    ("raise KeyboardInterrupt", "raised KeyboardInterrupt (no Ctrl-C"),
    ("raise GeneratorExit", "GeneratorExit"),
])
def test_a_claim_whose_decide_exits_is_an_error_never_success(tmp_path, monkeypatch, action, cause):
    monkeypatch.setattr(registry_module, "_DEFAULT", None)  # a registry of its own: the paper does not stay
    plugin = tmp_path / f"exiting_{abs(hash(action))}.py"
    key = f"exiting{abs(hash(action))}"  # one paper key per test: the process-wide registry keeps them
    plugin.write_text(_EXITING_CLAIM.format(action=action, runs="pass", override_runs=False, key=key))
    code, out, err = _cli(["check", f"{key}.*", "--paper", str(plugin), "--no-cache", "--no-report", "--jobs", "1",
                           "--json"])
    assert code != 0, (out, err)
    claims = json.loads(out)["claims"] if out.strip() else []
    assert claims and claims[0]["verdict"] == "ERROR", (code, out, err)
    assert cause in claims[0]["reason"] and str(plugin) in claims[0]["reason"], claims[0]["reason"]


def test_plugin_code_that_exits_outside_decide_ends_the_command_as_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setattr(registry_module, "_DEFAULT", None)
    plugin = tmp_path / "exiting_runs.py"
    plugin.write_text(_EXITING_CLAIM.format(action="pass", runs="sys.exit(0)", override_runs=True, key="exitingruns"))
    code, out, err = _cli(["check", "exitingruns.*", "--paper", str(plugin), "--no-cache", "--no-report", "--jobs", "1"])
    assert code == 2 and "sys.exit(0)" in err and str(plugin) in err, (code, err)


# -- SIGINT: the CLI's handler only, restored after ------------------------------------------------

def test_the_cli_installs_its_sigint_handler_only_while_a_command_runs(tmp_path):
    """A host program's handler (a library user, pytest) is left alone by the API and restored after
    the CLI: the API never installs one, so a KeyboardInterrupt is the host's to handle."""
    calls = []

    def host(signum, frame):
        calls.append(signum)

    previous = signal.signal(signal.SIGINT, host)
    try:
        from ratecheck.model.interrupts import cli_interrupts, is_real_interrupt
        from ratecheck.registry import Registry

        plugin = tmp_path / "interrupting.py"
        plugin.write_text("raise KeyboardInterrupt\n")
        with pytest.raises(KeyboardInterrupt):  # the API: not told apart, the host's to handle
            Registry(entry_points=list).add_source(str(plugin))
        assert signal.getsignal(signal.SIGINT) is host
        seen = []
        with cli_interrupts():
            assert signal.getsignal(signal.SIGINT) is not host
            assert not is_real_interrupt(KeyboardInterrupt())  # raised by code, no SIGINT
            with pytest.raises(KeyboardInterrupt) as raised:
                signal.raise_signal(signal.SIGINT)
            seen.append(is_real_interrupt(raised.value))
        assert seen == [True] and calls == []
        assert signal.getsignal(signal.SIGINT) is host  # restored
        code, _, _ = _cli(["list", "--paper", str(tmp_path / "absent.py")])
        assert code == 2 and signal.getsignal(signal.SIGINT) is host
        signal.raise_signal(signal.SIGINT)
        assert calls == [signal.SIGINT]  # the host's handler still answers
    finally:
        signal.signal(signal.SIGINT, previous)


# -- an installed plugin that fails to load stops the command unless skipped ------------------------

def test_a_broken_installed_plugin_stops_list_and_check_unless_skipped(monkeypatch):
    from ratecheck import registry as registry_module
    from ratecheck.registry import EntryPoint, Registry, installed_entry_points

    broken = EntryPoint("ratecheck.papers", "broken_paper", "ratecheck_no_such_module:PAPER", "fake-plugin-dist")
    monkeypatch.setenv("RATECHECK_SKIP_PLUGINS", "")  # restored after: --skip-plugin writes to it

    def fresh() -> None:  # a new process's registry: the installed entry points plus the broken one
        monkeypatch.setattr(registry_module, "_DEFAULT", Registry(lambda: [*installed_entry_points(), broken]))

    for command in (["list"], ["check", "*defedavg.fedavg.drift*", "--no-cache", "--no-report", "--jobs", "1"]):
        fresh()
        code, out, err = _cli(command)
        assert code == 2 and not out, (code, err)
        assert "fake-plugin-dist entry point broken_paper = ratecheck_no_such_module:PAPER" in err, err
        assert "ModuleNotFoundError" in err and "--skip-plugin fake-plugin-dist:broken_paper" in err, err
    fresh()  # a pattern that names one paper (`check defedavg...`) loads that paper alone: the broken one is not read
    assert registry_module.default().select_claims("defedavg.fedavg.drift*") and not registry_module.default().errors
    fresh()
    code, out, err = _cli(["list", "--skip-plugin", "fake-plugin-dist:broken_paper"])
    assert code == 0 and "defedavg" in out and "broken_paper" not in out + err, err
    monkeypatch.setenv("RATECHECK_SKIP_PLUGINS", "fake-plugin-dist")  # a whole distribution, by name
    fresh()
    assert _cli(["list"])[0] == 0


# -- an interrupted hunt resumes from the runs it finished -----------------------------------------

def _without_seconds(evidence: dict) -> str:
    hunt = {k: v for k, v in evidence["hunt"].items() if k != "seconds"}  # wall time, not a result
    return json.dumps({**evidence, "hunt": hunt}, sort_keys=True, default=str)


@pytest.mark.claims  # runs the registered search HUNT_CORRECTED three times
def test_an_interrupted_hunt_resumes_from_its_stored_runs_with_the_same_numbers(tmp_path, monkeypatch):
    """Ctrl-C after the k-th run of a search: the rerun reads those k runs from the store (each is
    stored as it finishes), computes only the rest, and decides exactly as an uninterrupted check."""
    from ratecheck.claims import PROFILES
    from ratecheck.proofs.defedavg.hunts import HUNT_CORRECTED
    from ratecheck.runner import sweep

    profile = PROFILES["quick"]
    real, made = sweep._run_to_arrays, []

    def counted(config):
        made.append(config)
        return real(config)

    monkeypatch.setattr(sweep, "_run_to_arrays", counted)
    (whole,) = sweep.check_claims([HUNT_CORRECTED], profile, store=Store(tmp_path / "whole"), progress=False)
    total, k = len(made), len(made) // 2
    assert total >= 4, total

    def interrupted(config):
        if len(made) == k:
            raise KeyboardInterrupt  # the user presses Ctrl-C during run k + 1
        return counted(config)

    made.clear()
    monkeypatch.setattr(sweep, "_run_to_arrays", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep.check_claims([HUNT_CORRECTED], profile, store=Store(tmp_path / "resumed"), progress=False)
    made.clear()
    monkeypatch.setattr(sweep, "_run_to_arrays", counted)
    (resumed,) = sweep.check_claims([HUNT_CORRECTED], profile, store=Store(tmp_path / "resumed"), progress=False)
    assert len(made) == total - k  # the k runs before the interrupt are read back, none is redone
    assert resumed.verdict == whole.verdict and resumed.reason == whole.reason
    assert _without_seconds(resumed.evidence) == _without_seconds(whole.evidence)
