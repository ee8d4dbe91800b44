"""The power of a rule (issue #23): the smallest change of what a claim measures that changes its verdict.

Every interval rule of the claim kinds has the same shape: at each grid point a confidence interval
[low, high] of the measured quantity is compared with one or more bands [a, b] (a one-sided bound has
a = -inf); a point is *inside* a band when a <= low and high <= b, *outside* when high < a or low > b,
and straddles it otherwise. The verdict is FAIL when some point is outside some band, PASS when every
point is inside every band, INCONCLUSIVE otherwise (``cap`` lowers the best verdict to INCONCLUSIVE,
e.g. a rate claim whose eigenvalue check could not run).

The measured quantity moves by a *scale* (every sample times s = 1 + delta: a value, a bound ratio, a
rate; the interval scales with it, its bands do not), a *shift* (an exponent + delta: a log-log slope's
interval shifts, its band does not) or an *offset* (an amount added to a quantity whose correct value is
about 0: a deviation from an oracle's recursion, a distance to a limit point; a relative change of a
near-zero number says nothing, the amount it takes does, measured against the quantity's ``reference``
scale, e.g. the norm of the limit point). The verdict is then piecewise constant in delta,
changing only where an interval end meets a band end, so the smallest change is found exactly by
testing those breakpoints in order (no search tolerance). Each rule piece (ratecheck.claims.rules,
rules_fit) builds its ``Constraint`` list and writes ``power(...)`` to its evidence under ``"power"``.

A constraint that does not move with the measured quantity (``moves=False``: e.g. the other series of
an exponent comparison) keeps its status. Gates, design and regime checks are not part of the power:
a verdict decided by them carries no ``"power"`` record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .model import Verdict

COARSE = 0.2  # issue #23: a decided claim that cannot see a change below 20% says so

SCALE, SHIFT, OFFSET = "scale", "shift", "offset"  # an offset moves an interval as a shift does


@dataclass(frozen=True)
class Constraint:
    """One interval [low, high] of the measured quantity against one band [a, b] (a or b may be inf)."""

    low: float
    high: float
    a: float = -math.inf
    b: float = math.inf
    moves: bool = True

    def moved(self, mode: str, delta: float) -> tuple[float, float]:
        if not self.moves:
            return self.low, self.high
        if mode == SCALE:
            s = 1.0 + delta
            return self.low * s, self.high * s
        return self.low + delta, self.high + delta

    def status(self, mode: str, delta: float) -> str:
        low, high = self.moved(mode, delta)
        if high < self.a or low > self.b:
            return "outside"
        if self.a <= low and high <= self.b:
            return "inside"
        return "straddles"

    def breakpoints(self, mode: str) -> Iterable[float]:
        """The deltas at which an end of the moved interval meets an end of the band."""
        if not self.moves:
            return
        for edge in (self.a, self.b):
            if not math.isfinite(edge):
                continue
            for end in (self.low, self.high):
                if not math.isfinite(end):
                    continue
                if mode != SCALE:
                    yield edge - end
                elif end != 0 and edge / end > 0:  # a positive scale only
                    yield edge / end - 1.0


def rule_verdict(constraints: Sequence[Constraint], mode: str, delta: float, cap: bool = False) -> Verdict:
    """The interval rule's verdict with the measured quantity moved by ``delta``."""
    statuses = [c.status(mode, delta) for c in constraints]
    if "outside" in statuses:
        return Verdict.FAIL
    if cap or "straddles" in statuses:
        return Verdict.INCONCLUSIVE
    return Verdict.PASS


def _first_change(constraints: Sequence[Constraint], mode: str, cap: bool, sign: int,
                  wanted: Verdict | None) -> float:
    """The smallest |delta| in direction ``sign`` past which the verdict differs from delta = 0 (or, with
    ``wanted``, becomes it); inf when none does (a scale never reaches s <= 0)."""
    now = rule_verdict(constraints, mode, 0.0, cap)
    cuts = sorted({abs(d) for c in constraints for d in c.breakpoints(mode) if d * sign > 0})
    if mode == SCALE and sign < 0:
        cuts = [d for d in cuts if d < 1.0]
    for i, cut in enumerate(cuts):
        nxt = cuts[i + 1] if i + 1 < len(cuts) else (cut * 2 if mode != SCALE or sign > 0 else (cut + 1.0) / 2)
        probe = sign * (cut + nxt) / 2  # inside the piece just past the breakpoint
        verdict = rule_verdict(constraints, mode, probe, cap)
        if (verdict == wanted) if wanted is not None else (verdict != now):
            return cut
    return math.inf


