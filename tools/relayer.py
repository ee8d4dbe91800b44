#!/usr/bin/env python3
"""Move ratecheck's flat modules into layer folders and rewrite every import (issue #20 items 2 and 5).

    python tools/relayer.py [--dry-run] [--no-namespace] [--root DIR]

Run from a checkout (any branch, any time: it reads what is there). It

1. moves each internal module ``ratecheck/X.py`` into the folder of its layer (``ratecheck/model/``,
   ``simulate/``, ``run/``, ``interfaces/`` or an existing package), per LAYERS below; the public
   modules plugins import (PUBLIC) keep their paths; a flat module LAYERS does not know is placed by
   its imports (the lowest layer with a folder above everything it imports and below everything
   that imports it) and said so;
2. installs ``problems`` and ``proofs`` as ``ratecheck.problems`` and ``ratecheck.proofs`` (a
   setuptools package-dir mapping; the folders stay at the top of the checkout), unless
   ``--no-namespace``;
3. rewrites imports with libcst (relative ones stay relative, computed from the new places), dotted
   names and ``ratecheck/X.py`` paths in strings, comments, pyproject.toml and Markdown;
4. writes the layer contract ``[tool.ratecheck.layers]`` in pyproject.toml (tests/test_layers.py
   enforces it) and the README's architecture block between its ``layers:begin``/``layers:end``
   markers;
5. prints every move and every rewritten file.

Idempotent: a module already in its folder is not moved again, a rewritten reference no longer
matches. It touches nothing under ``reports/``, caches or ``.git``.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from collections.abc import Iterable
from pathlib import Path

import libcst as cst

# Bottom to top: (layer, folder for the layer's internal modules or None, its modules as they are
# named today). A module may import from its own layer and the layers below it only.
LAYERS: list[tuple[str, str | None, list[str]]] = [
    ("model", "model", [  # what a run is made of: problems' contract, parameters, randomness, traces
        "seeding", "params", "options", "points", "assumptions", "problem", "oracles", "diagnostics",
        "trace", "participation", "asynchrony", "projections", "strategies", "fit", "interrupts", "latex",
        "store",  # stdlib and numpy only: runs and symbolic derivations are both stored
    ]),
    ("algorithms", None, ["algorithms"]),  # the algorithm contract and the package's algorithms
    ("theory", None, ["theory", "statements", "asymptotics", "derivations"]),  # theorems as sympy: bounds, conditions, orders
    ("catalog", None, ["paper", "registry"]),  # the one registration path: names -> papers, algorithms, families
    ("exact", None, ["exact"]),  # exact expectations of linear-Gaussian runs
    ("simulate", "simulate", ["engine", "inspection"]),  # run a configuration; read a run's problem back
    ("claims", None, ["claims", "explain", "binding"]),  # what to run and how to judge it
    ("run", "runner", [  # plan, cache, execute and decide many claims (not ratecheck/run/: ratecheck.run is a function)
        "tasks", "identity", "executors", "sweep", "horizon", "hunt", "checking",
    ]),
    ("report", None, ["report"]),
    ("interfaces", "interfaces", ["cli", "cli_text", "cli_options", "cli_cache", "pytest_plugin", "__main__", "testing",
                                  "describe", "docs_ext", "scaffold", "tex_drafts", "mutate"]),
    ("families", None, ["problems"]),  # the closed-form problem families (top-level folder problems/)
    ("papers", None, ["proofs"]),  # the encoded papers (top-level folder proofs/)
]
# Modules that keep their path whatever their layer: what plugins, the README and the worked example
# import (ratecheck.params, .assumptions, .problem, .trace, .theory, .paper, .binding ...) and the
# entry points pytest and pip know by name.
PUBLIC = {
    "seeding", "params", "assumptions", "problem", "oracles", "trace", "theory", "paper", "registry",
    "inspection", "binding", "pytest_plugin", "__main__", "statements", "docs_ext",
}
# existing packages named in LAYERS stay where they are; a module listed for a package's layer moves
# into that package (explain -> claims/explain.py)
NAMESPACE = {"problems": "ratecheck.problems", "proofs": "ratecheck.proofs"}
SCANNED = ["ratecheck", "problems", "proofs", "tests", "benchmarks", "examples", "tools", "docs", ".ci"]
TEXT_SUFFIXES = {".md", ".toml", ".txt", ".cfg", ".ini", ".rst", ""}
SKIP_DIRS = {".git", "reports", "__pycache__", ".ratecheck-cache", ".mypy_cache", ".ruff_cache", ".pytest_cache",
             "build", "dist"}
README_BEGIN, README_END = "<!-- layers:begin -->", "<!-- layers:end -->"


def layer_index() -> dict[str, int]:
    return {name: i for i, (name, _, _) in enumerate(LAYERS)}


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def python_files(root: Path) -> list[Path]:
    out = []
    for top in SCANNED:
        base = root / top
        if base.is_file():
            out.append(base)
        elif base.is_dir():
            for p in sorted(base.rglob("*")):
                if p.is_file() and not SKIP_DIRS & set(p.relative_to(root).parts):
                    out.append(p)
    for p in sorted(root.glob("*")):
        if p.is_file():
            out.append(p)
    return out


# -- the plan -------------------------------------------------------------------------------------

def runtime_edges(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """module -> modules of ``packages`` it imports (function-local imports included,
    ``if TYPE_CHECKING`` blocks not)."""
    files = [p for pkg in packages for p in (root / pkg).rglob("*.py") if (root / pkg).is_dir()]
    mods = {module_name(root, p): p for p in files}
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        tree = ast.parse(p.read_text())
        typing_only = {id(s) for n in ast.walk(tree) if isinstance(n, ast.If) and _type_checking(n.test)
                       for s in ast.walk(n)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(m, p.name == "__init__.py", node.level, node.module)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and not m.startswith(t + "."):
                    edges[m].add(t)
    return edges


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def plan_moves(root: Path) -> tuple[dict[str, str], dict[str, str], list[str], dict[str, str]]:
    """(old module -> new module for every flat module that moves or has moved, module -> layer
    for the contract, notes, modules and packages LAYERS does not list -> the layer their imports
    put them in). Decided from the files present."""
    pkg = root / "ratecheck"
    known = {m: (layer, folder) for layer, folder, mods in LAYERS for m in mods}
    packages = {layer: m for layer, folder, mods in LAYERS for m in mods if (pkg / m).is_dir()}
    notes: list[str] = []
    moves: dict[str, str] = {}

    def target(name: str, layer: str, folder: str | None) -> str | None:
        if name in PUBLIC:
            return None
        if folder:
            return f"ratecheck.{folder}.{name}"
        if layer in packages and packages[layer] != name:
            return f"ratecheck.{packages[layer]}.{name}"
        return None

    for name, (layer, folder) in known.items():
        new = target(name, layer, folder)
        if new is None:
            continue
        old_file, new_file = pkg / f"{name}.py", root / (new.replace(".", "/") + ".py")
        if old_file.exists() and new_file.exists():
            raise SystemExit(f"relayer: both {old_file} and {new_file} exist; resolve by hand")
        if old_file.exists() or new_file.exists():
            moves[f"ratecheck.{name}"] = new
    # flat modules nobody listed: placed by their imports
    folders = {folder for _, folder, _ in LAYERS if folder}
    unknown = sorted(p.stem for p in pkg.glob("*.py") if p.stem not in known and p.stem != "__init__")
    unknown += sorted(p.parent.name for p in pkg.glob("*/__init__.py")  # packages nobody listed: layered in place
                      if p.parent.name not in known and p.parent.name not in folders)
    placed: dict[str, str] = {}
    if unknown:
        index = layer_index()
        edges = runtime_edges(root, ["ratecheck"])
        where = {f"ratecheck.{n}": known[n][0] for n in known}
        for sub in (pkg / f for f in folders):
            if sub.is_dir():
                for p in sub.glob("*.py"):
                    where[module_name(root, p)] = sub.name
        for layer, m in packages.items():
            where[f"ratecheck.{m}"] = layer

        def layer_of(mod: str) -> str | None:
            while mod and mod not in where:
                mod = mod.rpartition(".")[0]
            return where.get(mod)

        for name in unknown:
            mod = f"ratecheck.{name}"
            inside = [m for m in edges if m == mod or m.startswith(mod + ".")]
            low = max((index[lay] for m2 in inside for d in edges[m2] if d not in inside and (lay := layer_of(d))),
                      default=0)
            high = min((index[lay] for m2, ds in edges.items() if m2 not in inside
                        and any(d in inside for d in ds) and (lay := layer_of(m2))), default=len(LAYERS) - 1)
            if (pkg / name).is_dir():
                where[mod] = placed[mod] = LAYERS[min(low, high)][0]
                notes.append(f"layered in place by its imports: ratecheck/{name}/ -> layer {placed[mod]} "
                             f"(not listed in LAYERS)")
                continue
            choice = next((i for i in range(low, high + 1) if LAYERS[i][1]), None)
            if choice is None:
                notes.append(f"left in place: ratecheck/{name}.py (layer {LAYERS[low][0]} has no folder; "
                             f"add it to LAYERS or PUBLIC)")
                where[mod] = placed[mod] = LAYERS[low][0]
                continue
            layer, folder = LAYERS[choice][0], LAYERS[choice][1]
            moves[mod] = f"ratecheck.{folder}.{name}"
            where[mod] = layer
            notes.append(f"placed by its imports: ratecheck/{name}.py -> layer {layer} (not listed in LAYERS)")
    return moves, contract(moves, placed=placed), notes, placed


def contract(moves: dict[str, str], namespace: bool = True, placed: dict[str, str] | None = None) -> dict[str, str]:
    """module prefix -> layer, for the layout after ``moves`` (a folder stands for its modules)."""
    out: dict[str, str] = {"ratecheck": "interfaces", **(placed or {})}
    for layer, folder, mods in LAYERS:
        if folder:
            out[f"ratecheck.{folder}"] = layer
        for m in mods:
            if m in NAMESPACE:
                out[NAMESPACE[m] if namespace else m] = layer
                continue
            name = moves.get(f"ratecheck.{m}", f"ratecheck.{m}")
            out[name] = layer
    for new in moves.values():  # modules placed by their imports
        if new not in out:
            out[new] = next(lay for lay, f, _ in LAYERS if f == new.split(".")[1])

    def covered(mod: str) -> bool:
        parent = mod.rpartition(".")[0]
        while parent:
            if parent in out:
                return out[parent] == out[mod]
            parent = parent.rpartition(".")[0]
        return False

    return dict(sorted((m, lay) for m, lay in out.items() if m == "ratecheck" or not covered(m)))


# -- rewriting --------------------------------------------------------------------------------------

class Renamer:
    """Old dotted module names -> new ones (longest prefix first)."""

    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = dict(sorted(renames.items(), key=lambda kv: -len(kv[0])))
        moved = "|".join(re.escape(k[len("ratecheck."):]) for k in self.renames if k.startswith("ratecheck."))
        self.dotted = re.compile(rf"(?<![\w.])ratecheck\.({moved})(?![\w])") if moved else None
        self.paths = re.compile(rf"(?<![\w/])ratecheck/({moved})\.py\b") if moved else None
        # a path built from parts in code: ROOT / "ratecheck" / "sweep.py"
        self.parts = re.compile(rf"([\"'])ratecheck\1(\s*/\s*)([\"'])({moved})\.py\3") if moved else None
        spaces = "|".join(re.escape(k) for k in self.renames if not k.startswith("ratecheck."))
        self.space = re.compile(rf"(?<![\w./-])({spaces})\.(?=[a-z_])") if spaces else None
        self.imports = re.compile(rf"(?<![\w.])from ({spaces}) import\b") if spaces else None  # code in a string

    def __call__(self, name: str) -> str:
        for old, new in self.renames.items():
            if name == old or name.startswith(old + "."):
                return new + name[len(old):]
        return name

    def text(self, s: str, namespaces: bool = True) -> str:
        if self.parts:
            s = self.parts.sub(lambda m: m.group(1) + "ratecheck" + m.group(1) + "".join(
                f"{m.group(2)}{m.group(3)}{part}{m.group(3)}"
                for part in self(f"ratecheck.{m.group(4)}").split(".")[1:-1]) + f"{m.group(2)}{m.group(3)}{m.group(4)}.py{m.group(3)}", s)
        if self.dotted:
            s = self.dotted.sub(lambda m: self(f"ratecheck.{m.group(1)}"), s)
        if self.paths:
            s = self.paths.sub(lambda m: self(f"ratecheck.{m.group(1)}").replace(".", "/") + ".py", s)
        if namespaces and self.space:
            s = self.space.sub(lambda m: self(m.group(1)) + ".", s)
            s = self.imports.sub(lambda m: f"from {self(m.group(1))} import", s)
        return s


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise TypeError(node)


def _expr(name: str) -> cst.Attribute | cst.Name:
    parts = name.split(".")
    node: cst.Attribute | cst.Name = cst.Name(parts[0])
    for p in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(p))
    return node


class ImportRewriter(cst.CSTTransformer):
    def __init__(self, rename: Renamer, old_module: str | None, new_module: str | None, is_pkg: bool,
                 modules: set[str]) -> None:
        self.rename, self.old, self.new, self.is_pkg, self.modules = rename, old_module, new_module, is_pkg, modules

    def _relative(self, target: str) -> tuple[int, str]:
        assert self.new is not None
        here = self.new.split(".") if self.is_pkg else self.new.split(".")[:-1]
        there = target.split(".")
        common = 0
        while common < min(len(here), len(there)) and here[common] == there[common]:
            common += 1
        return len(here) - common + 1, ".".join(there[common:])

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for alias in updated.names:
            old = _dotted(alias.name)
            new = self.rename(old)
            if new != old:
                asname = alias.asname
                if asname is None and "." not in old:  # `import problems` keeps binding `problems`
                    asname = cst.AsName(name=cst.Name(old))
                elif asname is None and old.split(".")[0] != new.split(".")[0]:
                    raise SystemExit(f"relayer: `import {old}` binds {old.split('.')[0]!r}; write it with `as`")
                alias = alias.with_changes(name=_expr(new), asname=asname)
            names.append(alias)
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom
                         ) -> cst.ImportFrom | cst.FlattenSentinel[cst.ImportFrom]:
        level = len(updated.relative)
        module = _dotted(updated.module) if updated.module is not None else None
        if level and self.old is None:
            return updated  # a relative import outside the rewritten packages (tests/, examples/)
        base = resolve(self.old, self.is_pkg, level, module) if level else (module or "")
        groups: dict[str, list[cst.ImportAlias] | None] = {}
        if isinstance(updated.names, cst.ImportStar):
            groups[self.rename(base)] = None
        else:
            for alias in updated.names:
                full = f"{base}.{alias.name.value}" if isinstance(alias.name, cst.Name) else base
                if full in self.modules or self.rename(full) != full:
                    new_full = self.rename(full)
                    parent, _, _ = new_full.rpartition(".")
                    if new_full.rpartition(".")[2] != alias.name.value:
                        raise SystemExit(f"relayer: cannot rename a module imported by name: {full}")
                    groups.setdefault(parent, []).append(alias)  # type: ignore[union-attr]
                else:
                    groups.setdefault(self.rename(base), []).append(alias)  # type: ignore[union-attr]
        out = []
        for target, aliases in groups.items():
            if level:
                lv, rest = self._relative(target)
                rel, mod = [cst.Dot()] * lv, (_expr(rest) if rest else None)
                if len(groups) == 1 and lv == level and rest == (module or ""):
                    return updated
            else:
                if len(groups) == 1 and target == module:
                    return updated
                rel, mod = [], _expr(target)
            names = cst.ImportStar() if aliases is None else [
                a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if j == len(aliases) - 1 else a
                for j, a in enumerate(aliases)]
            node = updated.with_changes(relative=rel, module=mod, names=names)
            if isinstance(names, list) and len(names) == 1 and updated.lpar:
                node = node.with_changes(lpar=None, rpar=None)
            out.append(node)
        return out[0] if len(out) == 1 else cst.FlattenSentinel(out)


def rewrite_python(src: str, rename: Renamer, old: str | None, new: str | None, is_pkg: bool,
                   modules: set[str]) -> str:
    tree = cst.parse_module(src)
    tree = tree.visit(ImportRewriter(rename, old, new, is_pkg, modules))
    code = tree.code
    # dotted names and paths: everywhere for ratecheck's own moved modules (attribute chains such as
    # ratecheck.sweep.run_config included), in strings and comments only for problems/proofs
    code = rename.text(code, namespaces=False)
    out, last = [], 0
    lines = code.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            start = offsets[tok.start[0] - 1] + tok.start[1]
            end = offsets[tok.end[0] - 1] + tok.end[1]
            out.append(code[last:start])
            out.append(rename.text(code[start:end]))
            last = end
    out.append(code[last:])
    return "".join(out)


def rewrite_markdown(src: str, rename: Renamer) -> str:
    return rename.text(src)


def rewrite_pyproject(src: str, rename: Renamer, namespace: bool, table: dict[str, str]) -> str:
    # entry points and paths: module names in quoted values only
    src = re.sub(r'"[^"\n]*"', lambda m: rename.text(m.group(0)), src)
    if namespace:  # packages and the package-dir mapping come from setup.py (SETUP_PY)
        src = re.sub(r"\[tool\.setuptools\.packages\.find\]\ninclude = \[[^\]]*\]\n\n?",
                     "# packages: setup.py (problems/ and proofs/ install as ratecheck.problems, ratecheck.proofs)\n\n", src)
    return write_contract(src, table)


def write_contract(src: str, table: dict[str, str]) -> str:
    body = ["[tool.ratecheck.layers]",
            "# The layer contract (tests/test_layers.py; tools/relayer.py writes it): bottom to top, a module",
            "# imports only from its own layer and the layers below, never in a cycle; a module belongs to the",
            "# layer of its longest prefix listed under modules.",
            "order = [" + ", ".join(f'"{name}"' for name, _, _ in LAYERS) + "]",
            "",
            "[tool.ratecheck.layers.modules]"]
    body += [f'"{mod}" = "{layer}"' for mod, layer in table.items()]
    block = "\n".join(body) + "\n"
    start = src.find("[tool.ratecheck.layers]\n")
    if start < 0:
        return src.rstrip("\n") + "\n\n" + block
    end = re.compile(r"^\[(?!tool\.ratecheck\.layers)", re.M).search(src, start)
    rest = src[end.start():] if end else ""
    return src[:start] + block + ("\n" + rest if rest else "")


# -- README ----------------------------------------------------------------------------------------

PICTURE_BEGIN, PICTURE_END = "<!-- layers-picture:begin -->", "<!-- layers-picture:end -->"


def _between(src: str, begin: str, end: str, body: str) -> str:
    if begin not in src or end not in src:
        return src
    head, rest = src.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}{end}{tail}"


def rewrite_readme(src: str, picture: str, rename: Renamer) -> str:
    src = _between(src, PICTURE_BEGIN, PICTURE_END, picture + "\n")
    if "ratecheck.problems" in rename.renames.values():
        src = src.replace("one distribution: import packages ratecheck, problems, proofs;",
                          "one distribution, one import package ratecheck (problems/, proofs/ install as\n"
                          "                      ratecheck.problems, ratecheck.proofs: setup.py);")
    if README_BEGIN in src and README_END in src:
        listing = src.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
        src = _between(src, README_BEGIN, README_END, regroup(listing.strip("\n"), rename) + "\n")
    return src


def regroup(listing: str, rename: Renamer) -> str:
    """The README's file list of ratecheck/ (an indented block: a line at six spaces opens an
    entry, deeper lines continue it), grouped under its layers bottom to top, moved names renamed."""
    lines = listing.splitlines()
    head = [ln for ln in lines if ln.startswith("    ratecheck/")][:1]
    entries: list[list[str]] = []
    for ln in lines:
        if ln.startswith("    ratecheck/") or re.match(r"^      \[\w+\]$", ln):
            continue
        if re.match(r"^      \S", ln):
            entries.append([ln])
        elif entries:
            entries[-1].append(ln)
    where = {m: layer for layer, _, mods in LAYERS for m in mods}
    groups: dict[str, list[list[str]]] = {}
    for entry in entries:
        first = entry[0][6:]
        name, gap, text = re.match(r"^(\S.*?)( {2,}|$)(.*)$", first).groups()  # type: ignore[union-attr]
        stem = re.split(r"[./, ]", name.split("/")[-1] if not name.endswith("/") else name.rstrip("/"))[0]
        layer = where.get(stem, "other")
        shown = re.sub(r"(?:\w+/)*(\w+)\.py\b", lambda m: _shown(m.group(1), rename), name)
        padded = shown.ljust(17) + " " if len(shown) < 17 else shown + "  "  # two spaces end a long name
        entry = [f"      {padded}{text}".rstrip() if text else f"      {shown}"] + entry[1:]
        groups.setdefault(layer, []).append(entry)
    out = ["    ratecheck/        the core, by layer from the bottom (a layer imports only from those",
           "                      above it in this list; tests/test_layers.py checks it)"] if head else []
    for layer in [name for name, _, _ in LAYERS] + ["other"]:
        if layer in groups:
            out.append(f"      [{layer}]")
            out += [ln for entry in groups[layer] for ln in entry]
    return "\n".join(out)


def _shown(stem: str, rename: Renamer) -> str:
    return rename(f"ratecheck.{stem}").replace("ratecheck.", "", 1).replace(".", "/") + ".py"


# -- main --------------------------------------------------------------------------------------------

INIT_DOCS = {
    "model": "Layer model: what a run is made of (parameters, randomness, participation, delays, traces, fits).",
    "simulate": "Layer simulate: run a configuration (the engine; exact mode when it applies).",
    "runner": "Layer run: plan, cache, execute and decide many claims (sweeps, tasks, store, executors, hunts).",
    "interfaces": "Layer interfaces: the command line and its text helpers.",
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    ap.add_argument("--no-namespace", action="store_true", help="leave problems/ and proofs/ top-level packages")
    a = ap.parse_args(argv)
    root = a.root.resolve()
    if not (root / "ratecheck" / "__init__.py").exists():
        ap.error(f"{root} is not a ratecheck checkout (no ratecheck/__init__.py)")
    moves, table, notes, placed = plan_moves(root)
    namespace = not a.no_namespace
    if not namespace:
        table = contract(moves, namespace=False, placed=placed)
    renames = dict(moves)
    if namespace:
        renames.update(NAMESPACE)
    rename = Renamer(renames)
    pending = {old: new for old, new in moves.items()
               if (root / (old.replace(".", "/") + ".py")).exists()}
    for note in notes:
        print(note)
    for old, new in pending.items():
        print(f"move {old.replace('.', '/')}.py -> {new.replace('.', '/')}.py")
    # every module name present now, so `from ratecheck import sweep` is known to import a module
    modules = {module_name(root, p) for pkg in ("ratecheck", "problems", "proofs") if (root / pkg).is_dir()
               for p in (root / pkg).rglob("*.py")}
    modules |= {m.rpartition(".")[0] for m in modules}
    written: dict[Path, str] = {}
    for path in python_files(root):
        rel = path.relative_to(root)
        if rel == Path("tools/relayer.py"):
            continue  # its own tables name the old places
        try:
            src = path.read_text()
        except UnicodeDecodeError:
            continue
        if path.suffix == ".py":
            old = module_name(root, path) if rel.parts[0] in ("ratecheck", "problems", "proofs") else None
            new = rename(old) if old else None
            if old and rel.parts[0] in NAMESPACE and not namespace:
                new = old
            if old and old in pending:
                new = pending[old]
            try:
                out = rewrite_python(src, rename, old, new, path.name == "__init__.py", modules)
            except cst.ParserSyntaxError as exc:
                print(f"skipped (does not parse): {rel}: {exc}", file=sys.stderr)
                continue
            target = root / (new.replace(".", "/") + ".py") if old and old in pending else path
        elif path.name == "pyproject.toml" and rel == Path("pyproject.toml"):
            out, target = rewrite_pyproject(src, rename, namespace, table), path
        elif path.suffix in TEXT_SUFFIXES or path.name == "run":
            out, target = rewrite_markdown(src, rename), path
            if namespace and rel in (Path(".ci/run"), Path("README.md")):  # mypy cannot see the mapping
                out = out.replace("python -m mypy           #", "python tools/typecheck.py  #").replace(
                    "`python -m mypy` (", "`python tools/typecheck.py` (mypy over the package as it installs; ")
            if rel == Path("README.md"):
                out = rewrite_readme(out, architecture_after(root, table, pending), rename)
        else:
            continue
        if out != src or target != path:
            written[target] = out
            if target != path:
                written[path] = ""  # removed below
    if a.dry_run:
        for path in sorted(written):
            print(f"would rewrite {path.relative_to(root)}")
        return 0
    for old, new in pending.items():
        folder = root / "/".join(new.split(".")[:-1])
        init = folder / "__init__.py"
        if not init.exists():
            folder.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{INIT_DOCS.get(folder.name, f"Layer {folder.name}.")}"""\n')
            print(f"created {init.relative_to(root)}")
        _git_mv(root, root / (old.replace(".", "/") + ".py"), root / (new.replace(".", "/") + ".py"))
    for path, out in sorted(written.items()):
        if out == "" and not path.exists():
            continue
        if out == "":
            continue
        path.write_text(out)
        print(f"rewrote {path.relative_to(root)}")
    if namespace:
        _install_finder(root)
        setup = root / "setup.py"
        if not setup.exists():
            setup.write_text(SETUP_PY)
            print("created setup.py (packages: ratecheck, problems/ -> ratecheck.problems, proofs/ -> ratecheck.proofs)")
    _sort_imports(root, [p for p, out in written.items() if p.suffix == ".py" and out])
    print(f"relayer: {len(pending)} modules moved, {sum(1 for o in written.values() if o)} files rewritten")
    return 0


