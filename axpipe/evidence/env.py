"""The environment of every command axpipe runs for its own evidence.

Checks (receipts and repair conditions), gate phases and their baseline runs, test
adapters (receipt verification) and the probe run the project's code to prove something
about it. DESIGN §8: they leave the checkout as they found it, and what they prove is about
the source as it is now. :func:`variables` is what their environment gets on top of what
it would otherwise be:

==========================  ===========================================================
``PYTHONPYCACHEPREFIX``     axpipe's bytecode cache (:func:`axpipe.evidence.bytecode.evidence_prefix`):
                            Python writes no ``__pycache__/`` into the checkout and reads
                            none from it, so bytecode left there (outdated, or planted) is
                            never what runs
``PYTHONDONTWRITEBYTECODE`` empty (off): the cache is written, so the standard library and
                            installed packages are compiled once, not on every run
``PYTEST_ADDOPTS``          ``-p no:cacheprovider`` before the inherited value: no
                            ``.pytest_cache/`` in the checkout, and no test chosen from a
                            cache (``--lf``, ``--sw`` become usage errors)
``RUFF_CACHE_DIR``,         folders in axpipe's cache (mypy's per project, as it keys its
``MYPY_CACHE_DIR``          cache by module name): no ``.ruff_cache/``, ``.mypy_cache/``
==========================  ===========================================================

Agents, reviewers and loop commands are work, not evidence: they get none of this. The
report files axpipe asks for (JUnit XML, JSON reports) are written under ``.axpipe/``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from axpipe import workspace
from axpipe.evidence import bytecode

NO_PYTEST_CACHE = "-p no:cacheprovider"


def variables(root: Path, inherited: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to set for an evidence command run for the checkout at ``root``, whose
    environment would otherwise be ``inherited`` (default: this process's).

    Outdated entries of the bytecode cache for ``root``'s work tree are forgotten first
    (:func:`axpipe.evidence.bytecode.forget_racy`), so call it right before the command runs."""
    top = workspace.git_top(root) or root.resolve()
    bytecode.forget_racy(top)
    prefix = bytecode.evidence_prefix()
    cache = prefix.parent
    addopts = (inherited if inherited is not None else os.environ).get("PYTEST_ADDOPTS", "")
    if NO_PYTEST_CACHE not in addopts:
        addopts = f"{NO_PYTEST_CACHE} {addopts}".strip()
    project = hashlib.sha256(os.fsencode(str(top))).hexdigest()[:16]
    return {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "", "PYTEST_ADDOPTS": addopts,
            "RUFF_CACHE_DIR": str(cache / "ruff"), "MYPY_CACHE_DIR": str(cache / "mypy" / project)}


def environment(root: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with :func:`variables` applied: the
    whole environment of an evidence command."""
    inherited = dict(os.environ if base is None else base)
    return {**inherited, **variables(root, inherited)}
