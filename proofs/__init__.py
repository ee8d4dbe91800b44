"""One module per paper: its theorems (sympy, with sources) and its claims (what to run, what to expect).

A paper module builds one ``ratecheck.paper.Paper`` named PAPER (key, title, seed file, THEOREMS,
CLAIMS, optional report hooks). Register a new paper by adding its module to MODULES.
"""

from __future__ import annotations

import fnmatch
from types import ModuleType

from ratecheck.claims import Claim
from ratecheck.paper import Paper
from ratecheck.theory import Theorem

from . import defedavg
from . import simfbo
from . import fessgda
from . import strfedavg

MODULES: tuple[ModuleType, ...] = (defedavg, simfbo, fessgda, strfedavg)


def papers() -> dict[str, Paper]:
    return {m.PAPER.key: m.PAPER for m in MODULES}


def all_claims() -> list[Claim]:
    claims = [c for p in papers().values() for c in p.claims]
    ids = [c.id for c in claims]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"claim ids registered twice: {sorted(dupes)}")
    return claims


def all_theorems() -> list[Theorem]:
    return [t for p in papers().values() for t in p.theorems]


def select_claims(pattern: str | None = None) -> list[Claim]:
    """Claims whose id or paper matches a glob pattern (a bare word matches as a substring)."""
    claims = all_claims()
    if not pattern:
        return claims
    glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
    chosen = [c for c in claims if fnmatch.fnmatch(c.id, glob) or fnmatch.fnmatch(c.paper, glob)]
    if not chosen:
        raise ValueError(f"no claim matches {pattern!r}; claims: {[c.id for c in claims]}")
    return chosen
