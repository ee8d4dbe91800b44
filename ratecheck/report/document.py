"""The report's document model: blocks of inline spans rendered to Markdown and to HTML from the
same content (formulas as MathML in HTML), and the small Markdown subset paper modules write."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from sympy.printing.latex import LatexPrinter

# ---------------------------------------------------------------------------------------------
# Document model: rendered to Markdown and to HTML from the same blocks


@dataclass(frozen=True)
class Span:
    """A piece of inline text with its style and an optional link."""

    text: str
    bold: bool = False
    code: bool = False
    href: str | None = None  # relative URL, identical in both formats (images, external pages)
    page: str | None = None  # report page stem: linked as <page>.md or <page>.html
    fragment: str | None = None  # anchor id; HTML only (Markdown renderers generate their own)
    cls: str | None = None  # HTML class (verdict colours)
    math: str | None = None  # MathML markup shown in HTML instead of the (code) text


# symbols whose name sympy's LaTeX printer does not read as the paper writes it (sympy already prints
# Greek names, "etabar" as \bar{\eta} and "eta_x" with a subscript); a paper may add its own
LATEX_NAMES: dict[str, str] = {"lam": r"\lambda", "Lbar": r"\bar{L}", "sig": r"\sigma"}


class _PaperLatexPrinter(LatexPrinter):
    """sympy's LaTeX printer, except that a product with two or more square-root factors is printed
    under one root, as papers write it: sqrt(128 L sigma^2 Delta/(n K T)), not 8 sqrt(2) sqrt(Delta)
    sqrt(L) sigma/(sqrt(K) sqrt(T) sqrt(n)). Its numeric coefficient and its positive factors with a
    positive exponent go under the root, squared; other factors (denominators without a root, factors
    of unknown sign) stay outside."""

    def _print_Mul(self, expr: sp.Expr) -> str:
        if expr.could_extract_minus_sign():
            return "- " + self._print(-expr) if _roots(-expr) >= 2 else super()._print_Mul(expr)
        if _roots(expr) < 2:
            return super()._print_Mul(expr)
        inside: list[sp.Expr] = []
        outside: list[sp.Expr] = []
        for factor in sp.Mul.make_args(expr):
            base, power = factor.as_base_exp()
            rational = isinstance(power, sp.Rational) and base.is_positive
            root = rational and power.q == 2
            (inside if factor.is_Rational or root or (rational and power > 0) else outside).append(factor)
        square = sp.Mul(*inside) ** 2
        spot = sp.Symbol(_ROOT_SPOT, positive=True)
        if sp.numer(square) == 1:  # 1/(K sqrt(L T)), not sqrt(1/(L T))/K
            square, spot = 1 / square, 1 / spot
        root = rf"\sqrt{{{self._print(square)}}}"
        if not outside and spot.is_Symbol:
            return root
        return super()._print_Mul(sp.Mul(*outside) * spot).replace(_ROOT_SPOT, root)


_ROOT_SPOT = "zzzrcroot"  # a placeholder symbol, sorted last among a product's factors


def _roots(expr: sp.Expr) -> int:
    """How many factors of a product are square roots of positive bases (the coefficient's root of an
    integer, as in 8 sqrt(2), counts as one)."""
    count = 0
    for factor in sp.Mul.make_args(expr):
        base, power = factor.as_base_exp()
        count += isinstance(power, sp.Rational) and power.q == 2 and bool(base.is_positive)
    return count


def latex(expr: Any) -> str:
    """The LaTeX of a sympy expression or relation, with the paper's symbol names (LATEX_NAMES) and a
    product's square roots under one root (_PaperLatexPrinter)."""
    names = {s: LATEX_NAMES[s.name] for s in getattr(expr, "free_symbols", ()) if s.name in LATEX_NAMES}
    return _PaperLatexPrinter({"symbol_names": names}).doprint(expr)


def formula(expr: Any) -> Span:
    """A sympy expression or relation: LaTeX (code in Markdown), MathML in HTML (latex2mathml)."""
    return printed_formula(latex(expr))


def printed_formula(text: str) -> Span:
    """LaTeX as written (e.g. as a paper prints it): code in Markdown, MathML in HTML."""
    try:
        from latex2mathml.converter import convert

        markup = convert(text)
    except Exception:  # pragma: no cover - a converter gap must not break a report: the LaTeX stays
        return Span(text, code=True)
    return Span(text, code=True, math=markup)


Inline = str | Span | Sequence[str | Span]


@dataclass
class Heading:
    level: int
    content: Inline
    anchor: str | None = None


@dataclass
class Para:
    content: Inline


@dataclass
class Bullets:
    items: list[Inline]


@dataclass
class Table:
    header: list[Inline]
    rows: list[list[Inline]] = field(default_factory=list)
    cls: str | None = None  # HTML class


@dataclass
class Image:
    src: str  # relative to the report directory
    alt: str


@dataclass
class Details:
    """A collapsible block (HTML details/summary); Markdown shows the summary in bold, then the blocks."""

    summary: Inline
    blocks: list[Any]
    open: bool = False
    anchor: str | None = None
    cls: str | None = None


