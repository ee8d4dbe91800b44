"""Bounds and conditions pasted from a paper: LaTeX -> sympy, through sympy's LaTeX parser (lark).

Symbols are matched by *name* to the theorem's declared symbols (with their assumptions): a symbol is
written as sympy prints it (``sympy.latex(Symbol("eta_x"))`` is ``\\eta_{x}``, ``etabar`` is
``\\bar{\\eta}``, ``Delta`` is ``\\Delta``), or ``\\eta_x`` for a one-character subscript. Forms the
lark grammar lacks (``\\sigma``, capital Greek, ``\\bar``, multi-letter names) are swapped for
placeholders before parsing and swapped back after, and ``\\begin{cases}`` rows become a Piecewise.
A symbol the theorem does not declare, or text sympy cannot parse, is a ``LatexError`` that says
what and where.

    Bound.from_latex("corrected", r"\\sqrt{\\frac{128 L \\sigma^{2} \\Delta}{n K T}} + \\frac{8 L}{K T}",
                     src("Appendix A.2.2"), symbols=(L, sigma, Delta, n, K, T))
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from typing import TypeAlias

import sympy as sp
from sympy.core.relational import Relational

__all__ = ["LatexError", "parse", "prepared"]

SymbolsLike: TypeAlias = "Iterable[sp.Symbol] | Mapping[str, sp.Symbol]"
_PLACEHOLDER = "rcsym"
_CASES = re.compile(r"\\begin\{cases\}(.*?)\\end\{cases\}", re.S)


class LatexError(ValueError):
    """LaTeX that cannot become the expression asked for: names the text and the cause."""


def parse(text: str, symbols: SymbolsLike, *, what: str = "LaTeX") -> sp.Basic:
    """The sympy expression or relation of ``text``, over the declared ``symbols`` (by name)."""
    declared = _declared(symbols, what)
    return _parse_prepared(*_prepare(text, declared, what), declared, what, text)


def prepared(text: str, symbols: SymbolsLike, *, what: str = "LaTeX") -> str:
    """What sympy's parser reads of ``text`` (products explicit, symbols as placeholders): its
    length is what parsing costs (benchmarks/bench_latex.py)."""
    return _prepare(text, _declared(symbols, what), what)[0]


def _prepare(text: str, declared: Mapping[str, sp.Symbol], what: str) -> tuple[str, dict[str, sp.Basic]]:
    if not isinstance(text, str) or not text.strip():
        raise LatexError(f"{what}: expected a LaTeX string, got {text!r}")
    _check_size(text, what)
    slots: dict[str, sp.Basic] = {}
    spent: list[int] = []

    def slot(value: sp.Basic) -> str:
        key = _PLACEHOLDER + _letters(len(slots))
        slots[key] = value
        return rf"\mathit{{{key}}}"

    def piece(row: str) -> sp.Basic:
        inner = _prepare(row, declared, what)
        spent.append(len(inner[0]))  # every piece is parsed too: one budget for them all
        return _parse_prepared(*inner, declared, what, row)

    def cases(match: re.Match) -> str:
        pieces = []
        for row in filter(str.strip, re.split(r"\\\\", match.group(1))):
            value, _, condition = row.partition("&")
            condition = re.sub(r"\\text\{\s*(for|if)\s*\}|\\[:,;!]|\\quad", " ", condition).strip().rstrip(",")
            otherwise = condition in ("", r"\text{otherwise}", r"\text{else}")
            pieces.append((piece(value), True if otherwise else piece(condition)))
        return slot(sp.Piecewise(*pieces))

    prepared = _CASES.sub(cases, text)
    prepared = re.sub(r"\\(?:bar|overline)\s*(\\[A-Za-z]+|[A-Za-z])", r"\\bar{\1}", prepared)  # \bar\eta
    prepared = prepared.replace(r"\overline{", r"\bar{")
    for form, sym in _forms(declared):
        prepared = _replace(prepared, form, lambda sym=sym: slot(sym))
    try:
        prepared = _explicit_products(prepared)
    except _Unreadable as exc:
        raise LatexError(f"{what}: cannot parse {_short(text)}: {exc}") from None
    if len(prepared) + sum(spent) > MAX_PARSED:
        raise LatexError(
            f"{what}: the LaTeX is {len(prepared) + sum(spent)} characters long once its products are made explicit "
            f"(as sympy's parser reads it); the rule: at most {MAX_PARSED}, which sympy parses in about "
            f"{MAX_PARSED * PARSE_SECONDS_PER_CHAR:.1g} s ({PARSE_SECONDS_PER_CHAR * 1e3:g} ms a character, "
            "benchmarks/bench_latex.py): split it into named pieces")
    return prepared, slots


# Bounds on the input, derived from what parsing costs (benchmarks/bench_latex.py prints it):
# sympy's lark (Earley) parser takes about PARSE_SECONDS_PER_CHAR per character it reads, whatever
# the shape (flat sums, products, nested fractions), so at most MAX_PARSED characters keep a parse
# near PARSE_SECONDS; the raw text may be longer by its spacing and \left/\right only. The depth
# bound is the parser's recursion, not its time.
PARSE_SECONDS = 1.0
PARSE_SECONDS_PER_CHAR = 3e-3
MAX_PARSED = int(PARSE_SECONDS / PARSE_SECONDS_PER_CHAR)
MAX_CHARS = 2 * MAX_PARSED
MAX_DEPTH = 24  # nested groups: {...}, (...), [...] and \left ... \right


def _check_size(text: str, what: str) -> None:
    """Refuse, at once, text too long or too deeply nested to be a theorem's bound or condition."""
    if len(text) > MAX_CHARS:
        raise LatexError(f"{what}: the LaTeX is {len(text)} characters long; the rule: at most {MAX_CHARS} "
                         f"characters (twice the {MAX_PARSED} sympy's parser reads in about {PARSE_SECONDS:g} s; "
                         "a bound or condition is a few lines: split it into named pieces)")
    depth = deepest = 0
    for char in text:
        if char in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "})]":
            depth -= 1
    if deepest > MAX_DEPTH:
        raise LatexError(f"{what}: the LaTeX nests groups {deepest} deep; the rule: at most {MAX_DEPTH} levels "
                         "(sympy's parser recurses once per level)")


