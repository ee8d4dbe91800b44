"""Serving a mutant in place of a module, in this process and in every process it starts.

``RATECHECK_MUTANT="module.name=/tmp/dir/mutant.py"`` in the environment (set by ``ratecheck mutate`` for
the process that runs a mutant's claims, and inherited by its spawned pool workers) makes ``import
module.name`` execute the mutant's file instead of the module's own: a finder first on ``sys.meta_path``
(installed by ``ratecheck/__init__.py`` when the variable is set, before any other project module is
imported). The user's file is never written. The finder also answers ``source_override(name)``, which
``ratecheck.runner.identity`` asks, so the mutant's runs get their own code identity and never reuse (or
overwrite) the stored runs of the unmutated code.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ENV = "RATECHECK_MUTANT"


class MutantFinder(importlib.abc.MetaPathFinder):
    """Finds ``module`` at ``path`` (a mutant's file) instead of where it lives."""

    def __init__(self, module: str, path: Path) -> None:
        self.module = module
        self.path = path

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path)

    def source_override(self, name: str) -> Path | None:
        """The file whose source module ``name`` runs, when it is not the module's own."""
        return self.path if name == self.module else None


def parse(value: str) -> tuple[str, Path]:
    module, sep, path = value.partition("=")
    if not sep or not module or not path:
        raise ValueError(f"{ENV} must be MODULE=PATH, got {value!r}")
    return module, Path(path)


def install_from_env() -> MutantFinder | None:
    """Install the finder named by the environment (once); None when no mutant is set."""
    value = os.environ.get(ENV)
    if not value:
        return None
    for finder in sys.meta_path:
        if isinstance(finder, MutantFinder):
            return finder
    module, path = parse(value)
    if not path.is_file():
        raise ValueError(f"{ENV}: no mutant file {path}")
    finder = MutantFinder(module, path)
    sys.meta_path.insert(0, finder)
    return finder