Block = Heading | Para | Bullets | Table | Image | Details


def _spans(content: Inline) -> list[Span]:
    if isinstance(content, str):
        return [Span(content)]
    if isinstance(content, Span):
        return [content]
    return [Span(c) if isinstance(c, str) else c for c in content]


# -- Markdown


def _md_text(text: str, in_table: bool) -> str:
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`")
    # '<' before a letter could open an HTML tag in Markdown; '<=' and '< 1' are left readable
    text = re.sub(r"<(?=[A-Za-z/!?])", r"\\<", text)
    if in_table:
        text = " ".join(text.split()).replace("|", "\\|")
    return text


def _md_inline(content: Inline, in_table: bool = False) -> str:
    out = []
    for s in _spans(content):
        if s.code:
            text = " ".join(s.text.split()) if in_table else s.text
            if in_table:
                text = text.replace("|", "\\|")
            tick = "``" if "`" in text else "`"
            text = f"{tick} {text} {tick}" if tick == "``" else f"`{text}`"
        else:
            text = _md_text(s.text, in_table)
        if s.bold and text.strip():
            # CommonMark ignores '**' next to inner whitespace: keep the spaces outside the markers
            core = text.strip()
            lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
            text = f"{lead}**{core}**{trail}"
        if s.href is not None:
            text = f"[{text}]({s.href})"
        elif s.page is not None:
            text = f"[{text}]({s.page}.md)"
        out.append(text)
    return "".join(out)


def render_markdown(blocks: Sequence[Block], png: bool = False) -> str:
    """The blocks as GitHub-flavoured Markdown; ``png``: an SVG image is shown by the PNG written beside it."""
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append("#" * b.level + " " + _md_inline(b.content))
        elif isinstance(b, Para):
            parts.append(_md_inline(b.content))
        elif isinstance(b, Bullets):
            parts.append("\n".join("- " + _md_inline(item) for item in b.items))
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(_md_inline(h, True) for h in b.header) + " |"]
            lines.append("|" + "---|" * len(b.header))
            lines += ["| " + " | ".join(_md_inline(c, True) for c in row) + " |" for row in b.rows]
            parts.append("\n".join(lines))
        elif isinstance(b, Image):
            src = b.src[: -len(".svg")] + ".png" if png and b.src.endswith(".svg") else b.src
            parts.append(f"![{_md_text(b.alt, True)}]({src})")
        elif isinstance(b, Details):
            parts.append("**" + _md_inline(b.summary).replace("**", "") + "**")
            parts.append(render_markdown(b.blocks, png).rstrip("\n"))
    return "\n\n".join(parts) + "\n"


# -- HTML

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1200px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; font-size: 16px; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.8em; }
a { overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: .8em 0; }
table { border-collapse: collapse; font-size: 90%; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
table.verdicts td:first-child, table.verdicts th:first-child { position: sticky; left: 0; background: #fff;
       z-index: 1; box-shadow: 1px 0 0 #ccc; }
table.verdicts th:first-child { background: #f3f3f3; }
table.verdicts td:first-child code { white-space: nowrap; overflow-wrap: normal; }
table.verdicts td:last-child { min-width: 16em; }
math { font-size: max(1.05em, 1rem); math-style: normal; }  /* never below the body, also in a table */
.formula { display: block; overflow-x: auto; max-width: 100%; padding: .1em 0; }
code { background: #f5f5f5; padding: 0 .2em; border-radius: 3px; font-size: 92%; overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
details { margin: .4em 0; } summary { cursor: pointer; }
details.claim { border: 1px solid #e3e3e3; border-radius: 4px; padding: .2em .8em; }
details.claim > summary { font-weight: 600; padding: .3em 0; }
details.toc ul { columns: 3 14em; }
.v-pass { background: #d8f0dc; color: #14532d; }
.v-fail { background: #f8d7da; color: #7f1d1d; }
.v-inconclusive { background: #fff1c2; color: #7a5300; }
.v-erratum { background: #fde2c8; color: #7c2d12; }
.v-control { background: #e3e8f4; color: #1e3a6e; }
.v-fail-expected { background: #e3e8f4; color: #1e3a6e; }
.v-observed { background: #eeeeee; color: #333; }
.v-unexpected { background: #b00020; color: #fff; font-weight: bold; }
.v-neutral { }
.unexpected { font-weight: bold; color: #b00020; }
.violated { color: #b00020; }
@media screen and (max-width: 900px) {
  table.verdicts thead { display: none; }
  table.verdicts, table.verdicts tbody, table.verdicts tr, table.verdicts td { display: block; width: auto; }
  table.verdicts tr { border: 1px solid #ccc; margin-bottom: .6em; }
  table.verdicts td { border: none; border-bottom: 1px solid #eee; position: static; box-shadow: none; }
  table.verdicts td::before { content: attr(data-label) ": "; font-weight: 600; }
  table.verdicts td:last-child { min-width: 0; }
  details.toc ul { columns: 2 10em; }
}
@media print {
  @page { size: A4; margin: 12mm; }
  body { max-width: none; margin: 0; font-size: 10pt; }
  .table-wrap { overflow: visible; }
  table { font-size: 8pt; table-layout: fixed; width: 100%; }
  td, th { overflow-wrap: anywhere; position: static !important; }
  table.verdicts td:first-child code { white-space: normal; overflow-wrap: anywhere; }
  table.verdicts td:last-child { min-width: 0; }
  .formula { overflow: hidden; }
  details { display: block; } details > summary { list-style: none; }
  img { max-width: 80%; page-break-inside: avoid; }
}
"""


def _html_inline(content: Inline) -> str:
    out = []
    for s in _spans(content):
        if s.math is not None:
            # a scrollable span: a long bound scrolls inside its cell instead of widening the table
            out.append(f'<span class="formula" title="{html.escape(s.text, quote=True)}">{s.math}</span>')
            continue
        text = html.escape(s.text)
        if s.code:
            text = f"<code>{text}</code>"
        if s.bold:
            text = f"<strong>{text}</strong>"
        if s.cls:
            text = f'<span class="{html.escape(s.cls)}">{text}</span>'
        href = s.href
        if href is None and s.page is not None:
            href = f"{s.page}.html" + (f"#{s.fragment}" if s.fragment else "")
        elif href is None and s.fragment is not None:
            href = f"#{s.fragment}"
        if href is not None:
            text = f'<a href="{html.escape(href, quote=True)}">{text}</a>'
        out.append(text)
    return "".join(out)


def _cell_class(content: Inline) -> str:
    # a cell holding a verdict is coloured as a whole, not just its text
    classes = [s.cls for s in _spans(content) if s.cls and s.cls.startswith("v-")]
    return f' class="{html.escape(classes[0])}"' if classes else ""


def _html_blocks(blocks: Sequence[Block]) -> list[str]:
    body = []
    for b in blocks:
        if isinstance(b, Heading):
            anchor = f' id="{html.escape(b.anchor, quote=True)}"' if b.anchor else ""
            body.append(f"<h{b.level}{anchor}>{_html_inline(b.content)}</h{b.level}>")
        elif isinstance(b, Para):
            body.append(f"<p>{_html_inline(b.content)}</p>")
        elif isinstance(b, Bullets):
            items = "".join(f"<li>{_html_inline(i)}</li>" for i in b.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{_html_inline(h)}</th>" for h in b.header)
            # each cell carries its column's name: a narrow screen shows the table as one card per row
            rows = "".join(
                "<tr>" + "".join(f'<td{_cell_class(c)} data-label="{html.escape(_plain(h), quote=True)}">'
                                 f"{_html_inline(c)}</td>" for h, c in zip(b.header, row)) + "</tr>"
                for row in b.rows
            )
            cls = f' class="{html.escape(b.cls)}"' if b.cls else ""
            body.append(f'<div class="table-wrap"><table{cls}><thead><tr>{head}</tr></thead>'
                        f"<tbody>{rows}</tbody></table></div>")
        elif isinstance(b, Image):
            src, alt = html.escape(b.src, quote=True), html.escape(b.alt, quote=True)
            body.append(f'<p><img src="{src}" alt="{alt}"></p>')
        elif isinstance(b, Details):
            anchor = f' id="{html.escape(b.anchor, quote=True)}"' if b.anchor else ""
            cls = f' class="{html.escape(b.cls)}"' if b.cls else ""
            body.append(f"<details{anchor}{cls}{' open' if b.open else ''}><summary>{_html_inline(b.summary)}"
                        "</summary>\n" + "\n".join(_html_blocks(b.blocks)) + "\n</details>")
    return body


def _plain(content: Inline) -> str:
    return "".join(s.text for s in _spans(content))


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as an HTML page (inline CSS, relative image paths)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(_html_blocks(blocks))
        + "\n</body>\n</html>\n"
    )


_MD_INLINE = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`")


