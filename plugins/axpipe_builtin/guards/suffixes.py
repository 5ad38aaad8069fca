"""The files each built-in guard reads, in one place.

The guards' entry points (:mod:`.entry`) hand these to the guard runner, which chooses the
changed files before any guard's code loads; the guards themselves use the same tuples, so
the two cannot drift apart.
"""

from __future__ import annotations

PYTHON_CONFIG_FILES = ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
PYTHON_FILES = (".py", *PYTHON_CONFIG_FILES)
JAVASCRIPT_FILES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", "package.json", ".mocharc.json", ".mocharc.yml",
                    ".mocharc.yaml")
CONDITION_FILES = ("",)  # any file may be a script, a Makefile, a linter's config
