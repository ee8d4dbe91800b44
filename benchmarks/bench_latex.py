"""What parsing LaTeX costs (issue #24): CPU seconds of ``ratecheck.model.latex.parse`` against the length
of the text sympy's parser reads (products made explicit) and the nesting depth, for the shapes a
bound takes (flat sums, sums of fractions, products, nested fractions, parentheses and roots), and
the limits of ratecheck/model/latex.py that follow from the worst cost per character.

    python benchmarks/bench_latex.py            # a few sizes per shape (about a minute)

The baseline beside it: the limit before (2,000 raw characters), and the time of an input just under
it (a product of 1,000 factors; the issue measured a 1,999-character input at about 8 s). Every
registered bound and condition is measured too: the limit must accept them all.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import sympy as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ratecheck import registry
from ratecheck.model import latex

L, K, n, T = SYMBOLS = sp.symbols("L K n T", positive=True)
SHAPES = {
    "flat sum": lambda k: " + ".join(["L"] * k),
    "sum of fractions": lambda k: " + ".join([r"\frac{L K}{n T}"] * max(1, k // 6)),
    "product": lambda k: " ".join(["L"] * k),
    "nested fractions": lambda k: r"\frac{1}{" * min(k // 5, latex.MAX_DEPTH) + "L" + "}" * min(k // 5, latex.MAX_DEPTH),
    "nested parentheses": lambda k: "(" * min(k, latex.MAX_DEPTH) + "L" + ")" * min(k, latex.MAX_DEPTH),
    "nested roots": lambda k: r"\sqrt{" * min(k // 4, latex.MAX_DEPTH) + "L" + "}" * min(k // 4, latex.MAX_DEPTH),
}
SIZES = (25, 50, 100, 200)


@contextlib.contextmanager
def unlimited() -> Iterator[None]:
    """Lift the length limits (to measure beyond them)."""
    saved = latex.MAX_PARSED, latex.MAX_CHARS
    latex.MAX_PARSED = latex.MAX_CHARS = 10**6
    try:
        yield
    finally:
        latex.MAX_PARSED, latex.MAX_CHARS = saved


def cost(text: str, symbols: object = SYMBOLS) -> tuple[int, float]:
    """(characters the parser reads, CPU seconds of parsing them)."""
    from sympy.parsing.latex import parse_latex

    read = latex.prepared(text, symbols)  # type: ignore[arg-type]
    started = time.process_time()
    try:
        parse_latex(read, backend="lark")
    except Exception:  # noqa: BLE001  a shape the grammar refuses still costs its parse
        pass
    return len(read), time.process_time() - started


def at_limit(make: Callable[[int], str]) -> str:
    """The largest text of a shape whose read length is within the limits (a nested shape stops
    growing at the depth bound)."""
    size, best = 1, make(1)
    while size < 2000:
        size += 1
        try:
            latex.prepared(make(size), SYMBOLS)
        except latex.LatexError:
            break
        best = make(size)
    return best


def main() -> int:
    cost("L")  # the grammar is built once per process
    print(f"{'shape':<20} {'size':>5} {'raw':>6} {'read':>6} {'CPU s':>7} {'ms/char':>8}")
    worst = 0.0
    with unlimited():
        for shape, make in SHAPES.items():
            for size in SIZES:
                text = make(size)
                read, seconds = cost(text)
                worst = max(worst, seconds / read) if read >= 100 else worst  # short ones: fixed overhead
                print(f"{shape:<20} {size:>5} {len(text):>6} {read:>6} {seconds:>7.3f} {seconds / read * 1e3:>8.2f}")
    print(f"\nworst cost (100 characters read or more): {worst * 1e3:.2f} ms per character; declared "
          f"PARSE_SECONDS_PER_CHAR = {latex.PARSE_SECONDS_PER_CHAR * 1e3:g} ms")
    print(f"limits: at most {latex.MAX_PARSED} characters read (about {latex.PARSE_SECONDS:g} s), {latex.MAX_CHARS} raw, "
          f"{latex.MAX_DEPTH} levels\n\nthe largest accepted input of each shape:")
    slowest = 0.0
    for shape, make in SHAPES.items():
        text = at_limit(make)
        read, seconds = cost(text)
        slowest = max(slowest, seconds)
        print(f"  {shape:<20} {len(text):>6} raw {read:>6} read {seconds:>7.3f} CPU s")
    longest = (0, 0.0, "")
    refused = []
    for theorem in registry.default().theorems():
        symbols = tuple(theorem.symbols.values())
        items = [(b.version, b.expr) for b in theorem.bounds] + [(c.name, c.relation) for c in theorem.conditions]
        for name, item in items:
            try:
                read, seconds = cost(sp.latex(item), symbols)
            except latex.LatexError:
                refused.append(f"{theorem.id} {name}")
                continue
            longest = max(longest, (read, seconds, f"{theorem.id} {name}"))
    print(f"\nlongest registered bound or condition: {longest[2]}, {longest[0]} characters read, {longest[1]:.2f} s; "
          f"refused by the limits: {len(refused)} {refused[:5]}")
    before = " ".join(["L"] * 1000)
    with unlimited():
        read, seconds = cost(before)
    print(f"baseline (limit before: 2,000 raw characters): {len(before)} raw characters, {read} read, "
          f"{seconds:.2f} CPU s; the slowest accepted now {slowest:.2f} CPU s (ratio {seconds / slowest:.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