def architecture_after(root: Path, table: dict[str, str], pending: dict[str, str]) -> str:
    """The README's layer picture of the layout after the pending moves (made before the files move)."""
    pkg = root / "ratecheck"
    gone = {old.split(".")[-1] for old in pending}
    files = {p.relative_to(pkg).with_suffix("").as_posix() for p in pkg.rglob("*.py")
             if p.parent == pkg or p.parent.name in {f for _, f, _ in LAYERS if f}}
    files = {f for f in files if f not in gone} | {new.split(".", 1)[1].replace(".", "/") for new in pending.values()}
    rows = []
    for layer, folder, mods in reversed(LAYERS):
        shown = []
        for m in mods:
            if m in NAMESPACE:
                shown.append(f"{m}/ (installed as {NAMESPACE[m]})" if NAMESPACE[m] in table else f"{m}/")
            elif (pkg / m).is_dir():
                shown.append(f"{m}/")
            elif m in files and m != "__main__":
                shown.append(f"{m}.py")
        if folder:
            inside = sorted(f.split("/", 1)[1] for f in files if f.startswith(folder + "/") and not f.endswith("__init__"))
            shown.insert(0, f"{folder}/{{{', '.join(inside)}}}")
        rows.append((layer, ", ".join(shown)))
    width = max(len(layer) for layer, _ in rows)
    lines = ["```text", "ratecheck/ by layer, top to bottom; a module imports only from its own row and the rows below",
             "(the contract: [tool.ratecheck.layers] in pyproject.toml, checked by tests/test_layers.py)", ""]
    for layer, shown in rows:
        wrapped = textwrap.wrap(shown, 96 - width) or [""]
        lines.append(f"{layer:>{width}} | {wrapped[0]}")
        lines += [f"{'':>{width}} | {more}" for more in wrapped[1:]]
    lines.append("```")
    return "\n".join(lines)


