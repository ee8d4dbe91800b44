"""`ratecheck cache`: what the run cache holds (entries, sympy derivations, entries from code that has
changed, unreadable ones), and clearing or pruning it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ratecheck.derivations import is_current
from ratecheck.registry import default
from ratecheck.runner.identity import code_identity, stored_key
from ratecheck.runner.sweep import task_is_current
from ratecheck.trace import RunConfig

__all__ = ["cache_command"]


def _code_is_current(key: str, meta: dict | None) -> bool:
    """Whether an entry was produced by the code now installed (its code identity is current)."""

    if meta and "derivation" in meta:  # a sympy derivation: current for the sympy installed

        return is_current(meta)
    if meta and "parsed_imports" in meta:  # the imports parsed from sources, by their digest: never stale
        return True
    if meta and "task" in meta:  # a claim's stored search or plan (issue #19)

        return task_is_current(key, meta, {c.id: c for c in default().claims()})
    if not meta or "code" not in meta:
        return False  # unreadable, or written before runs were keyed on their code
    try:
        config = RunConfig.from_dict(meta["config"])
    except (KeyError, TypeError, ValueError):
        return False
    return meta["code"] == code_identity(config)["digest"] and stored_key(config) == key


def cache_command(args: argparse.Namespace, store: Any) -> int:
    """`ratecheck cache info | clear | prune` on the run cache ``store``."""
    if args.action == "clear":
        removed = store.clear()
        print(f"cleared {store.root}: {removed} entries removed (with temp and set-aside files)")
        return 0
    if args.action == "prune":
        removed = store.prune(keep=_code_is_current)
        print(f"pruned {store.root}: {removed['entries']} entries from code that changed, "
              f"{removed['corrupt']} set-aside corrupt entries, {removed['temp']} stale temp files "
              f"({removed['bytes'] / 2**20:.1f} MiB)")
        return 0
    scan = store.scan()
    metas = {key: store.read_meta(key) for key, _, _ in scan.entries}
    unreadable = [key for key, meta in metas.items() if meta is None]
    stale = [key for key, meta in metas.items() if meta is not None and not _code_is_current(key, meta)]
    data = {
        "root": str(store.root),
        "entries": len(scan.entries),
        "derivations": sum(bool(meta and "derivation" in meta) for meta in metas.values()),
        "bytes": scan.entry_bytes,
        "stale_code_entries": len(stale),
        "unreadable_entries": len(unreadable),
        "temp_files": len(scan.temp),
        "stale_temp_files": len(scan.stale_temp),
        "corrupt_files": len(scan.corrupt),
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"cache {data['root']}: {data['entries']} entries ({data['derivations']} of them sympy derivations), "
          f"{data['bytes'] / 2**20:.1f} MiB")
    print(f"  {data['stale_code_entries']} from code that has changed since (ratecheck cache prune removes them)")
    print(f"  {data['unreadable_entries']} unreadable (a run that needs one sets it aside and recomputes it)")
    print(f"  {data['temp_files']} temp files ({data['stale_temp_files']} stale), "
          f"{data['corrupt_files']} corrupt entries set aside")
    return 0