def _declared(symbols: SymbolsLike, what: str) -> dict[str, sp.Symbol]:
    """The declared symbols by name; anything but sympy Symbols is refused, saying how to declare one."""
    hint = "declare it as sympy.Symbol(name, positive=True) (as the theorem does), not a string"
    if isinstance(symbols, (str, bytes)) or not isinstance(symbols, (Mapping, Iterable)):
        raise LatexError(f"{what}: symbols must be sympy Symbols (a list, or a dict by name), got {symbols!r}")
    items = list(symbols.items()) if isinstance(symbols, Mapping) else [(getattr(s, "name", s), s) for s in symbols]
    declared: dict[str, sp.Symbol] = {}
    for name, sym in items:
        if not isinstance(sym, sp.Symbol):
            raise LatexError(f"{what}: symbol {name!r} is not a sympy Symbol but a {type(sym).__name__}: {hint}")
        if not isinstance(name, str):
            raise LatexError(f"{what}: symbols are named by strings, got {name!r} for {sym}")
        declared[name] = sym
    return declared


# A bound or condition side must be a real finite number at generic positive values of its symbols:
# three points, their values spread around each scale (1/100, 1, 100) so that no difference or
# condition of a Piecewise vanishes by accident; one real finite value suffices (a cap like
# 1 - eta L needs small values, sqrt(K - 1) large ones).
_SCALES = (1e-2, 1.0, 1e2)


def _check_finite(expr: sp.Basic, what: str, text: str) -> None:
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    value: object = None
    for scale in _SCALES:
        point = {sym: scale * (1.0 + 0.1 * math.sqrt(2 + k)) for k, sym in enumerate(symbols)}
        try:
            value = complex(expr.evalf(subs=point))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError):
            value = expr.subs(point)  # zoo, nan, a Piecewise with no branch: not a number
            continue
        if math.isfinite(value.real) and math.isfinite(value.imag) and abs(value.imag) <= 1e-12 * max(1.0, abs(value.real)):
            return
    shown = f"{expr}" if len(str(expr)) <= 80 else f"{str(expr)[:77]}..."
    raise LatexError(f"{what}: {_short(text)} is {shown}, which is not a real finite number at generic positive "
                     f"values of its symbols (it is {value} at values near {scale:g}): a division by zero or the "
                     "root or logarithm of a negative number?")


