"""Where plugins come from: the ratecheck entry points of the installed distributions (and of ratecheck's
own source checkout, read from its pyproject.toml), and the ones the user deselected. The registry loads
what these name."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GROUPS", "SKIP_ENV", "EntryPoint", "installed_entry_points", "skipped_plugins"]

GROUPS = {"paper": "ratecheck.papers", "algorithm": "ratecheck.algorithms", "problem": "ratecheck.problems",
          "measures": "ratecheck.measures"}


@dataclass(frozen=True)
class EntryPoint:
    """One entry point: ``name = value`` in ``group``, declared by distribution ``dist``."""

    group: str
    name: str
    value: str
    dist: str = "?"
    where: str = ""  # "" for installed metadata, else the pyproject.toml it was read from

    @property
    def origin(self) -> str:
        checkout = " (source checkout)" if self.where else ""
        return f"{self.dist}{checkout} entry point {self.name} = {self.value}"

    @property
    def spec(self) -> str:
        """How to name it to skip it: ``DIST:NAME``."""
        return f"{self.dist}:{self.name}"

    def matches(self, names: Iterable[str]) -> bool:
        """Named by one of ``names``: its distribution (every entry point of it) or ``DIST:NAME``."""
        return any(_normalize(n) in (_normalize(self.dist), _normalize(self.spec)) for n in names)

    def load(self) -> Any:
        module_name, _, attr = self.value.partition(":")
        obj: Any = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        return obj


SKIP_ENV = "RATECHECK_SKIP_PLUGINS"


def skipped_plugins() -> list[str]:
    """The installed plugins the user deselected: ``DIST`` or ``DIST:ENTRY_POINT``, comma-separated
    in RATECHECK_SKIP_PLUGINS (``--skip-plugin`` adds to it, so worker processes skip them too)."""
    return [name.strip() for name in os.environ.get(SKIP_ENV, "").split(",") if name.strip()]


def installed_entry_points() -> list[EntryPoint]:
    """Every ratecheck entry point of the installed distributions (ratecheck's own from its source
    checkout's pyproject.toml when it runs from one)."""
    own = _source_checkout_entry_points()
    out: list[EntryPoint] = []
    for group in GROUPS.values():
        for ep in importlib.metadata.entry_points(group=group):
            dist = ep.dist.name if ep.dist is not None else "?"
            if own is not None and _normalize(dist) == "ratecheck":
                continue
            out.append(EntryPoint(group, ep.name, ep.value, dist))
    return (own or []) + out


def _normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _source_checkout_entry_points() -> list[EntryPoint] | None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        import tomllib  # type: ignore[import-not-found, unused-ignore]  # Python 3.11+; mypy checks as 3.10
    except ImportError:  # Python 3.10: the installed metadata is all there is
        return None
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return None
    if project.get("name") != "ratecheck":
        return None
    tables = project.get("entry-points", {})
    return [EntryPoint(group, name, value, "ratecheck", str(pyproject))
            for group in GROUPS.values() for name, value in tables.get(group, {}).items()]
