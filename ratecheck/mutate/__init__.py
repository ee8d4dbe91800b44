"""``ratecheck mutate``: single-token mutants of a module (``mutants``), served in place of the module
without touching its file (``hook``), scored by the claims that use it (``command``, ``runner``).
Kept free of imports: ``ratecheck/__init__.py`` imports ``hook`` from here when a mutant is set."""
