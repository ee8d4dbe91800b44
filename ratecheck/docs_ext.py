"""A Sphinx extension: reference pages generated from the registry's declarations, so a renamed
parameter, family constant or theorem breaks the docs build instead of leaving them wrong.

In ``conf.py``: ``extensions = ["ratecheck.docs_ext"]`` (and ``nitpicky = True`` so that a reference to
something that no longer exists is a warning, an error under ``-W``). Then, in a MyST page::

    ```{rc-catalogue} algorithm
    ```                                  every registered algorithm, its parameters (also family, theorem)

    ```{rc-describe} fedavgm
    ```                                  one name, as ``ratecheck describe`` shows it

    {rcparam}`fedavg.eta_local`          a parameter, linked to its entry (an unknown one fails the build)
    {rcalgorithm}`fedavg`, {rcfamily}`quadratic`, {rctheorem}`defedavg.theorem2`, {rcclaim}`...`

A plugin's own docs can load the extension too: its papers are registered like ratecheck's.
"""

from __future__ import annotations

from typing import Any

from docutils.nodes import Node
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from .interfaces.describe import describe
from .registry import default

__all__ = ["setup"]

OBJECT_TYPES = {"rcalgorithm": "algorithm", "rcfamily": "problem family", "rctheorem": "theorem",
                "rcclaim": "claim", "rcparam": "parameter", "rcconstant": "family constant"}
KINDS = {"algorithm": "algorithm", "family": "problem", "theorem": "theorem", "paper": "paper"}


def escape(text: Any) -> str:
    """Plain text as Markdown shows it verbatim (no emphasis, links, code or table cells)."""
    out = str(text)
    for ch in "\\*`|_[]<>$":
        out = out.replace(ch, "\\" + ch)
    return " ".join(out.split())


def _markdown(record: dict[str, Any], heading: bool) -> str:
    """A describe record as MyST Markdown (the pages are Markdown): the thing as an object description
    (a link target), its parameters and constants as targets of their own, then conditions and bounds."""
    kind, name = record["kind"], record["name"]
    directive = {"algorithm": "rcalgorithm", "problem family": "rcfamily", "theorem": "rctheorem",
                 "claim": "rcclaim"}.get(kind)
    lines: list[str] = [f"## {name}", ""] if heading else []
    summary = record.get("summary") or record.get("title") or record.get("statement") or ""
    body = [escape(summary), ""] + [f"- {key}: {escape(record[key])}" for key in
                                    ("title", "source", "origin", "class", "measure", "statement")
                                    if record.get(key) and record[key] != summary]
    lines += [f"```{{{directive}}} {name}", *body, "```", ""] if directive else [*body, ""]
    for p in record.get("parameters", []):
        lines += [f"```{{rcparam}} {name}.{p['name']}",
                  f"*{escape(p['kind'])}*, {escape(p['rule'])}; default `{p['default']!s}`. {escape(p['meaning'])}",
                  "```", ""]
    for c in record.get("constants", []):
        lines += [f"```{{rcconstant}} {name}.{c['name']}",
                  f"{c['value']:.6g} at the default parameters: {escape(c['how'])}", "```", ""]
    if record.get("certifies"):
        lines += ["Certifies: " + "; ".join(escape(a) for a in record["certifies"]) + ".", ""]
    for key, title, cols in (("conditions", "Conditions", ("name", "relation", "source")),
                             ("bounds", "Bound versions", ("version", "expr", "note"))):
        if record.get(key):
            lines += [f"| {title.lower()} | | |", "|---|---|---|"]
            for row in record[key]:
                first, formula, last = (row[c] for c in cols)
                lines.append(f"| {escape(first)} | `{formula}` | {escape(last) or '-'} |")
            lines.append("")
    if record.get("orders"):
        orders = ", ".join(f"{escape(o['bound'])}: {escape(o['symbol'])}^{o['exponent']:g}" for o in record["orders"])
        lines += [f"Orders with the prescribed schedule (exponent as the symbol grows): {orders}.", ""]
    if record.get("families"):
        lines += ["Families that satisfy its assumptions: "
                  + ", ".join(f"{{rcfamily}}`{f}`" for f in record["families"]) + ".", ""]
    return "\n".join(lines)


class Describe(SphinxDirective):
    """``rc-describe NAME``: one registered name, as ``ratecheck describe`` shows it."""

    required_arguments = 1

    def run(self) -> list[Node]:
        records = describe(self.arguments[0], default())
        return self.parse_text_to_nodes("\n".join(_markdown(r, heading=False) for r in records))


class Catalogue(SphinxDirective):
    """``rc-catalogue KIND`` (algorithm, family, theorem): every registered one, a section each."""

    required_arguments = 1

    def run(self) -> list[Node]:
        kind = self.arguments[0]
        if kind not in KINDS:
            raise self.error(f"rc-catalogue: unknown kind {kind!r}; one of {sorted(KINDS)}")
        registry = default()
        names = ([t.id for t in registry.theorems()] if kind == "theorem"
                 else [item.name for item in registry.items(KINDS[kind])])
        # orders and constants are left out: sympy limits for every bound and building every family at its
        # defaults would take minutes (`ratecheck describe NAME` prints both)
        text = "\n".join(_markdown(next(r for r in describe(n, registry, orders=False, build=False)
                                         if _matches(r, kind)), heading=True) for n in names)
        return self.parse_text_to_nodes(text, allow_section_headings=True)


def _matches(record: dict[str, Any], kind: str) -> bool:
    return {"family": "problem family"}.get(kind, kind) == record["kind"]


def setup(app: Sphinx) -> dict[str, Any]:
    for directive, label in OBJECT_TYPES.items():
        app.add_object_type(directive, directive, objname=label, indextemplate=f"pair: %s; {label}")
    app.add_directive("rc-describe", Describe)
    app.add_directive("rc-catalogue", Catalogue)
    return {"parallel_read_safe": True, "version": "1"}
