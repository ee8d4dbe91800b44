"""Drafts of theorem encodings from a paper's LaTeX source (`ratecheck new NAME --from-tex FILE`).

Lists the theorem-like environments (theorem, lemma, corollary, proposition), and for each displayed
relation inside (``\\[ \\]``, ``$$ $$``, equation and align environments) drafts a ``Bound.from_latex``
(a relation whose left side is the measured quantity: an expectation, a norm, a min or an average)
or a ``Condition.from_latex`` (any other inequality, typically a step-size cap), with the symbols
sympy reads in it. The result is a commented Python file: a starting point to paste from, never
imported, since a draft's symbols still have to be declared and bound.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

__all__ = ["Draft", "drafts", "environments"]

_ENV = re.compile(r"\\begin\{(theorem|lemma|corollary|proposition)\*?\}(\[[^\]]*\])?(.*?)\\end\{\1\*?\}", re.S)
_LABEL = re.compile(r"\\label\{([^}]*)\}")
_DISPLAY = re.compile(r"\\\[(.*?)\\\]|\$\$(.*?)\$\$|\\begin\{(equation|align|gather|multline)\*?\}(.*?)\\end\{\3\*?\}",
                      re.S)
_INEQUALITY = re.compile(r"\\leqslant|\\geqslant|\\leq|\\geq|\\le(?![a-zA-Z])|\\ge(?![a-zA-Z])|<|>")
_EQUALITY = re.compile(r"=")
_TRAILING = re.compile(r"(\\[,;:! ]|\\q?quad|[.,;\s])+$")
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
          "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi",
          "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}
_SYMBOL = re.compile(r"\\(?:bar|overline)\{\\?([A-Za-z]+)\}|\\([A-Za-z]+)|(?<![A-Za-z\\])([A-Za-z])(?:_\{?([A-Za-z0-9]+)\}?)?")
_MEASURED = re.compile(r"\\mathbb\{E\}|\\mathbf\{E\}|\\E\b|\\\||\\min|\\frac\{1\}\{T\}\s*\\sum|\\sum_")


@dataclass(frozen=True)
class Draft:
    """One displayed relation of one environment, and how it would be encoded."""

    environment: str
    label: str
    kind: str  # "bound" or "condition"
    latex: str  # the bound's right side, or the whole condition
    symbols: tuple[str, ...]


def environments(tex: str) -> list[tuple[str, str, str]]:
    """(kind, label or title, body) of every theorem-like environment, in order."""
    out = []
    for i, match in enumerate(_ENV.finditer(_strip_comments(tex)), 1):
        kind, title, body = match.group(1), (match.group(2) or "").strip("[]"), match.group(3)
        label = _LABEL.search(body)
        out.append((kind, label.group(1) if label else title or f"{kind} {i}", body))
    return out


def relations(body: str) -> list[tuple[str, str, str]]:
    """(lhs, relation, rhs) of every displayed relation in an environment's body (align rows split)."""
    out = []
    for match in _DISPLAY.finditer(body):  # an environment's inline math holds no theorem relation
        text = next(g for g in (match.group(1), match.group(2), match.group(4)) if g is not None)
        for row in re.split(r"\\\\", _LABEL.sub("", text)):
            row = _TRAILING.sub("", " ".join(row.replace("&", " ").split()))  # one line: drafts are comments
            split = _top_level_split(row)
            if split is not None:
                out.append(split)
    return out


def _top_level_split(row: str) -> tuple[str, str, str] | None:
    """(lhs, relation, rhs) at the first inequality outside braces (else the first '='), or None."""
    depth, top = 0, []
    for ch in row:
        depth += 1 if ch in "{([" else -1 if ch in "})]" else 0
        top.append(ch if depth == 0 else " ")
    flat = "".join(top)
    for pattern in (_INEQUALITY, _EQUALITY):
        match = pattern.search(flat)
        if match and row[:match.start()].strip() and row[match.end():].strip():
            return row[:match.start()].strip(), match.group(0), row[match.end():].strip()
    return None


def draft_list(tex: str) -> list[Draft]:
    found = []
    for kind, label, body in environments(tex):
        for lhs, rel, rhs in relations(body):
            bound = rel not in (">", "\\ge", "\\geq") and bool(_MEASURED.search(lhs))
            latex = rhs if bound else f"{lhs} {rel} {rhs}"
            found.append(Draft(f"{kind}", label, "bound" if bound else "condition", latex, _symbols(latex)))
    return found


def drafts(tex: str) -> str:
    """The commented draft file for ``tex``."""
    found = draft_list(tex)
    lines = ['"""Drafts from a LaTeX source (ratecheck new --from-tex): paste what you need into the paper',
             "module, declare every symbol listed (constants a family certifies, parameters a run sets) and",
             'bind each (ratecheck.binding.Binder). Never imported: every line below is a comment."""', ""]
    if not found:
        envs = environments(tex)
        lines.append(f"# {len(envs)} theorem-like environments found, with no displayed relation to draft.")
    lines += [f"# {kind}: {label}" + ("" if any(d.label == label for d in found) else " (no displayed relation)")
              for kind, label, _ in environments(tex)]
    symbols = sorted({s for d in found for s in d.symbols})
    if symbols:
        names = [f"{s}_" if keyword.iskeyword(s) else s for s in symbols]  # lambda_ for \\lambda
        lines += [f"# symbols read: {', '.join(symbols)}",
                  f"# {', '.join(names)} = sp.symbols({' '.join(symbols)!r}, positive=True)", ""]
    current = None
    for i, d in enumerate(found, 1):
        if (d.environment, d.label) != current:
            current = (d.environment, d.label)
            lines += ["", f"# --- {d.environment}: {d.label}"]
        name = f"{d.kind} {i}"
        call = "Bound.from_latex" if d.kind == "bound" else "Condition.from_latex"
        if d.kind != "bound" and re.search(r"\\(min|max)(?![A-Za-z])", d.latex):  # one condition per cap, named
            call = "*Condition.implied_from_latex"
        latex = d.latex.replace('"', '\\"')
        lines += [f'# {call}("{name}", r"{latex}", src("{d.label}"), SYMBOLS)',
                  f"#     symbols: {', '.join(d.symbols) or '(none read: sympy could not parse it)'}"]
    return "\n".join(lines) + "\n"


def _symbols(latex: str) -> tuple[str, ...]:
    """The symbols of ``latex`` named as ratecheck.model.latex matches them: ``\\eta`` is eta, ``\\bar{\\eta}``
    etabar, ``x_t`` x_t; LaTeX commands that are not Greek letters (frac, sqrt, mathbb, nabla) are not
    symbols, nor are the letters of a command's name."""
    names = set()
    for bar, command, letter, subscript in _SYMBOL.findall(latex):
        if bar:
            names.add(f"{bar}bar")
        elif command:
            if command in _GREEK:
                names.add(command)
        elif letter:
            names.add(f"{letter}_{subscript}" if subscript else letter)
    return tuple(sorted(names))


def _strip_comments(tex: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", tex)
