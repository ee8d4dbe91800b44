"""The report's document model: blocks of inline spans rendered to Markdown and to HTML from the
same content (formulas as MathML in HTML), and the small Markdown subset paper modules write."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

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


MATHML_CHARS = 60  # formulas longer than this are MathML in HTML (they overflow as code)


def formula(expr: Any) -> Span:
    """A sympy expression or relation: code text, and MathML in HTML when it is long."""
    text = sp.sstr(expr)
    if len(text) <= MATHML_CHARS:
        return Span(text, code=True)
    try:
        from sympy.printing.mathml import mathml

        markup = mathml(expr, printer="presentation")
    except Exception:  # pragma: no cover - a printer gap must not break a report
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


Block = Heading | Para | Bullets | Table | Image


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


def render_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as GitHub-flavoured Markdown."""
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
            parts.append(f"![{_md_text(b.alt, True)}]({b.src})")
    return "\n\n".join(parts) + "\n"


# -- HTML

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1200px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.8em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 90%; display: block; overflow-x: auto;
        max-width: 100%; }
table.verdicts td:nth-child(2), table.verdicts th:nth-child(2) { position: sticky; left: 0; white-space: nowrap; }
table.verdicts td:last-child { min-width: 16em; }
math { font-size: 105%; overflow-x: auto; max-width: 100%; display: inline-block; vertical-align: middle; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f5f5f5; padding: 0 .2em; border-radius: 3px; font-size: 92%; }
img { max-width: 100%; border: 1px solid #eee; }
.v-pass { background: #d8f0dc; color: #14532d; }
.v-fail { background: #f8d7da; color: #7f1d1d; }
.v-inconclusive { background: #fff1c2; color: #7a5300; }
.v-fail-expected { background: #e3e8f4; color: #1e3a6e; }
.v-observed { background: #eeeeee; color: #333; }
.v-neutral { }
.unexpected { font-weight: bold; color: #b00020; }
.violated { color: #b00020; }
"""


def _html_inline(content: Inline) -> str:
    out = []
    for s in _spans(content):
        if s.math is not None:
            out.append(f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline" '
                       f'title="{html.escape(s.text, quote=True)}">{s.math}</math>')
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


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as a self-contained HTML page (inline CSS, relative image paths)."""
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
            rows = "".join(
                "<tr>" + "".join(f"<td{_cell_class(c)}>{_html_inline(c)}</td>" for c in row) + "</tr>"
                for row in b.rows
            )
            cls = f' class="{html.escape(b.cls)}"' if b.cls else ""
            body.append(f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(b, Image):
            src, alt = html.escape(b.src, quote=True), html.escape(b.alt, quote=True)
            body.append(f'<p><img src="{src}" alt="{alt}" loading="lazy"></p>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def markdown_blocks(text: str) -> list[Block]:
    """A paper module's extra section, written in a small Markdown subset: pipe tables, '- '
    bullets and paragraphs separated by blank lines (enough for complexity tables and errata)."""
    blocks: list[Block] = []
    lines = text.strip().splitlines()
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
            blocks.append(Table(header=list(rows[0]), rows=[list(r) for r in rows[1:]]))
        elif line.startswith("- "):
            items: list[Inline] = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(lines[i].strip()[2:])
                i += 1
            blocks.append(Bullets(items))
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("|", "- ")):
                para.append(lines[i].strip())
                i += 1
            blocks.append(Para(" ".join(para)))
    return blocks
