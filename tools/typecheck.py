#!/usr/bin/env python3
"""mypy over the package as it installs (run from the checkout's root; arguments go to mypy).

    python tools/typecheck.py [MYPY ARGS]

problems/ and proofs/ install as ratecheck.problems and ratecheck.proofs (setup.py's package-dir
mapping; ratecheck/__init__.py maps them in a checkout), which mypy cannot see: it reads files, not
import hooks. So mypy reads a temporary tree of symbolic links shaped as the installed package
(``ratecheck/`` with ``problems`` and ``proofs`` inside), with the settings of pyproject.toml, and
the paths it prints are mapped back to the checkout. Without the mapping (problems and proofs as
top-level packages) this is plain ``python -m mypy``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

NAMESPACED = ("problems", "proofs")


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if "_checkout_packages" not in (root / "ratecheck" / "__init__.py").read_text():
        return subprocess.call([sys.executable, "-m", "mypy", *argv])
    with tempfile.TemporaryDirectory(prefix="ratecheck-typecheck-") as tmp:
        tree = Path(tmp) / "ratecheck"
        tree.mkdir()
        for entry in (root / "ratecheck").iterdir():
            if entry.name != "__pycache__":
                os.symlink(entry, tree / entry.name)
        for name in NAMESPACED:
            os.symlink(root / name, tree / name)
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(root / "pyproject.toml"),
               "--cache-dir", str(root / ".mypy_cache"), *argv, str(tree)]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        for name in NAMESPACED:  # tmp/ratecheck/problems/x.py -> problems/x.py, tmp/ratecheck/x.py -> ratecheck/x.py
            done.stdout = done.stdout.replace(f"ratecheck/{name}/", f"{name}/")
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