SETUP_PY = '''"""Packages for setuptools: ratecheck, and the top-level folders problems/ and proofs/ installed as
ratecheck.problems and ratecheck.proofs (a package-dir mapping; everything else is in pyproject.toml)."""

from setuptools import find_packages, setup

NAMESPACED = {"problems": "ratecheck.problems", "proofs": "ratecheck.proofs"}

setup(
    packages=find_packages(include=["ratecheck", "ratecheck.*"])
    + [NAMESPACED[p.split(".")[0]] + p[len(p.split(".")[0]):]
       for p in find_packages(include=[f"{top}{tail}" for top in NAMESPACED for tail in ("", ".*")])],
    package_dir={"ratecheck": "ratecheck", **{new: old for old, new in NAMESPACED.items()}},
)
'''


FINDER = '''

# -- problems/ and proofs/ as ratecheck.problems and ratecheck.proofs (tools/relayer.py) ----------------
# An installed wheel holds them inside this package (the package-dir mapping in pyproject.toml) and an
# editable install's finder maps them; a checkout on sys.path (tests run from its root) has them beside
# this folder: this finder maps those two names there, and nothing else.
def _checkout_packages() -> None:
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import pathlib
    import sys

    here = pathlib.Path(__file__).resolve().parent
    roots = {f"{__name__}.{name}": here.parent / name for name in ("problems", "proofs")
             if not (here / name).exists() and (here.parent / name / "__init__.py").exists()}
    if not roots:
        return

    class _Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: object = None, target: object = None
                      ) -> importlib.machinery.ModuleSpec | None:
            if fullname in roots:
                return importlib.util.spec_from_file_location(
                    fullname, roots[fullname] / "__init__.py", submodule_search_locations=[str(roots[fullname])])
            return None

    sys.meta_path.insert(0, _Finder())  # before an editable install's finder, which may map another checkout


_checkout_packages()
'''


def _install_finder(root: Path) -> None:
    init = root / "ratecheck" / "__init__.py"
    src = init.read_text()
    if "_checkout_packages" not in src:
        init.write_text(src.rstrip("\n") + "\n" + FINDER)
        print("rewrote ratecheck/__init__.py (finds problems/ and proofs/ of a checkout as ratecheck.problems, .proofs)")


def _git_mv(root: Path, old: Path, new: Path) -> None:
    done = subprocess.run(["git", "mv", str(old), str(new)], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:  # not a git checkout, or the file is untracked
        new.write_text(old.read_text())
        old.unlink()


def _sort_imports(root: Path, files: list[Path]) -> None:
    """Rewritten imports sorted again the project's way (ruff's isort rules), if ruff is installed."""
    if not files:
        return
    cmd = [sys.executable, "-m", "ruff", "check", "--fix", "--select", "I", "--quiet", *map(str, files)]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        print(f"imports not re-sorted (ruff: {done.stderr.strip() or done.returncode})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