def _short(text: str) -> str:
    return repr(text) if len(text) <= 120 else repr(text[:117] + "...")


def _parse_prepared(text: str, slots: Mapping[str, sp.Basic], declared: Mapping[str, sp.Symbol], what: str,
                    original: str) -> sp.Basic:
    """Parse prepared text (placeholders in), then map every symbol back to a declared one."""
    try:
        from sympy.parsing.latex import parse_latex

        result = parse_latex(text, backend="lark")
    except ImportError as exc:  # lark is a dependency of ratecheck; say so if it is missing
        raise LatexError(f"{what}: sympy's LaTeX parser needs lark (pip install lark): {exc}") from None
    except Exception as exc:  # lark raises its own exception types: report them all the same way
        cause = str(exc).strip().splitlines()
        detail = " ".join(cause[:1] + [line.strip() for line in cause[1:4] if line.strip()])
        raise LatexError(f"{what}: sympy cannot parse {original or text!r}: {type(exc).__name__}: {detail}") from None
    if not isinstance(result, sp.Basic):  # lark left an ambiguity unresolved (a Tree, not an expression)
        raise LatexError(f"{what}: sympy's parser reads {_short(original)} in more than one way; add braces "
                         "or parentheses around a function's argument and what it multiplies")
    mapping = {}
    for sym in result.free_symbols:
        name = str(sym.name)
        if name in slots:
            mapping[sym] = slots[name]
        elif name in declared:
            mapping[sym] = declared[name]
        elif name == "e":  # Euler's number, as sympy prints E, unless the theorem declares a symbol e
            mapping[sym] = sp.E
        else:
            known = ", ".join(f"{n} ({sp.latex(s)})" for n, s in declared.items())
            raise LatexError(f"{what}: symbol {name!r} in {original or text!r} is not declared; declared: {known}")
    return result.xreplace(mapping)


def _forms(declared: Mapping[str, sp.Symbol]) -> list[tuple[str, sp.Symbol]]:
    """LaTeX spellings of the declared symbols the grammar does not read as the same name, longest
    first (a single Latin letter is read natively)."""
    forms: dict[str, sp.Symbol] = {}
    for _name, sym in declared.items():
        printed = sp.latex(sym)
        spellings = {printed, re.sub(r"_\{(\\?[A-Za-z0-9]+)\}$", r"_\1", printed)}
        for form in spellings:
            if not re.fullmatch(r"[A-Za-z]", form):
                forms.setdefault(form, sym)
    return sorted(forms.items(), key=lambda item: -len(item[0]))


def _replace(text: str, form: str, make) -> str:
    """Replace whole occurrences of a symbol's spelling (not a prefix of a longer name)."""
    out, start = [], 0
    for match in re.finditer(re.escape(form), text):
        i, j = match.start(), match.end()
        before = text[i - 1] if i > 0 else ""
        after = text[j] if j < len(text) else ""
        if after.isalnum() and form[-1].isalpha() or after in ("_", "'"):
            continue  # \eta inside \eta_{x} or \etabar; lam inside lambda
        if form[0].isalpha() and (before.isalpha() or before in ("\\", "_")):
            continue  # L_{f} inside \Lambda_{f} or x_L_{f}
        out.append(text[start:i])
        out.append(make())
        start = j
    out.append(text[start:])
    return "".join(out)


# -- explicit products ---------------------------------------------------------------------------
# The lark grammar reads neither "x^{2} y" nor "\\left(": a bound as sympy prints it (or as a paper
# writes it) needs every product spelled out. Juxtaposed factors get a \\cdot, level by level.

_OPERATORS = {"cdot", "times", "div", "le", "leq", "ge", "geq", "lt", "gt", "neq", "ne", "pm", "mp", "leqslant",
              "geqslant"}
