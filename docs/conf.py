"""Sphinx configuration: MyST Markdown pages, autodoc of the public API, and reference pages generated
from the registry's declarations (ratecheck.docs_ext). Built in CI with warnings as errors:
`python -m sphinx -W -n -b html docs docs/_build/html`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's ratecheck, problems and proofs
sys.path.insert(0, str(ROOT / "examples" / "fedavg_momentum"))  # the worked example, documented as-is

project = "ratecheck"
author = "the ratecheck authors"
# myst_nb reads the MyST pages (through myst_parser) and executes the notebook pages (notebook.md,
# gallery.md) at build time: what they show is what this checkout computes
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "ratecheck.docs_ext"]
myst_enable_extensions = ["colon_fence"]  # no math: the pages read offline, without MathJax
exclude_patterns = ["_build", "jupyter_execute"]
nb_execution_mode = "cache"  # executed once per change of a notebook's code (jupyter-cache, in the build folder)
nb_execution_timeout = 600
nb_execution_raise_on_error = True  # a cell that raises fails the build, like a warning
nb_execution_show_tb = True
nb_output_stderr = "remove"  # progress-bar notices of the kernel, not the page's content
html_theme = "furo"
html_title = "ratecheck"
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
# every reference to a parameter, family, theorem or claim must resolve (a renamed one fails the build);
# Python type references are not checked (numpy, sympy and typing names have no docs here)
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r".*")]
suppress_warnings = ["myst.header"]
