"""Single-token mutants of a module's source: each is the original text with one token (or one dropped
term) replaced, found with ``ast`` and ``tokenize`` and spliced into the text at its exact position, so
that the rest of the file (formatting, comments) is untouched and a mutant's diff is one line.

Operators (issue #23 item 4): arithmetic (+ <-> -, * <-> /, ** -> *, // -> /, augmented assignments
too), comparisons (< <-> <=, > <-> >=, == <-> !=), constants (an integer k -> k + 1, a float x -> 2x,
True <-> False), signs (-e -> e), index offsets (a[i] -> a[i + 1] for a computed index) and dropped
terms (a + b -> a, a - b -> a, a * b -> a). Not mutated: docstrings, annotations, f-strings, raised
exceptions and the tests of validation guards (``if ...: raise``), code under ``if TYPE_CHECKING:``,
parameter declarations (``real(...)``, ``integer(...)``) and module constants in ALL_CAPS: their
mutants change validation and declared ranges, not what a run computes.

Why not mutmut or cosmic-ray (both on PyPI, both read for this): each is a mutate-then-run-the-tests
loop around its own runner. cosmic-ray applies a mutant by rewriting the module's file on disk and
restoring it afterwards (``mutating.use_mutation``), which a Ctrl-C or a killed worker can leave
behind, and needs its session database and config; mutmut 3 rewrites a copy of the whole source tree
with trampolines to every mutant and selects one through an environment variable read by pytest.
Neither has index offsets or dropped terms, and neither fits a loop whose "test" is deciding claims
through ratecheck's executors and store, keyed by code identity. What is needed from them, a list of
operator edits at token positions, is the hundred lines below; serving a mutant is
ratecheck.mutate.hook (a finder on sys.meta_path, no file written in the user's tree).
"""

from __future__ import annotations

import ast
import difflib
import io
import random
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

ARITHMETIC: dict[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.Pow: ("**", "*"), ast.FloorDiv: ("//", "/"), ast.MatMult: ("@", "*"),
}
COMPARISON: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="),
}
DECLARATIONS = ("real", "integer", "choice", "flag", "Param")  # ratecheck.params' declaration helpers


@dataclass(frozen=True)
class Mutant:
    """One mutant: where (1-based line, 0-based column of the changed text), what kind, and the text."""

    module: str
    index: int  # position in the module's full list of mutants (stable for a given source)
    kind: str  # arithmetic, comparison, constant, sign, index, drop
    line: int
    col: int
    before: str
    after: str
    source: str  # the whole mutated module
    scope: str = ""  # the class whose code it changes ("" at module level or in a module function)

    @property
    def id(self) -> str:
        return f"{self.module}:{self.line}:{self.col}:{self.kind}"

    def describe(self) -> str:
        return f"line {self.line}: {self.kind} {self.before!r} -> {self.after!r}"

    def diff(self, original: str, path: str = "") -> str:
        """The unified diff of the mutant against ``original`` (one changed line, with one of context)."""
        name = path or self.module
        return "".join(difflib.unified_diff(original.splitlines(keepends=True), self.source.splitlines(keepends=True),
                                            f"a/{name}", f"b/{name}", n=1))


@dataclass(frozen=True)
class _Edit:
    kind: str
    start: tuple[int, int]  # (line, col) of the replaced text
    end: tuple[int, int]
    after: str


def mutants(source: str, module: str) -> list[Mutant]:
    """Every mutant of ``source`` (in source order); a mutant that does not compile is left out."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for text in lines:
        offsets.append(offsets[-1] + len(text))
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out: list[Mutant] = []
    seen: set[str] = set()
    classes = [(n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for edit in _edits(tree, tokens, lines):
        a = offsets[edit.start[0] - 1] + edit.start[1]
        b = offsets[edit.end[0] - 1] + edit.end[1]
        text = source[:a] + edit.after + source[b:]
        if text == source or text in seen:
            continue
        try:
            compile(text, module, "exec")
        except SyntaxError:
            continue
        seen.add(text)
        inner = [c for c in classes if c[0] <= edit.start[0] <= c[1]]
        scope = max(inner)[2] if inner else ""  # the innermost class (the latest to start)
        out.append(Mutant(module, len(out), edit.kind, edit.start[0], edit.start[1], source[a:b], edit.after, text,
                          scope))
    return out


def select(found: Sequence[Mutant], count: int | None, seed: int) -> list[Mutant]:
    """At most ``count`` mutants, drawn without replacement by a seeded generator, in source order."""
    if count is None or count >= len(found):
        return list(found)
    picked = random.Random(seed).sample(range(len(found)), count)
    return [found[i] for i in sorted(picked)]


def _skipped(tree: ast.AST) -> set[int]:
    """ids of the nodes whose subtrees are not mutated (see the module's docstring)."""
    skip: set[int] = set()

    def drop(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            drop(body[0])  # a docstring
        if isinstance(node, (ast.AnnAssign, ast.arg)):
            drop(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            drop(node.returns)
        elif isinstance(node, (ast.JoinedStr, ast.Raise, ast.Assert)):
            drop(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            drop(node)
        elif isinstance(node, ast.If) and all(isinstance(s, ast.Raise) for s in node.body):
            drop(node.test)  # a validation guard: its mutants refuse good input or accept bad input
        elif isinstance(node, ast.Call) and _called(node) in DECLARATIONS:
            drop(node)
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
            drop(node)
    return skip


def _called(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _edits(tree: ast.AST, tokens: list[tokenize.TokenInfo], lines: list[str]) -> Iterator[_Edit]:
    skip = _skipped(tree)
    nodes = sorted((n for n in ast.walk(tree) if id(n) not in skip and hasattr(n, "lineno")),
                   key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    for node in nodes:
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            symbol, other = ARITHMETIC[type(node.op)]
            tok = _operator_token(tokens, _end(node.left), _start(node.right), symbol)
            if tok is not None:
                yield _Edit("arithmetic", tok.start, tok.end, other)
            if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):  # drop the right-hand term or factor
                yield _Edit("drop", _end(node.left), _end(node), "")
        elif isinstance(node, ast.AugAssign) and type(node.op) in ARITHMETIC:
            symbol, other = ARITHMETIC[type(node.op)]
            tok = _operator_token(tokens, _end(node.target), _start(node.value), symbol + "=")
            if tok is not None:
                yield _Edit("arithmetic", tok.start, tok.end, other + "=")
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                if type(op) in COMPARISON:
                    symbol, other = COMPARISON[type(op)]
                    tok = _operator_token(tokens, _end(left), _start(right), symbol)
                    if tok is not None:
                        yield _Edit("comparison", tok.start, tok.end, other)
                left = right
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield _Edit("constant", _start(node), _end(node), str(not node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            value = node.value
            after = repr(value + 1) if isinstance(value, int) else repr(value * 2 if value else 1.0)
            yield _Edit("constant", _start(node), _end(node), after)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            yield _Edit("sign", _start(node), _start(node.operand), "")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Name, ast.BinOp)) \
                and isinstance(node.ctx, ast.Load):
            yield _Edit("index", _end(node.slice), _end(node.slice), " + 1")


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]


def _operator_token(tokens: list[tokenize.TokenInfo], after: tuple[int, int], before: tuple[int, int],
                    symbol: str) -> tokenize.TokenInfo | None:
    """The operator token between two operands (parentheses and comments may sit around it)."""
    for tok in tokens:
        if tok.start >= before:
            break
        if tok.start >= after and tok.type == tokenize.OP and tok.string == symbol:
            return tok
    return None
