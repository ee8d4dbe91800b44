"""``python -m ratecheck``: the same as the ``ratecheck`` command (useful inside a git worktree)."""

import sys

from .interfaces.cli import main

sys.exit(main())