def _md_spans(text: str) -> list[str | Span]:
    """Inline **bold** and `code` of a paper module's Markdown as spans (never shown raw in HTML)."""
    out: list[str | Span] = []
    pos = 0
    for m in _MD_INLINE.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(Span(m.group(1), bold=True) if m.group(1) is not None else Span(m.group(2), code=True))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def markdown_blocks(text: str) -> list[Block]:
    """A paper module's extra section, written in a small Markdown subset: pipe tables, '- ' or '* '
    bullets and paragraphs separated by blank lines, with **bold** and `code` inline."""
    blocks: list[Block] = []
    lines = text.strip().splitlines()
    bullet = ("- ", "* ")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line:
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):  # skip the |---| rule
                    rows.append(cells)
                i += 1
            blocks.append(Table(header=[_md_spans(c) for c in rows[0]], rows=[[_md_spans(c) for c in r] for r in rows[1:]]))
        elif line.startswith(bullet):
            items: list[Inline] = []
            while i < len(lines) and lines[i].strip().startswith(bullet):
                items.append(_md_spans(lines[i].strip()[2:]))
                i += 1
            blocks.append(Bullets(items))
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("|", *bullet)):
                para.append(lines[i].strip())
                i += 1
            blocks.append(Para(_md_spans(" ".join(para))))
    return blocks
