"""The process that decides a mutant's claims: ``python -m ratecheck.mutate.runner SPEC.json``.

Started by ``ratecheck mutate`` once for the unmutated code and once per mutant, with
``RATECHECK_MUTANT`` set for a mutant (ratecheck.mutate.hook: the mutant is served before any project
module imports it, here and in the pool's spawned workers). It registers the extra sources, selects the
claims by id, runs them through the usual executor and store (the code identity keeps a mutant's runs
apart), and writes each outcome's ``to_dict()`` to the output file of the spec.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def run(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The outcomes (``Outcome.to_dict``) of ``spec["claims"]`` under ``spec``'s profile, jobs and store."""
    from ratecheck.claims import PROFILES
    from ratecheck.model.store import NullStore, Store
    from ratecheck.registry import default
    from ratecheck.runner.executors import make_executor
    from ratecheck.runner.sweep import check_claims, load_plans

    registry = default()
    for source in spec.get("sources", ()):
        registry.add_source(source)
    by_id = {c.id: c for c in registry.claims()}
    missing = [i for i in spec["claims"] if i not in by_id]
    if missing:
        raise ValueError(f"unknown claims: {', '.join(missing)}")
    claims = [by_id[i] for i in spec["claims"]]
    profile = PROFILES[spec.get("profile", "quick")]
    store = Store(spec["cache_dir"]) if spec.get("cache_dir") else NullStore("")
    load_plans(claims, profile, store)
    with make_executor(jobs=int(spec.get("jobs", 1))) as executor:
        outcomes = check_claims(claims, profile, store=store, executor=executor, progress=False)
    return [o.to_dict() for o in outcomes]


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text())
    outcomes = run(spec)
    Path(spec["out"]).write_text(json.dumps(outcomes, default=str))  # NaN kept: a mutant may diverge
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