@dataclass(frozen=True)
class Power:
    """The smallest change of the measured quantity that changes the verdict, up and down.

    ``quantity`` says what moves ("relative change of ..." for a scale, "shift of the exponent" for a
    shift, the amount added for an offset); ``reference`` converts a shift or an offset to a relative change
    (|expected exponent|, or 1 when it is 0; the quantity's scale for an offset).
    ``to_fail`` is the smallest change, either way, that makes the verdict FAIL (0 when it is already)."""

    mode: str
    quantity: str
    up: float
    down: float
    to_fail: float
    verdict: Verdict
    reference: float = 1.0

    @property
    def detectable(self) -> float:
        return min(self.up, self.down)

    @property
    def relative(self) -> float:
        return self.detectable / self.reference if self.reference else math.inf

    @property
    def coarse(self) -> bool:
        """Decided, yet blind to every change of the measured quantity up to COARSE (relative)."""
        return self.verdict in (Verdict.PASS, Verdict.FAIL) and self.relative > COARSE

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "quantity": self.quantity, "verdict": str(self.verdict), "up": self.up, "down": self.down,
                "detectable": self.detectable, "relative": self.relative, "to_fail": self.to_fail,
                "coarse": self.coarse, "coarse_above": COARSE}

    def text(self) -> str:
        """One line for ``check -v``: 'power: +3.2% / -inf (relative change of the mean)'."""
        def amount(x: float, sign: str) -> str:
            if not math.isfinite(x):
                return f"never {'up' if sign == '+' else 'down'}"
            return f"{sign}{100 * x:.3g}%" if self.mode == SCALE else f"{sign}{x:.3g}"
        flag = f" COARSE (> {COARSE:.0%})" if self.coarse else ""
        return (f"power: verdict changes at {amount(self.up, '+')} / {amount(self.down, '-')} "
                f"({self.quantity}){flag}")


def power(constraints: Sequence[Constraint], mode: str, quantity: str, verdict: Verdict, *,
          cap: bool = False, reference: float = 1.0) -> dict[str, Any]:
    """The ``"power"`` record of a rule's evidence (``Power.to_dict``); ``verdict`` is the rule's own."""
    mirrored = rule_verdict(constraints, mode, 0.0, cap)
    if mirrored != verdict:  # only on a tie at a strict edge (an interval end exactly on a band end)
        return {"undetermined": f"the interval rule gives {mirrored} at an edge, the claim {verdict}"}
    to_fail = 0.0 if verdict == Verdict.FAIL else min(
        _first_change(constraints, mode, cap, +1, Verdict.FAIL), _first_change(constraints, mode, cap, -1, Verdict.FAIL))
    reference = abs(reference) if reference else 1.0
    return Power(mode, quantity, _first_change(constraints, mode, cap, +1, None),
                 _first_change(constraints, mode, cap, -1, None), to_fail, verdict, reference).to_dict()


def read(evidence: Any) -> Power | None:
    """The Power in an outcome's evidence (None when the verdict has none: a premature or gated one)."""
    rec = evidence.get("power") if isinstance(evidence, dict) else None
    if not isinstance(rec, dict) or "mode" not in rec:
        return None
    det, rel = float(rec["detectable"]), float(rec["relative"])
    reference = det / rel if math.isfinite(det) and math.isfinite(rel) and det and rel else 1.0
    return Power(str(rec["mode"]), str(rec["quantity"]), float(rec["up"]), float(rec["down"]),
                 float(rec["to_fail"]), Verdict(rec["verdict"]), reference)


def power_text(evidence: Any) -> str:
    """'; power: ...' for a verdict that has one (``check -v``), else ''."""
    rule = read(evidence)
    return f"; {rule.text()}" if rule is not None else ""
