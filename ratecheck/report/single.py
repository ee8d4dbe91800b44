"""``--single-file``: every page of a report in one self-contained HTML file (report.html), figures
inlined as data URIs, links between pages rewritten to anchors inside the file."""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .document import CSS, _html_blocks


def _inline_images(text: str, out: Path) -> str:
    def data(match: re.Match) -> str:
        path = out / html.unescape(match.group(1))
        if not path.is_file():
            return match.group(0)
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return f'src="data:{kind};base64,{base64.b64encode(path.read_bytes()).decode("ascii")}"'

    return re.sub(r'src="([^":]+)"', data, text)


def _scoped(text: str, stem: str, stems: set[str]) -> str:
    """Ids prefixed by their page; links to a page (and its anchors) become links inside the file."""
    text = re.sub(r'id="([^"]+)"', lambda m: f'id="{stem}--{m.group(1)}"', text)

    def link(match: re.Match) -> str:
        page, _, fragment = html.unescape(match.group(1)).partition("#")
        target = page[: -len(".html")] if page.endswith(".html") else stem if not page else None
        if target is None or target not in stems:
            return match.group(0)
        return f'href="#{target}--{fragment or "top"}"'

    return re.sub(r'href="([^"]*)"', link, text)


def write_single(out: Path, pages: Mapping[str, tuple[str, list[Any]]]) -> Path:
    """Write out/report.html from the pages (stem -> (title, blocks)); the index first."""
    stems = set(pages)
    order = ["index"] + [s for s in pages if s != "index"]
    body = []
    for stem in order:
        title, blocks = pages[stem]
        section = "\n".join(_html_blocks(blocks))
        body.append(f'<section id="{stem}--top">\n{_scoped(_inline_images(section, out), stem, stems)}\n</section>')
    path = out / "report.html"
    path.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ratecheck report</title>\n<style>{CSS}\nsection + section {{ border-top: 3px solid #ccc; "
        "margin-top: 3em; }</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n",
        encoding="utf-8")
    return path
