"""The layer contract (issue #20 item 2): [tool.ratecheck.layers] in pyproject.toml orders the layers
bottom to top and assigns every module of the package, problems and proofs to one (longest listed
prefix). A module imports only from its own layer and the layers below, and no modules import each
other in a cycle. The graph is read from the sources: module-level and function-local imports count
(a local import hides nothing), ``if TYPE_CHECKING`` blocks do not (annotations only)."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def _contract() -> tuple[list[str], dict[str, str]]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ratecheck"]["layers"]
    return list(table["order"]), dict(table["modules"])


def _sources() -> dict[str, tuple[Path, bool]]:
    """module name -> (file, is a package); problems/ and proofs/ under the name they import by."""
    names = {"ratecheck": "ratecheck", "problems": "problems", "proofs": "proofs"}
    init = (ROOT / "ratecheck" / "__init__.py").read_text()
    if "_checkout_packages" in init:  # installed as ratecheck.problems and ratecheck.proofs
        names.update(problems="ratecheck.problems", proofs="ratecheck.proofs")
    out = {}
    for folder, name in names.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join([name, *(parts[:-1] if is_pkg else parts)])] = (path, is_pkg)
    return out


def _typing_only(tree: ast.AST) -> set[int]:
    def is_type_checking(test: ast.expr) -> bool:
        return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"

    return {id(sub) for node in ast.walk(tree) if isinstance(node, ast.If) and is_type_checking(node.test)
            for sub in ast.walk(node)}


@functools.cache  # read once for the module's tests (they only read it)
def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module of the project: line of the first such import}."""
    sources = _sources()
    graph: dict[str, dict[str, int]] = {}
    for module, (path, is_pkg) in sources.items():
        text = path.read_text()
        tree = ast.parse(text)
        skip = _typing_only(tree) if "TYPE_CHECKING" in text else set()  # a second walk only where it can matter
        edges: dict[str, int] = {}
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1] if node.level else []
                stem = ".".join(base + ([node.module] if node.module else []))
                targets = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in sources:
                    target = target.rpartition(".")[0]
                # a package's own __init__ (its version, its re-exports) is not a dependency
                if target and target != module and not module.startswith(target + "."):
                    edges.setdefault(target, node.lineno)
        graph[module] = edges
    return graph


def layer_of(module: str, table: dict[str, str]) -> str | None:
    probe = module
    while probe:
        if probe in table:
            return table[probe]
        probe = probe.rpartition(".")[0]
    return None


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph.get(w, {}))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_every_module_has_a_layer():
    order, table = _contract()
    assert set(table.values()) <= set(order), f"layers not in order: {set(table.values()) - set(order)}"
    missing = sorted(m for m in _sources() if layer_of(m, table) is None)
    assert not missing, f"modules in no layer of [tool.ratecheck.layers] (add them to the contract): {missing}"


def test_no_upward_imports():
    order, table = _contract()
    rank = {name: i for i, name in enumerate(order)}
    upward = []
    for module, edges in import_graph().items():
        here = layer_of(module, table)
        for target, line in edges.items():
            there = layer_of(target, table)
            if here and there and rank[there] > rank[here]:
                upward.append(f"{module} ({here}) imports {target} ({there}) at line {line}")
    assert not upward, "imports upward across layers:\n" + "\n".join(upward)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_check_sees_a_violation():
    """The rules are not vacuous: a cycle and an upward edge planted in the graph are found."""
    order, table = _contract()
    graph = import_graph()
    top, bottom = (next(m for m in graph if layer_of(m, table) == order[i]) for i in (-1, 0))
    planted = {**graph, bottom: {**graph[bottom], top: 1}, top: {**graph[top], bottom: 1}}
    assert any(bottom in c and top in c for c in cycles(planted))
    rank = {name: i for i, name in enumerate(order)}
    assert rank[layer_of(top, table)] > rank[layer_of(bottom, table)]  # the planted edge points up


def unexplained_local_imports(text: str) -> list[int]:
    """Lines of function-local imports of the project whose reason is not written down: no comment on the
    line or on the block of imports and comments right above it, and no module docstring that states the
    module's local-import policy (it names "start-up")."""
    tree = ast.parse(text)
    if "start-up" in (ast.get_docstring(tree) or ""):
        return []
    lines = text.splitlines()
    found = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            own = getattr(node, "level", 0) > 0 or any(n.split(".")[0] in ("ratecheck", "problems", "proofs")
                                                       for n in names)
            above = node.lineno - 1
            explained = "#" in lines[above]
            while not explained and above > 0 and lines[above - 1].strip().startswith(("from ", "import ", "#")):
                above -= 1
                explained = "#" in lines[above]
            if own and not explained:
                found.add(node.lineno)
    return sorted(found)


def test_local_imports_say_why():
    """Issue #20 item 2: function-local imports remain only for start-up time, each with a comment."""
    bare = [f"{path.relative_to(ROOT)}:{line}" for path, _ in _sources().values()
            for line in unexplained_local_imports(path.read_text())]
    assert not bare, "function-local imports without a comment saying why (start-up time):\n" + "\n".join(bare)


def test_local_import_rule_sees_a_bare_import():
    bare = "def f():\n    x = 1\n    from ratecheck import params\n"
    said = "def f():\n    # start-up: params loads only here\n    from ratecheck import params\n    from . import x\n"
    assert unexplained_local_imports(bare) == [3]
    assert unexplained_local_imports(said) == []
    assert unexplained_local_imports('"""Commands import inside (start-up)."""\n' + bare) == []
