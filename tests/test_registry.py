"""The registry: entry points (a fake installed distribution on sys.path), --paper sources, bad
plugins, name clashes, and spawned workers resolving names registered from outside the package."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from ratecheck import registry
from ratecheck.algorithms import base
from ratecheck.registry import RegistryError

# A researcher's module: an algorithm built on FedAvg, a problem family and a paper with one claim.
PLUGIN = '''
from dataclasses import dataclass
from typing import ClassVar

from ratecheck.algorithms.base import register
from ratecheck.algorithms.fedavg import FedAvg
from ratecheck.claims import ValueClaim
from ratecheck.paper import Paper
from ratecheck.theory import Source
from ratecheck.trace import RunConfig


@register
@dataclass(frozen=True)
class {cls}(FedAvg):
    name: ClassVar[str] = "{alg}"


def make_problem(**params):
    from ratecheck.problems.quadratic import make
    return make(**params)


def configure(value, profile):
    return RunConfig("{run_alg}", {{"eta_local": 0.05}}, "{run_problem}", {{"dim": 2, "clients": 4}}, rounds=5,
                     replicas=profile.replicas)


PAPER = Paper(key="{key}", title="A plugin paper", seed="plugin.txt", claims=(ValueClaim(
    id="{key}.value", paper="{key}", title="t", statement="s", source=Source("plugin.txt", "Thm 1"), vary="v",
    grid={{"quick": (1,), "full": (1,)}}, configure=configure, measure="grad_norm_sq",
    predict=lambda config: 1.0, prediction="one"),))
'''


def plugin_source(key: str = "plug", alg: str = "plug_fedavg", cls: str = "PlugFedAvg",
                  run_alg: str | None = None, run_problem: str = "plug_quadratic") -> str:
    return PLUGIN.format(key=key, alg=alg, cls=cls, run_alg=run_alg or alg, run_problem=run_problem)


@pytest.fixture
def clean(monkeypatch):
    """A fresh process-wide registry; algorithm tables, modules and sys.path restored afterwards."""
    registry.default().ensure("algorithm", "problem")  # the package's own, imported once for all tests
    tables = (base.REGISTRY, base.DECLARED, base.ORIGINS, base.BY_MODULE)
    saved = [{k: (list(v) if isinstance(v, list) else v) for k, v in t.items()} for t in tables]
    modules, path = set(sys.modules), list(sys.path)
    previous = registry.reset(None)
    yield
    registry.reset(previous)
    for table, value in zip(tables, saved):
        table.clear()
        table.update(value)
    for name in set(sys.modules) - modules:
        if name.startswith(("rc_", "plug")):
            del sys.modules[name]
    sys.path[:] = path


def install(tmp_path, dist: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]):
    """A fake installed distribution: modules and a dist-info with entry_points.txt, on sys.path."""
    site = tmp_path / "site"
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, text in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(text))
    if str(site) not in sys.path:
        sys.path.insert(0, str(site))
    return site


GOOD_EPS = {
    "ratecheck.papers": {"plug": "rc_plug:PAPER"},
    "ratecheck.algorithms": {"plug_fedavg": "rc_plug:PlugFedAvg"},
    "ratecheck.problems": {"plug_quadratic": "rc_plug:make_problem"},
}


def test_the_package_s_own_entry_points_all_load(clean):
    """A paper that fails to import would otherwise only be a warning, and its claims would vanish."""
    reg = registry.default()
    reg.ensure()
    assert not reg.errors, "\n".join(map(str, reg.errors))
    assert {"defedavg", "simfbo", "fessgda"} <= set(reg.papers())
    assert {"quadratic", "quadratic_bilevel", "minimax"} <= {i.name for i in reg.items("problem")}
    assert {"fedavg", "simfbo", "fess_gda"} <= {i.name for i in reg.items("algorithm")}


def test_an_installed_plugin_registers_through_entry_points_with_its_origin(clean, tmp_path):
    install(tmp_path, "rc-plug", GOOD_EPS, {"rc_plug": plugin_source()})
    reg = registry.default()
    assert "plug" in reg.papers() and "defedavg" in reg.papers()  # the package's own papers too
    origins = {i.name: i.origin for kind in ("paper", "algorithm", "problem") for i in reg.items(kind)}
    assert origins["plug"].startswith("rc-plug entry point plug = rc_plug:PAPER")
    assert origins["plug_fedavg"].startswith("rc-plug entry point")
    assert origins["plug_quadratic"].startswith("rc-plug entry point")
    assert "entry point defedavg = ratecheck.proofs.defedavg:PAPER" in origins["defedavg"]
    assert reg.papers()["plug"].origin == origins["plug"]
    assert not reg.errors
    # the engine resolves the plugin's names like its own
    from ratecheck import run_config
    from ratecheck.claims import PROFILES

    [config] = reg.plan(reg.select_claims("plug"), PROFILES["quick"])
    trace = run_config(config.with_(replicas=2))
    assert trace.config.algorithm == "plug_fedavg" and trace.replicas == 2


def test_bad_plugins_are_reported_and_register_nothing_while_the_others_load(clean, tmp_path):
    half = plugin_source(key="half", alg="half_fedavg", cls="HalfFedAvg") + "\nraise ImportError('no such backend')\n"
    install(tmp_path, "rc-bad", {
        "ratecheck.papers": {"half": "rc_half:PAPER", "syntax": "rc_syntax:PAPER", "notapaper": "rc_notpaper:X",
                             "missing": "rc_missing_module:PAPER"},
        "ratecheck.problems": {"notcallable": "rc_notpaper:X"},
    }, {"rc_half": half, "rc_syntax": "PAPER = (\n", "rc_notpaper": "X = 3\n"})
    install(tmp_path, "rc-plug", GOOD_EPS, {"rc_plug": plugin_source()})
    reg = registry.default()
    papers = reg.papers()
    assert "plug" in papers and "half" not in papers and "defedavg" in papers
    text = "\n".join(map(str, reg.errors))
    assert "rc-bad entry point half = rc_half:PAPER: ImportError: no such backend" in text
    assert "rc-bad entry point syntax = rc_syntax:PAPER: SyntaxError" in text and "rc_syntax.py, line 1" in text
    assert "expected a ratecheck.paper.Paper" in text and "int 3" in text
    assert "ModuleNotFoundError" in text and "rc_missing_module" in text
    reg.items("problem")
    assert "notcallable = rc_notpaper:X: RegistryError: problem family 'notcallable': expected a factory" in \
        "\n".join(map(str, reg.errors))
    assert "half_fedavg" not in base.names()  # registered by @register before the failure: undone
    with pytest.raises(RegistryError, match="(?s)unknown algorithm .half_fedavg.*cannot load rc-bad"):
        registry.make_algorithm("half_fedavg")


def test_a_test_double_swapped_in_before_loading_survives_it(clean, tmp_path, monkeypatch):
    """Sensitivity tests swap a broken variant into REGISTRY, sometimes before the real one is imported."""
    install(tmp_path, "rc-swap", {"ratecheck.algorithms": {"swap": "rc_swap"}},
            {"rc_swap": plugin_source(key="swap", alg="swap_fedavg", cls="Real")})

    class Double:
        name = "swap_fedavg"

    monkeypatch.setitem(base.REGISTRY, "swap_fedavg", Double)
    reg = registry.default()
    assert reg.algorithm("swap_fedavg") is Double and not reg.errors
    monkeypatch.undo()
    assert reg.algorithm("swap_fedavg").__qualname__ == "Real"


def test_name_clashes_are_errors_naming_both_origins(clean, tmp_path):
    clash = plugin_source(key="defedavg", alg="fedavg", cls="MyFedAvg")
    install(tmp_path, "rc-clash", {
        "ratecheck.papers": {"defedavg": "rc_clash_paper:PAPER"},
        "ratecheck.algorithms": {"fedavg": "rc_clash_alg:MyFedAvg"},
        "ratecheck.problems": {"quadratic": "rc_clash_problem:make"},
    }, {"rc_clash_alg": clash, "rc_clash_paper": plugin_source(key="defedavg", alg="clash_alg", cls="C"),
        "rc_clash_problem": "def make(**params):\n    return None\n"})
    reg = registry.default()
    reg.ensure()
    text = "\n".join(map(str, reg.errors))
    assert "rc-clash entry point fedavg = rc_clash_alg:MyFedAvg: ValueError: algorithm name 'fedavg' registered " \
           "twice: by ratecheck" in text and "by module rc_clash_alg (MyFedAvg)" in text
    assert "rc-clash entry point quadratic" in text
    assert "problem family 'quadratic' is already registered by ratecheck" in text
    assert "paper 'defedavg' is already registered by ratecheck" in text
    assert reg.algorithm("fedavg").__module__ == "ratecheck.algorithms.fedavg"


def test_paper_from_a_py_file_through_the_cli(clean, tmp_path, capsys):
    from ratecheck.interfaces.cli import main

    path = tmp_path / "plug_claims.py"
    path.write_text(plugin_source(key="plugfile", alg="plugfile_fedavg", run_problem="quadratic"))
    assert main(["list", "--json", "--paper", str(path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"paper": "plugfile", "title": "A plugin paper", "source": "plugin.txt",
            "origin": f"--paper {path}"} in data["papers"]
    assert {a["name"]: a["origin"] for a in data["algorithms"]}["plugfile_fedavg"] == f"--paper {path}"
    assert "plugfile.value" in {c["id"] for c in data["claims"]}
    # the same file again is idempotent; runs and checks resolve its names
    registry.add_source(str(path))
    assert main(["run", "plugfile_fedavg", "--problem", "quadratic", "--rounds", "3", "--replicas", "2",
                 "--paper", str(path)]) == 0


def test_a_broken_paper_file_is_a_clear_error(clean, tmp_path, capsys):
    from ratecheck.interfaces.cli import main

    bad = tmp_path / "plug_broken.py"
    bad.write_text("from ratecheck.paper import Paper\nPAPER = Paper(key='x', title='t', seed='s'\n")
    with pytest.raises(RegistryError, match=r"--paper .*plug_broken.py: SyntaxError: .*line 2"):
        registry.add_source(str(bad))
    assert main(["list", "--paper", str(bad)]) == 2
    assert "plug_broken.py: SyntaxError" in capsys.readouterr().err
    with pytest.raises(RegistryError, match="no such file"):
        registry.add_source(str(tmp_path / "absent.py"))
    with pytest.raises(RegistryError, match="ModuleNotFoundError: No module named 'plug_no_such'"):
        registry.add_source("plug_no_such")
    empty = tmp_path / "plug_empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(RegistryError, match="defines no PAPER, PROBLEMS or ALGORITHMS"):
        registry.add_source(str(empty))
    assert registry.default().sources == [] and registry.default().errors == []


def test_a_claim_naming_an_unknown_algorithm_or_problem_is_refused_before_running(clean, tmp_path):
    from ratecheck.claims import PROFILES

    path = tmp_path / "plug_typo.py"
    path.write_text(plugin_source(key="typo", alg="typo_fedavg", run_alg="fedavgg", run_problem="quadratc"))
    registry.add_source(str(path))
    with pytest.raises(RegistryError) as info:
        registry.plan(registry.select_claims("typo"), PROFILES["quick"])
    text = str(info.value)
    assert f"claim typo.value (paper 'typo' from --paper {path}) runs unknown algorithm 'fedavgg'" in text
    assert "unknown problem family 'quadratc'" in text and "'quadratic'" in text


def test_spawned_workers_resolve_an_algorithm_from_a_paper_file(clean, tmp_path, monkeypatch):
    """The process pool starts fresh interpreters: they learn the --paper source, and the module of
    an algorithm registered by a plain import (a notebook's own module), with each job."""
    import importlib

    from ratecheck.runner.executors import ProcessExecutor
    from ratecheck.runner.sweep import run_configs
    from ratecheck.trace import RunConfig

    path = tmp_path / "plug_worker.py"
    path.write_text(plugin_source(key="plugw", alg="plugw_fedavg", run_problem="quadratic"))
    registry.add_source(str(path))
    (tmp_path / "plug_direct.py").write_text(plugin_source(key="plugdirect", alg="plugdirect_fedavg"))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("plug_direct")  # registered by @register alone, never added as a source
    problem = {"dim": 2, "clients": 4}
    configs = [RunConfig(name, {"eta_local": 0.05}, "quadratic", problem, rounds=3, replicas=2)
               for name in ("plugw_fedavg", "plugdirect_fedavg")]
    with ProcessExecutor(1) as executor:
        traces = run_configs(configs, executor=executor, progress=False)
    assert [traces[c.key()].config.algorithm for c in configs] == ["plugw_fedavg", "plugdirect_fedavg"]
    assert registry.with_sources(len).sources == (str(path), "plug_direct")


def test_without_extra_sources_jobs_are_sent_as_they_are(clean):
    assert registry.with_sources(len) is len


@pytest.mark.full  # a local Dask cluster takes 5-40 s to start; the spawn pool test covers the default run
def test_dask_workers_resolve_an_algorithm_from_a_paper_file(clean, tmp_path):
    pytest.importorskip("distributed")
    from ratecheck.runner.executors import DaskExecutor
    from ratecheck.runner.sweep import run_configs
    from ratecheck.trace import RunConfig

    path = tmp_path / "plug_dask.py"
    path.write_text(plugin_source(key="plugd", alg="plugd_fedavg", run_problem="quadratic"))
    registry.add_source(str(path))
    config = RunConfig("plugd_fedavg", {"eta_local": 0.05}, "quadratic", {"dim": 2, "clients": 4}, rounds=3,
                       replicas=2)
    with DaskExecutor(local_workers=1) as executor:
        traces = run_configs([config], executor=executor, progress=False)
    assert traces[config.key()].config.algorithm == "plugd_fedavg"


def test_a_pattern_naming_a_paper_imports_that_paper_only_and_selects_as_before():
    """Issue #19: `ratecheck check PAPER` (or PAPER.T3*) loads that paper alone; the claims chosen are those
    the pattern chooses among every paper's claims."""
    import fnmatch
    import subprocess

    code = ("import sys; from ratecheck import registry; r = registry.Registry(); r.select_claims('strfedavg.T*'); "
            "print(sorted(m for m in sys.modules if m.startswith('ratecheck.proofs.') and m.count('.') == 2))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['ratecheck.proofs.strfedavg']"
    every = registry.Registry().claims()
    for pattern in ("defedavg", "fedbio.S1*", "simfbo.oracle", "strfedavg.*", "oracle"):
        glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
        want = [c.id for c in every if fnmatch.fnmatch(c.id, glob) or fnmatch.fnmatch(c.paper, glob)]
        assert [c.id for c in registry.Registry().select_claims(pattern)] == want, pattern
