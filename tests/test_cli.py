"""The ratecheck command: list, run, check (exit status), bad input."""

import json
import signal

import pytest

from ratecheck.interfaces.cli import main


def test_list_json_names_everything(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"papers", "theorems", "claims", "problems", "algorithms"} <= set(data)
    assert "defedavg.T2.speedup_n" in {c["id"] for c in data["claims"]}
    assert "quadratic" in data["problems"]
    assert {"fedavg", "defedavg_iid", "defedavg_niid"} <= {a["name"] for a in data["algorithms"]}


def test_list_table(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "defedavg.theorem2" in out and "Claims:" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_run_prints_final_measures(capsys):
    code = main(["run", "defedavg_iid", "--problem", "quadratic", "--set", "eta_local=0.05",
                 "--set", "local_steps=2", "--set", "participation=without_replacement:4",
                 "--set", "delay=constant:1", "--problem-set", "clients=8", "--rounds", "30",
                 "--replicas", "3", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["rounds"] == 30
    assert data["final"]["grad_norm_sq"]["mean"] > 0
    assert data["counters"]["oracle_calls"] == 30 * 4 * 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "fedavg", "--problem", "quadratic", "--set", "eta_local=-1"], "parameter eta_local = -1 is invalid"),
        (["run", "fedavg", "--problem", "quadratic", "--set", "local_steps=0"], "local_steps"),
        (["run", "fedavg", "--problem", "quadratic", "--set", "participation=without_replacement:99"], "m <= N"),
        (["run", "fedavg", "--problem", "nowhere"], "unknown problem family"),
    ],
)
def test_run_bad_input_exits_2_with_the_rule(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.claims  # `check bound_main_text` end to end, its report written, twice
def test_check_json_and_exit_status(tmp_path, capsys):
    args = ["check", "bound_main_text", "--cache-dir", str(tmp_path / "cache"), "--json",
            "--report-dir", str(tmp_path / "reports")]
    assert main(args) == 0  # the main-text bound FAILs, as its claim expects
    data = json.loads(capsys.readouterr().out)
    (claim,) = data["claims"]
    assert claim["verdict"] == "FAIL" and claim["expected"] == "FAIL" and claim["ok"]
    assert claim["evidence"]["rows"][0]["bound"] > 0
    assert "theory" in claim["points"][0] and claim["points"][0]["theory"]["conditions"]
    # a subset's report has its own folder: the full report (reports/index.html) is never overwritten by it
    assert data["report"] == str(tmp_path / "reports" / "subsets" / "bound_main_text" / "index.html")
    assert (tmp_path / "reports" / "subsets" / "bound_main_text" / "index.html").exists()
    assert not (tmp_path / "reports" / "index.html").exists()
    # the second call is served from the cache
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["seconds"] < data["seconds"]


def test_check_unknown_pattern_is_a_usage_error(capsys):
    assert main(["check", "no-such-claim", "--no-cache", "--no-report"]) == 2
    assert "no claim matches" in capsys.readouterr().err


@pytest.mark.claims  # `check` then `report` end to end on registered claims
def test_report_writes_pages_from_the_cache(tmp_path, capsys):
    cache, out = str(tmp_path / "cache"), tmp_path / "rep"
    assert main(["check", "defedavg.fedavg.drift*", "--cache-dir", cache, "--no-report"]) == 0
    capsys.readouterr()
    assert main(["report", "defedavg.fedavg.drift*", "--cache-dir", cache, "--report-dir", str(out)]) == 0
    assert "report:" in capsys.readouterr().out
    subset = out / "subsets" / "defedavg.fedavg.drift"  # a subset's report: its own folder
    page = (subset / "defedavg.md").read_text()
    assert "defedavg.fedavg.drift_limit" in page and "negative control" in page
    assert list((subset / "defedavg").glob("*.svg"))


def test_a_failing_run_is_reported_without_a_traceback(monkeypatch, tmp_path, capsys):
    import ratecheck.runner.sweep as sweep

    def broken(config):
        raise ValueError("participation without replacement needs m <= N")

    monkeypatch.setattr(sweep, "_run_to_arrays", broken)
    assert main(["check", "defedavg.fedavg.drift*", "--cache-dir", str(tmp_path), "--no-report", "--jobs", "1"]) == 3
    assert "a run failed" in capsys.readouterr().err


# -- issue #7: exit codes, interrupts, cache reuse, table width, the cache command -------------------


@pytest.mark.parametrize("argv, message", [
    (["run", "fedavg", "--problem", "quadratic", "--set", "="], "KEY=VALUE"),
    (["run", "fedavg", "--problem", "quadratic", "--set", "eta_local=nan"], "eta_local = 'nan'"),
    (["run", "fedavg", "--problem", "quadratic", "--set", "eta_local="], "eta_local = ''"),
    (["run", "fedavg", "--problem", "quadratic", "--set", "local_steps=2.0"], "local_steps = 2.0"),
    (["run", "fedavg", "--problem", "quadratic", "--set", "local_steps=1e999"], "local_steps = '1e999'"),
    (["run", "fedavg", "--problem", "minimax"], "'fedavg' does not run on problem family 'minimax'"),
    (["run", "fednest", "--problem", "quadratic"], "'fednest' does not run on problem family 'quadratic'"),
    (["run", "shrofbo", "--problem", "minimax"], "'shrofbo' does not run on problem family 'minimax'"),
    (["run", "fedavg", "--problem", "quadratic", "--problem-set", "rotate=yes"], "rotate = 'yes'"),
    (["run", "fedavg", "--problem", "quadratic", "--problem-set", "seed=null"], "seed = None"),
    (["run", "fedavg", "--problem", "quadratic", "--problem-set", "clients=1e12"], "clients"),
    (["run", "fess_gda_two_phase", "--problem", "minimax", "--set", "eta_y_local_2=-1"], "eta_y_local_2 = -1"),
    (["run", "fedavg", "--problem", "quadratic", "--rounds", "1000000000000"], "element updates"),
    (["run", "fedavg", "--problem", "quadratic", "--replicas", "100000000"], "replicas"),
    (["run", "fedavg", "--problem", "quadratic", "--rounds", "1e12"], "invalid int value"),
    (["check", "no-such-claim", "--no-cache"], "no claim matches"),
    (["check", "defedavg.fedavg.drift*", "--jobs", "0", "--no-cache"], "--jobs"),
])
def test_bad_usage_and_input_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_python_booleans_on_the_command_line_are_booleans():
    from ratecheck.interfaces.cli import _parse_value

    assert _parse_value("False") is False and _parse_value("true") is True and _parse_value("None") is None
    assert _parse_value("1e999") == "1e999" and _parse_value("[1, 2]") == [1, 2]


def test_a_file_as_cache_dir_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("x")
    assert main(["check", "defedavg.fedavg.drift*", "--cache-dir", str(path), "--no-report"]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["cache", "info", "--cache-dir", str(path)]) == 2


def test_an_unreachable_dask_scheduler_fails_fast_with_exit_3(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    import time

    from ratecheck.runner.executors import DaskExecutor

    # a 1 s connect timeout instead of the default 5 s: distributed's own 30 s would still exceed the bound
    monkeypatch.setattr(DaskExecutor.__init__, "__defaults__", (None, 2, 1.0))

    started = time.perf_counter()
    assert main(["check", "defedavg.fedavg.drift*", "--dask", "127.0.0.1:1", "--no-cache", "--no-report"]) == 3
    assert time.perf_counter() - started < 25
    err = capsys.readouterr().err
    assert "Dask scheduler at 127.0.0.1:1" in err and "Traceback" not in err


@pytest.mark.claims  # `ratecheck check` of registered claim fessgda.A5.drift_bias through the CLI
def test_ctrl_c_says_how_many_runs_are_stored(monkeypatch, tmp_path, capsys):
    import ratecheck.runner.sweep as sweep

    real, calls = sweep._run_to_arrays, []

    def interrupted(config):
        calls.append(config)
        if len(calls) == 3:
            signal.raise_signal(signal.SIGINT)  # the user presses Ctrl-C (the CLI's handler raises)
        return real(config)

    monkeypatch.setattr(sweep, "_run_to_arrays", interrupted)
    cache = str(tmp_path / "cache")
    pattern = "fessgda.A5.drift_bias"  # noise-free runs, five of them
    assert main(["check", pattern, "--cache-dir", cache, "--no-report", "--jobs", "1"]) == 130
    err = capsys.readouterr().err
    assert "interrupted: 2 runs stored" in err and "rerun to resume" in err and "Traceback" not in err
    monkeypatch.setattr(sweep, "_run_to_arrays", real)
    assert main(["check", pattern, "--cache-dir", cache, "--no-report", "--jobs", "1", "-v"]) == 0
    out = capsys.readouterr().out
    from ratecheck import registry
    from ratecheck.claims import PROFILES

    claims = registry.default().select_claims(pattern)
    total = len(registry.default().plan(claims, PROFILES["quick"]))
    plans = len(sweep._planners(claims)) + 1  # each claim's planned runs are stored too, and the parsed imports
    assert f"runs: 2 reused from the cache, {total - 2} computed" in out
    assert max(len(line) for line in out.splitlines()) <= 100
    # fessgda.A5.drift_bias runs exact (issue #8): it says so, never a zero-width CI
    assert "exact expectations, no CI" in out and "CI [" not in out
    # the cache command sees them all, none stale; prune keeps them, clear removes them
    assert main(["cache", "info", "--cache-dir", cache, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    # sympy's derivations are records too, written only by a process that has not derived them yet
    assert info["entries"] == total + plans + info["derivations"] and info["stale_code_entries"] == 0
    assert main(["cache", "prune", "--cache-dir", cache]) == 0
    assert "0 entries from code that changed" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-dir", cache]) == 0
    assert f"{total + plans + info['derivations']} entries removed" in capsys.readouterr().out


def test_the_verdict_table_fits_100_columns_and_elides_visibly():
    from ratecheck.interfaces.cli import _table

    rows = [["a.claim.with.a.long.name", "PASS", "PASS", "ok", "x" * 300]]
    text = _table(rows, ["claim", "verdict", "expected", "status", "reason"], width=100)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert text.splitlines()[-1].endswith("\u2026")


@pytest.mark.claims  # `ratecheck check fedbio.S6*` (registered claims) through the CLI
def test_one_failing_run_gives_its_claims_an_error_and_the_others_are_decided(monkeypatch, tmp_path, capsys):
    """Issue #23 item 5: a run that fails costs only the claims that read it (ERROR, exit 1)."""
    import json

    import ratecheck.runner.sweep as sweep

    real = sweep._run_to_arrays

    def broken_once(config):
        if config.algorithm == "naive_hypergrad":  # the runs of some of the claims, not all
            raise ValueError("exact mode refused this instance")
        return real(config)

    monkeypatch.setattr(sweep, "_run_to_arrays", broken_once)
    code = main(["check", "fedbio.S6*", "--cache-dir", str(tmp_path), "--no-report", "--jobs", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    verdicts = {c["claim"]: c["verdict"] for c in data["claims"]}
    assert "ERROR" in verdicts.values() and set(verdicts.values()) - {"ERROR"}, verdicts
    assert code == 1
    error = next(c for c in data["claims"] if c["verdict"] == "ERROR")
    assert "exact mode refused this instance" in error["reason"] and not error["ok"]
