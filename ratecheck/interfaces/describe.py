"""`ratecheck describe NAME`: what a registered algorithm, problem family, theorem, claim or paper is,
read off its declarations, so a researcher never needs the source to learn a parameter's meaning.

    ratecheck describe fedavg              # parameters: kind, rule, default, meaning
    ratecheck describe quadratic           # parameters, and the constants at the defaults, with how each is got
    ratecheck describe defedavg.theorem2   # symbols, conditions, bound versions, orders, admissible families
    ratecheck describe defedavg.T2.bound   # what the claim states, runs, compares and expects

Each description is a plain record (``--json`` prints it); ``render`` turns it into the text the CLI
prints. Nothing here runs an algorithm: a family's constants come from building one instance at its
default parameters, and a theorem's orders from sympy (cached like every derivation).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import shutil
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

from ..assumptions import admissible_families, declared_by, family_assumptions
from ..claims import PROFILES, Claim
from ..claims.compose import pieces_of
from ..paper import Paper
from ..params import Param, declarations
from ..theory import Theorem

__all__ = ["describe", "render", "DescribeError"]

Record = dict[str, Any]
WIDTH = min(120, max(80, shutil.get_terminal_size((100, 40)).columns))


class DescribeError(LookupError):
    """A name that is no registered algorithm, family, theorem, claim or paper."""


def describe(name: str, registry: Any, *, orders: bool = True, build: bool = True) -> list[Record]:
    """Every registered thing called ``name`` (usually one), each as a record with a "kind" field.

    ``orders=False`` leaves out a theorem's orders (sympy limits: seconds per theorem uncached);
    ``build=False`` a family's constants (building an instance at the defaults can take a minute:
    least_squares_interpolation solves a 2000-dimensional system); what it certifies is still listed."""
    found: list[Record] = []
    algorithms = {item.name: item for item in registry.items("algorithm")}
    families = {item.name: item for item in registry.items("problem")}
    papers = {item.name: item for item in registry.items("paper")}
    theorems = {t.id: t for t in registry.theorems()}
    claims = {c.id: c for c in registry.claims()}
    if name in algorithms:
        found.append(_algorithm(algorithms[name]))
    if name in families:
        found.append(_family(name, families[name], registry, build))
    if name in papers:
        found.append(_paper(papers[name].obj, papers[name].origin))
    if name in theorems:
        found.append(_theorem(theorems[name], registry, orders))
    if name in claims:
        found.append(_claim(claims[name], registry))
    if not found:
        known = sorted({*algorithms, *families, *papers, *theorems})
        close = [k for k in (*known, *claims) if name.lower() in k.lower()][:12]
        hint = f"; did you mean one of {close}?" if close else f"; registered: {known}"
        raise DescribeError(f"no algorithm, problem family, paper, theorem or claim is named {name!r}{hint}")
    return found


# -- records --------------------------------------------------------------------------------------


def _params(owner: Any, defaults: Mapping[str, Any]) -> list[Record]:
    try:
        declared: Mapping[str, Param] = declarations(owner)
    except TypeError:
        declared = {}
    return [{"name": name, "kind": param.kind, "rule": param.rule(), "default": _plain(defaults.get(name)),
             "meaning": param.meaning} for name, param in declared.items()]


def _algorithm(item: Any) -> Record:
    cls = item.obj
    defaults = {f.name: (f.default if f.default is not dataclasses.MISSING else
                         f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
                for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    return {"kind": "algorithm", "name": item.name, "class": f"{cls.__module__}.{cls.__qualname__}",
            "summary": _first_paragraph(cls.__doc__), "source": getattr(cls, "source", ""),
            "origin": item.origin, "parameters": _params(cls, defaults)}


def _family(name: str, item: Any, registry: Any, build: bool) -> Record:
    factory = item.obj
    signature = inspect.signature(factory)
    defaults = {k: p.default for k, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}
    record: Record = {"kind": "problem family", "name": name, "summary": _first_paragraph(factory.__doc__),
                      "origin": item.origin, "parameters": _params(factory, defaults)}
    if not build:
        certified = family_assumptions(registry).get(name, ())
        record["certifies"] = [str(a) for a in certified]
        record["theorems"] = [t.id for t in registry.theorems() if name in admissible_families(t, {name: certified})]
        record["paper_measures"] = _paper_measures(name, registry)
        return record
    try:
        problem = factory()
    except Exception as exc:  # a family without usable defaults: say so rather than fail the description
        record["constants_error"] = f"{type(exc).__name__}: {exc}"
        problem = None
    if problem is not None:
        record["summary"] = _first_paragraph(type(problem).__doc__) or record["summary"]
        record["constants"] = [{"name": k, "value": _plain(float(c)), "how": getattr(c, "how", "")}
                               for k, c in problem.constants().items()]
        certified = declared_by(problem)
        record["certifies"] = [str(a) for a in certified]
        record["theorems"] = [t.id for t in registry.theorems()
                              if name in admissible_families(t, {name: certified})]
    record["paper_measures"] = _paper_measures(name, registry)
    return record


def _paper_measures(family: str, registry: Any) -> list[str]:
    """The measures papers register for a family (ratecheck.problem.Measures), with where they come from."""
    return [f"{', '.join(m.names)}: {m.source or 'no source given'} ({m.compute.__module__})"
            for m in registry.measures(family)]


def _theorem(theorem: Theorem, registry: Any, with_orders: bool) -> Record:
    schedule = {str(k): str(v) for k, v in theorem.schedule.items()}
    orders: list[Record] = []
    for version in theorem.versions if with_orders else ():
        for symbol in theorem.parameters:
            if str(symbol) in schedule:
                continue
            try:
                exponent = theorem.order(symbol, version=version)
            except Exception:  # sympy finds no limit: the order is not defined there, say nothing
                continue
            if exponent.is_number and math.isfinite(float(exponent)):  # 0 says the bound saturates
                orders.append({"bound": version, "symbol": str(symbol), "exponent": float(exponent)})
    return {
        "kind": "theorem", "name": theorem.id, "title": theorem.title, "source": str(theorem.source),
        "measure": theorem.measure, "assumptions": list(theorem.assumptions),
        "requires": [str(a) for a in theorem.requires],
        "symbols": {"constants": [str(s) for s in theorem.constants],
                    "parameters": [str(s) for s in theorem.parameters]},
        "conditions": [{"name": c.name, "relation": str(c.relation), "source": str(c.source), "note": c.note}
                       for c in theorem.conditions],
        "bounds": [{"version": b.version, "expr": str(b.expr), "source": str(b.source), "note": b.note}
                   for b in theorem.bounds],
        "schedule": schedule, "orders": orders,
        "families": admissible_families(theorem, family_assumptions(registry)),
    }


def _claim(claim: Claim, registry: Any) -> Record:
    record: Record = {
        "kind": "claim", "name": claim.id, "claim_kind": claim.kind, "paper": claim.paper, "title": claim.title,
        "statement": claim.statement, "source": str(claim.source), "measure": claim.measure,
        "varies": claim.vary, "grid": {p: [_plain(v) for v in g] for p, g in claim.grid.items()},
        "expect": str(claim.expect), "why": claim.expect_reason,
        "theorem": claim.theorem.id if claim.theorem is not None else None,
        "negative_control_of": claim.controls.id if claim.controls is not None else None,
    }
    shown = {"id", "paper", "title", "statement", "source", "vary", "grid", "measure", "expect", "expect_reason",
             "kind", "negative_control"}
    record["settings"] = {f.name: _plain(getattr(claim, f.name)) for f in dataclasses.fields(claim)
                          if f.name not in shown and _is_setting(getattr(claim, f.name))}
    record["settings"].update({f.name: getattr(claim, f.name).describe() for f in dataclasses.fields(claim)
                               if callable(getattr(getattr(claim, f.name), "describe", None))})
    if hasattr(claim, "rule"):  # the pieces its decision is composed of (ratecheck.claims.compose)
        record["settings"].update(pieces_of(claim))
    derivations = [_derivation(getattr(claim, f.name)) for f in dataclasses.fields(claim)]
    if any(derivations):  # the expected exponent, derived in the claim's regime, step by step (issue #22)
        record["derivation"] = [line for d in derivations if d for line in d]
    try:
        configs = registry.plan([claim], PROFILES["quick"])
    except Exception as exc:  # an unknown algorithm or family: the description still says what it claims
        record["runs_error"] = str(exc)
    else:
        record["runs"] = {"quick profile": len(configs),
                          "algorithms": sorted({c.algorithm for c in configs}),
                          "problems": sorted({c.problem for c in configs})}
    return record


def _derivation(expected: Any) -> list[str]:
    """The steps of an ExpectedOrder derived from a theorem (none for a number given with its reason)."""
    theorem = getattr(expected, "theorem", None)
    if theorem is None or not hasattr(expected, "fixed"):
        return []
    try:
        found = theorem.order_derivation(expected.var, version=expected.version, dominant_in=expected.dominant_in,
                                         fixed=dict(expected.fixed))
    except Exception as exc:  # sympy finds no limit: say so rather than fail the description
        return [f"not derivable: {exc}"]
    return list(found.steps)


def _paper(paper: Paper, origin: str) -> Record:
    return {"kind": "paper", "name": paper.key, "title": paper.title, "source": paper.seed, "origin": origin,
            "paper_theorems": [t.id for t in paper.theorems], "claims": len(paper.claims),
            "negative_controls": sum(c.negative_control for c in paper.claims),
            "expected_fail": [c.id for c in paper.claims if str(c.expect) == "FAIL" and not c.negative_control]}


def _is_setting(value: Any) -> bool:
    """A number, text or flag that says how a claim decides (a version, a tolerance, a level)."""
    return isinstance(value, (bool, int, float, str)) and value != ""


def _first_paragraph(doc: str | None) -> str:
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else ""


def _plain(value: Any) -> Any:
    """A JSON-ready value (options and numpy scalars as their text or number)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