_TWO_ARGS = {"frac", "dfrac", "tfrac", "binom"}
_ONE_ARG = {"bar", "overline", "hat", "tilde", "mathit", "mathrm", "text", "operatorname", "mathbf"}
_FUNCTIONS = {"log", "ln", "exp", "sin", "cos", "tan", "max", "min", "arcsin", "arccos", "arctan", "sinh", "cosh",
              "tanh", "lg"}
_SPACING = re.compile(r"\\[,:;! ]|\\quad|\\qquad")
_CLOSING = {"(": ")", "[": "]", "{": "}"}


class _Unreadable(ValueError):
    pass


# Delimiter sizes (\big, \Bigl, ...) only change how a bracket is drawn; \{ \} (set braces, as in
# \min\{a, b\}) group like parentheses.
_SIZES = re.compile(r"\\(?:big|Big|bigg|Bigg)[lrm]?(?![A-Za-z])\s*")
_SET_BRACES = re.compile(r"(?:\\left\s*)?(?:\\\{|\\lbrace(?![A-Za-z]))|(?:\\right\s*)?(?:\\\}|\\rbrace(?![A-Za-z]))")


def _explicit_products(text: str) -> str:
    text = _SIZES.sub("", text)
    text = _SET_BRACES.sub(lambda m: "(" if "{" in m.group(0) or "lbrace" in m.group(0) else ")", text)
    text = re.sub(r"\\left\s*([(\[|])", r"\1", text)
    text = re.sub(r"\\right\s*([)\]|])", r"\1", text)
    text = re.sub(r"\\(left|right)\s*\.", " ", text)
    return _products(_SPACING.sub(" ", text))


def _products(text: str) -> str:
    out: list[str] = []
    i, previous_unit = 0, False
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
            continue
        command = re.match(r"\\([A-Za-z]+)", text[i:])
        if char in "+-=<>/,&" or (command and command.group(1) in _OPERATORS):
            j = i + (command.end() if command else 1)
            out.append(f" {text[i:j]} ")
            i, previous_unit = j, False
            continue
        unit, i = _unit(text, i)
        unit, i = _postfix(text, i, unit)
        out.append("*" + unit if previous_unit else unit)  # "*": the shortest product sign (parsing costs per character)
        previous_unit = True
    return "".join(out).strip()


def _unit(text: str, i: int) -> tuple[str, int]:
    """One factor starting at i (without its ^, _, ' or ! postfixes) and the index after it."""
    char = text[i]
    if char.isdigit() or char == ".":
        match = re.match(r"[0-9.]+", text[i:])
        assert match is not None  # text[i] is a digit or "."
        return match.group(0), i + match.end()
    if char.isalpha():
        return char, i + 1
    if char in _CLOSING:
        inner, j = _group(text, i)
        return char + _products(inner) + _CLOSING[char], j
    command = re.match(r"\\([A-Za-z]+)", text[i:])
    if command is None:
        construct = " (an absolute value or a norm: write it as a declared symbol)" if char == "|" else ""
        raise _Unreadable(f"unexpected {char!r}{construct} at position {i}")
    name, j = command.group(1), i + command.end()
    if name == "mathcal":
        argument, _ = _argument(text, j, keep=True)
        if argument.strip().lstrip("\\").startswith(("O", "tilde")):
            raise _Unreadable(r"\mathcal{O}(...) hides its constants, and a bound is evaluated at numbers: paste the "
                              "explicit expression (the O-free form of the proof or the appendix)")
    if name in _TWO_ARGS:
        first, j = _argument(text, j)
        second, j = _argument(text, j)
        return f"\\{name}{{{first}}}{{{second}}}", j
    if name == "sqrt":
        index = ""
        rest = text[j:].lstrip()
        if rest.startswith("["):
            j = len(text) - len(rest)
            inner, j = _group(text, j)
            index = f"[{_products(inner)}]"
        argument, j = _argument(text, j)
        return f"\\sqrt{index}{{{argument}}}", j
    if name in _ONE_ARG:
        argument, j = _argument(text, j, keep=name in ("mathit", "mathrm", "text", "operatorname"))
        if not _readable(name):  # \hat{x} left over: not a declared symbol's spelling
            raise _Unreadable(f"\\{name}{{{argument}}} is not a declared symbol (declare it, with that spelling, "
                              "among the theorem's symbols)")
        return f"\\{name}{{{argument}}}", j
    if name in _FUNCTIONS:  # the function applies to the factor after it (and its own ^ or _)
        head, j = _postfix(text, j, f"\\{name}")
        k = j
        while k < len(text) and text[k].isspace():
            k += 1
        argument, j = _unit(text, k)
        if argument[:1] not in "{(":  # \log x^2: the power is the argument's; \log{(x)}^{2} (as sympy
            argument, j = _postfix(text, j, argument)  # prints log(x)**2): the application's, outside
        return f"{{{head}{argument}}}", j  # braced: "\\log{(R)}*M" alone is ambiguous to the grammar
    if not _readable(name):
        raise _Unreadable(f"\\{name} is neither a declared symbol nor a construct sympy's LaTeX grammar reads "
                          "(a capital Greek letter or a multi-letter name is read only when the theorem declares it)")
    return f"\\{name}", j


