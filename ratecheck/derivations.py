"""Symbolic derivations kept as store records (issue #19), so that a cached check does no sympy work.

Deriving an order (``elasticity``: sympy limits and simplifications, tenths of a second each) or a
complexity table (``sp.solve``) costs sympy time that paper modules and planning paid on every
command. Each derivation is one entry of a ``ratecheck.model.store.Store``, like a run: its key is a
SHA-256 of what was derived (the expression's ``srepr``, symbols with their assumptions, or the
function's source and arguments) and the sympy version; its result is text in the entry's metadata
(an exact rational for an order, an ``srepr`` rebuilt without eval for a table), checksummed like a
run, counted by ``ratecheck cache info``, removed by ``cache clear`` and set aside when unreadable.

Where: the command's run cache (the CLI points ``RATECHECK_SYMPY_CACHE`` at ``--cache-dir`` before
the papers load, so worker processes find it too), else ``~/.cache/ratecheck``;
``RATECHECK_SYMPY_CACHE=""`` keeps derivations in memory only.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy as sp

from .model.store import Store

__all__ = ["DERIVATIONS", "DerivationStore", "cached_derivation", "is_current"]

ENV = "RATECHECK_SYMPY_CACHE"


class DerivationStore:
    """Derivation results by key: this process's memo, then the store (see the module's doc)."""

    def __init__(self) -> None:
        self._memo: dict[str, str] = {}
        self._stores: dict[str, Any] = {}

    @staticmethod
    def root() -> Path | None:
        configured = os.environ.get(ENV)
        if configured is not None:
            return Path(configured) if configured else None
        return Path.home() / ".cache" / "ratecheck"

    def store(self) -> Any:
        """The Store under ``root()`` (opened once per root), or None (memory only, or unusable)."""
        root = self.root()
        if root is None:
            return None
        if str(root) not in self._stores:

            try:
                self._stores[str(root)] = Store(root)
            except (OSError, ValueError):  # not a directory, not creatable: derive each time
                self._stores[str(root)] = None
        return self._stores[str(root)]

    @staticmethod
    def key(kind: str, *parts: str) -> str:
        text = "\x1f".join(("ratecheck derivation", f"sympy {sp.__version__}", kind, *parts))
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        if key in self._memo:
            return self._memo[key]
        store = self.store()
        if store is None:
            return None
        try:
            entry = store.get(key)
        except OSError:  # the machine's trouble (too many open files): derive this once
            return None
        if entry is None or not isinstance(entry[1].get("result"), str) or not is_current(entry[1]):
            return None
        self._memo[key] = text = entry[1]["result"]
        return text

    def put(self, key: str, text: str, what: str) -> None:
        self._memo[key] = text
        store = self.store()
        if store is None:
            return
        try:
            store.put(key, {}, {"derivation": {"what": what, "sympy": sp.__version__}, "result": text})
        except OSError:
            pass  # a read-only or full cache: derived again next time


def is_current(meta: dict[str, Any]) -> bool:
    """A derivation record made with the sympy installed now (its key holds the version too)."""
    info = meta.get("derivation")
    return isinstance(info, dict) and info.get("sympy") == sp.__version__


DERIVATIONS = DerivationStore()


# Names a cached expression may be rebuilt from: sympy's atoms and operations, nothing else.
_REBUILD = ("Symbol", "Dummy", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Tuple", "exp", "log", "sqrt",
            "Max", "Min", "Abs", "sin", "cos", "tanh", "Piecewise", "ExprCondPair", "Eq", "Lt", "Le", "Gt", "Ge",
            "StrictLessThan", "StrictGreaterThan", "LessThan", "GreaterThan", "Equality", "BooleanTrue",
            "BooleanFalse", "floor", "ceiling", "Function")
_REBUILD_ATOMS = ("pi", "E", "oo", "zoo", "nan", "I", "true", "false")


def _rebuild(text: str) -> Any:
    """The sympy object an ``srepr`` string describes, rebuilt WITHOUT eval: only calls of the names
    in _REBUILD on literals are allowed (a cache file can hold only expressions, never code)."""
    import ast

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = build(node.operand)
            if isinstance(value, (int, float)):
                return -value
        if isinstance(node, ast.Tuple):
            return tuple(build(e) for e in node.elts)
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):  # a table of expressions
            return {build(k): build(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]  # no None key (checked above)
        if isinstance(node, ast.Name) and node.id in _REBUILD_ATOMS:
            return getattr(sp, node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REBUILD:
            func = getattr(sp, node.func.id)
            return func(*[build(a) for a in node.args], **{k.arg: build(k.value) for k in node.keywords if k.arg})
        raise ValueError(f"not a plain sympy expression: {ast.dump(node)[:80]}")

    return build(ast.parse(text, mode="eval").body)


def cached_derivation(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Keep a symbolic derivation's result as a store record (see DerivationStore).

    For pure functions of sympy expressions and plain values that return an expression, a number,
    or a tuple or dict of them, e.g. a complexity table read off a rate with ``sp.solve``. The key
    holds the function's module, name and source (an edit derives again), the ``srepr`` of its
    arguments and the sympy version; a result is kept only if it rebuilds exactly (``_rebuild``, no
    eval), and is rebuilt once per process."""
    import inspect

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = fn.__qualname__

    memo: dict[str, Any] = {}

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            parts = (fn.__module__, fn.__qualname__, source, repr([sp.srepr(a) for a in args]),
                     repr(sorted((k, sp.srepr(v)) for k, v in kwargs.items())))
        except Exception:  # arguments sympy cannot print: just derive
            return fn(*args, **kwargs)
        key = DERIVATIONS.key("function", *parts)
        if key in memo:  # rebuilding a stored table costs sympy's constructors: once per process
            return memo[key]
        memo[key] = result = _derive(key, args, kwargs)
        return result

    def _derive(key: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        stored = DERIVATIONS.get(key)
        if stored is not None:
            try:
                return _rebuild(stored)
            except (ValueError, TypeError, SyntaxError, AttributeError):
                pass  # damaged or foreign: derive again
        result = fn(*args, **kwargs)
        try:
            text = sp.srepr(result)
            if _rebuild(text) == result:
                DERIVATIONS.put(key, text, f"{fn.__module__}.{fn.__qualname__}")
        except Exception:  # not rebuildable: keep deriving it
            pass
        return result

    return wrapper