# -- text -----------------------------------------------------------------------------------------


def render(record: Record) -> str:
    """The record as the CLI prints it: one block per parameter, condition or bound, the long text (a
    meaning, a note, how a constant is got) wrapped on its own indented line, never truncated."""
    lines = [f"{record['kind']} {record['name']}" + (f": {record['title']}" if record.get("title") else "")]
    for key in ("summary", "statement", "source", "origin", "class", "measure", "paper", "claim_kind",
                "theorem", "negative_control_of", "varies"):
        if record.get(key):
            lines += _wrapped(f"{key.replace('_', ' ')}: {record[key]}", "  ", "      ")
    if record.get("expect"):
        lines += _wrapped(f"expect: {record['expect']}" + (f" ({record['why']})" if record.get("why") else ""),
                          "  ", "      ")
    sections: list[tuple[str, list[tuple[str, str, str]]]] = [
        ("parameters", [(p["name"], f"{p['kind']}, {p['rule']}; default {p['default']}", p["meaning"])
                        for p in record.get("parameters", [])]),
        ("constants at the default parameters", [(c["name"], f"{c['value']:.6g}", c["how"])
                                                 for c in record.get("constants", [])]),
        ("conditions", [(c["name"], c["relation"], f"{c['source']}. {c['note']}".strip(". "))
                        for c in record.get("conditions", [])]),
        ("bounds", [(b["version"], b["expr"], b["note"]) for b in record.get("bounds", [])]),
        ("orders (exponent of the bound as the symbol grows, schedule applied)",
         [(o["bound"], f"{o['symbol']}: {o['exponent']:g}", "") for o in record.get("orders", [])]),
    ]
    for title, rows in sections:
        if rows:
            lines += ["", f"{title}:"]
            for name, short, long in rows:
                lines += _wrapped(f"{name}  {short}", "  ", "      ")
                if long:
                    lines += _wrapped(long, "      ", "      ")
    if record.get("symbols"):
        symbols = record["symbols"]
        lines += ["", f"symbols: constants {', '.join(symbols['constants'])}; "
                      f"parameters {', '.join(symbols['parameters'])}"]
    if record.get("schedule"):
        lines += ["", "prescribed schedule:"] + [f"  {k} = {v}" for k, v in record["schedule"].items()]
    for key, title in (("assumptions", "the paper assumes"), ("requires", "a family must certify"),
                       ("certifies", "certifies"), ("families", "families that satisfy it"),
                       ("theorems", "theorems whose assumptions it satisfies"), ("paper_theorems", "theorems"),
                       ("paper_measures", "measures papers register for it"),
                       ("expected_fail", "claims expected to FAIL (errata)")):
        if isinstance(record.get(key), list) and record[key]:
            lines += ["", f"{title}:"] + [f"  - {v}" for v in record[key]]
    if record.get("constants_error"):
        lines += ["", f"constants: not available at the default parameters ({record['constants_error']})"]
    if record["kind"] == "paper":
        lines += ["", f"claims: {record['claims']} (of which {record['negative_controls']} negative controls)"]
    if record.get("settings"):
        lines += ["", "how it decides:"] + [f"  {k} = {v}" for k, v in record["settings"].items()]
    if record.get("derivation"):
        lines += ["", "expected exponent, derived:"]
        for step in record["derivation"]:
            lines += _wrapped(step, "  ", "      ")
    if record.get("grid"):
        lines += ["", "grid: " + "; ".join(f"{p}: {g}" for p, g in record["grid"].items())]
    if record.get("runs"):
        runs = record["runs"]
        lines += _wrapped(f"runs (quick profile): {runs['quick profile']} on {', '.join(runs['algorithms'])} "
                          f"x {', '.join(runs['problems'])}", "", "  ")
    if record.get("runs_error"):
        lines += _wrapped(f"runs: cannot be planned: {record['runs_error']}", "", "  ")
    return "\n".join(lines)


def _wrapped(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False) or [""]


def command(name: str, registry: Any, *, as_json: bool = False) -> int:
    """`ratecheck describe NAME`: print every description of NAME (exit 2 if nothing has that name)."""
    import json

    try:
        records = describe(name, registry)
    except DescribeError as exc:
        print(f"ratecheck: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(records if len(records) > 1 else records[0], indent=2, default=str))
    else:
        print("\n\n".join(render(r) for r in records))
    return 0