@functools.cache
def _grammar_commands() -> frozenset[str]:
    """The commands sympy's lark grammar reads (its own grammar files; empty if they are not found,
    and then the parser's error says what it could not read)."""
    from importlib import resources  # start-up time: only the length-limit message reads the package data

    try:
        folder = resources.files("sympy.parsing.latex.lark") / "grammar"
        text = "".join(f.read_text() for f in folder.iterdir() if f.name.endswith(".lark"))
    except (ModuleNotFoundError, OSError):
        return frozenset()
    return frozenset(re.findall(r"\\\\([A-Za-z]+)", text))


def _readable(name: str) -> bool:
    commands = _grammar_commands()
    return not commands or name in commands


def _argument(text: str, j: int, keep: bool = False) -> tuple[str, int]:
    """The braced argument (or single character) of a command, its products made explicit."""
    while j < len(text) and text[j].isspace():
        j += 1
    if j >= len(text):
        raise _Unreadable("a command is missing its argument at the end")
    if text[j] == "{":
        inner, j = _group(text, j)
        return (inner if keep else _products(inner)), j
    unit, j = _unit(text, j)
    return unit, j


def _postfix(text: str, j: int, unit: str) -> tuple[str, int]:
    """Attach subscripts, powers, primes and factorials to a factor."""
    while True:
        k = j
        while k < len(text) and text[k] == " ":
            k += 1
        if k < len(text) and text[k] in "^_":
            mark = text[k]
            argument, j = _argument(text, k + 1, keep=mark == "_")
            unit += f"{mark}{{{argument}}}"
        elif k < len(text) and text[k] in "'!":
            unit, j = unit + text[k], k + 1
        else:
            return unit, j


def _group(text: str, i: int) -> tuple[str, int]:
    """The text inside the bracket opening at i, and the index after its closing bracket."""
    opening, closing, depth = text[i], _CLOSING[text[i]], 0
    for k in range(i, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return text[i + 1:k], k + 1
    raise _Unreadable(f"{opening!r} at position {i} is never closed")


def _letters(index: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba', ... (placeholders must be letters for the grammar)."""
    digits = ""
    while True:
        index, rest = divmod(index, 26)
        digits = chr(ord("a") + rest) + digits
        if index == 0:
            return digits


def expression(text: str, symbols: SymbolsLike, what: str) -> sp.Expr:
    """A bound: an expression, real and finite at generic positive values of its symbols."""
    result = parse(text, symbols, what=what)
    if isinstance(result, Relational) or not isinstance(result, sp.Expr):
        raise LatexError(f"{what}: expected an expression, got {type(result).__name__} {result}")
    _check_finite(result, what, text)
    return result


def relation(text: str, symbols: SymbolsLike, what: str) -> Relational:
    """A condition: an inequality whose sides are real and finite at generic positive values."""
    result = parse(text, symbols, what=what)
    if not isinstance(result, Relational) or result.rel_op not in ("<=", "<", ">=", ">"):
        raise LatexError(f"{what}: expected an inequality (\\le, <, \\ge, >), got {result}")
    for side in (result.lhs, result.rhs):
        _check_finite(side, what, text)
    return result
