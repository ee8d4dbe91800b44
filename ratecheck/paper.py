"""The paper protocol, typed: what a paper module registers with ratecheck.

A paper module (the package's own in proofs/, or a researcher's in their own package) builds one
``Paper``: its key, title and source file, its theorems (sympy, sourced) and claims (what to run,
what to expect), and optionally extra report content. Registries find it by entry point
(group ``ratecheck.papers``) or by ``--paper MODULE_OR_PATH``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing only: importing claims here would make paper.py heavy
    from .claims import Claim, Outcome
    from .theory import Theorem

# (section title, Markdown body) pairs added to the paper's report page
ReportSections = Callable[[Sequence["Outcome"]], "list[tuple[str, str]]"]
# yields (file stem, caption, matplotlib figure) drawn from the outcomes' runs
ReportFigures = Callable[[Sequence["Outcome"]], Iterable[Any]]


@dataclass(frozen=True)
class Erratum:
    """An error of the paper that no claim can decide (a typo, a wrong cross-reference, a proof step whose
    result the claims check otherwise): where it is, what is wrong, why no claim checks it, and the
    specification section that lists it. Shown in the report's errata table; not a claim, not counted."""

    where: str
    what: str
    why_not_checkable: str
    spec: str = ""  # its place in the implementation spec, e.g. "§4.7 item 3"


@dataclass(frozen=True)
class Paper:
    """One paper: ``key`` (short, used in claim ids and `ratecheck check KEY`), ``title``, ``seed``
    (the paper file and arXiv id), ``theorems`` and ``claims``, and optional report hooks."""

    key: str
    title: str
    seed: str
    theorems: Sequence[Theorem] = ()
    claims: Sequence[Claim] = ()
    spec: str = ""  # the implementation spec it was written from, if any
    report_sections: ReportSections | None = None
    report_figures: ReportFigures | None = None
    spaces: Sequence[Any] = ()  # ratecheck.runner.hunt.HuntSpace: where `ratecheck hunt THEOREM` searches
    unchecked_errata: Sequence[Erratum] = ()  # the spec's errata that no claim decides
    origin: str = field(default="", compare=False)  # where it was found (entry point, file); set by the registry

    def __post_init__(self) -> None:
        if not self.key or not self.key.replace("_", "").isalnum():
            raise ValueError(f"Paper key must be a non-empty identifier, got {self.key!r}")
        object.__setattr__(self, "theorems", tuple(self.theorems))
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "spaces", tuple(self.spaces))
        object.__setattr__(self, "unchecked_errata", tuple(self.unchecked_errata))
        for claim in self.claims:
            if claim.paper != self.key:
                raise ValueError(f"claim {claim.id} says paper {claim.paper!r}, registered under {self.key!r}")
