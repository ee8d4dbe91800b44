"""The ratecheck command: list, run, check (exit status), bad input."""

import json

import pytest

from ratecheck.cli import main


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


def test_check_json_and_exit_status(tmp_path, capsys):
    args = ["check", "bound_main_text", "--cache-dir", str(tmp_path / "cache"), "--json",
            "--report-dir", str(tmp_path / "reports")]
    assert main(args) == 0  # the main-text bound FAILs, as its claim expects
    data = json.loads(capsys.readouterr().out)
    (claim,) = data["claims"]
    assert claim["verdict"] == "FAIL" and claim["expected"] == "FAIL" and claim["ok"]
    assert claim["evidence"]["rows"][0]["bound"] > 0
    assert "theory" in claim["points"][0] and claim["points"][0]["theory"]["conditions"]
    assert (tmp_path / "reports" / "index.html").exists()
    # the second call is served from the cache
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["seconds"] < data["seconds"]


def test_check_unknown_pattern_is_a_usage_error(capsys):
    assert main(["check", "no-such-claim", "--no-cache", "--no-report"]) == 2
    assert "no claim matches" in capsys.readouterr().err


def test_report_writes_pages_from_the_cache(tmp_path, capsys):
    cache, out = str(tmp_path / "cache"), tmp_path / "rep"
    assert main(["check", "drift", "--cache-dir", cache, "--no-report"]) == 0
    capsys.readouterr()
    assert main(["report", "drift", "--cache-dir", cache, "--report-dir", str(out)]) == 0
    assert "report:" in capsys.readouterr().out
    page = (out / "defedavg.md").read_text()
    assert "defedavg.fedavg.drift_limit" in page and "negative control" in page
    assert list((out / "defedavg").glob("*.png"))


def test_a_failing_run_is_reported_without_a_traceback(monkeypatch, tmp_path, capsys):
    import ratecheck.sweep as sweep

    def broken(config):
        raise ValueError("participation without replacement needs m <= N")

    monkeypatch.setattr(sweep, "_run_to_arrays", broken)
    assert main(["check", "drift", "--cache-dir", str(tmp_path), "--no-report", "--jobs", "1"]) == 3
    assert "a run failed" in capsys.readouterr().err
