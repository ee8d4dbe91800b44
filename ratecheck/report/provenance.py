"""What produced a report (issue #18): ratecheck's version and commit, the command line, the profile,
the seeds, Python and library versions, the date, wall and CPU time. Shown on every page."""

from __future__ import annotations

import platform
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .. import __version__

LIBRARIES = ("numpy", "scipy", "sympy", "matplotlib", "hypothesis", "latex2mathml")


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (user + system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def git_commit(path: Path | None = None) -> str:
    """The commit of the checkout ratecheck is imported from, '+ local changes' when dirty; 'unknown'."""
    where = path or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return head + (" + local changes" if dirty else "")


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def seeds_text(outcomes: Sequence[Any]) -> str:
    seeds = sorted({int(p.config.seed) for o in outcomes for p in o.points})
    if not seeds:
        return "-"
    shown = ", ".join(map(str, seeds[:8])) + (", ..." if len(seeds) > 8 else "")
    return f"{len(seeds)} distinct run seeds ({shown}), fixed in each claim's configuration"


def gather(outcomes: Sequence[Any], profile: Any, meta: Mapping[str, Any]) -> dict[str, str]:
    """The provenance entries, in reading order; ``meta`` (wall time of the check, jobs, ...) is added."""

    out = {
        "ratecheck": f"{__version__}, commit {git_commit()}",
        "command": _command(),
        "profile": f"{profile.name} ({profile.replicas} replicas, round scale {profile.scale:g})",
        "seeds": seeds_text(outcomes),
        "python": f"{platform.python_version()} ({platform.python_implementation()}, {platform.system()})",
        "libraries": ", ".join(f"{name} {_version(name)}" for name in LIBRARIES),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    for key, value in meta.items():
        out.setdefault(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    return out


def _command() -> str:
    argv = list(sys.argv)
    if not argv or not argv[0]:
        return "(called from Python)"
    program = Path(argv[0])
    if program.name == "ratecheck" or program.parts[-2:] == ("ratecheck", "__main__.py"):
        return shlex.join(["ratecheck", *argv[1:]])
    return shlex.join([program.name, *argv[1:]])


class Clock:
    """Wall and CPU time since construction (the report's own cost is measured with it)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()

    def text(self) -> str:
        return f"{time.perf_counter() - self.wall:.1f} s wall, {cpu_seconds() - self.cpu:.1f} CPU-s"
