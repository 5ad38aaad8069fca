"""The built-in guards' entry points: light classes that load the guard code on first use.

``plugins list`` imports every plugin to find broken ones, and the guards' parsers and
judges are most of that cost; here they are imported only when a change is judged. The
``suffixes`` come from :mod:`.suffixes`, as the implementations' do: the guard runner reads
them to choose files before any guard runs.
"""

from __future__ import annotations

import importlib
from typing import Any

from .suffixes import CONDITION_FILES, JAVASCRIPT_FILES, PYTHON_FILES


class _Deferred:
    params_schema = None
    suffixes: tuple[str, ...] = ()
    _implementation = ""  # "module:Class"

    def __init__(self) -> None:
        self._guard: Any = None

    def _load(self) -> Any:
        if self._guard is None:
            module, _, name = self._implementation.partition(":")
            self._guard = getattr(importlib.import_module(module), name)()
        return self._guard

    def describe(self) -> str:
        return str(self._load().describe())

    def check(self, changes: Any, context: Any) -> Any:
        return self._load().check(changes, context)

    def __getattr__(self, name: str) -> Any:  # anything else the implementation offers
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._load(), name)


class PythonGuard(_Deferred):
    """Python tests and code, judged on their ASTs (see :mod:`axpipe_builtin.guards.python`)."""

    suffixes = PYTHON_FILES
    _implementation = "axpipe_builtin.guards.python:PythonGuard"


class JavaScriptGuard(_Deferred):
    """JavaScript and TypeScript tests and code, judged on tokens (:mod:`axpipe_builtin.guards.javascript`)."""

    suffixes = JAVASCRIPT_FILES
    _implementation = "axpipe_builtin.guards.javascript:JavaScriptGuard"


class ConditionGuard(_Deferred):
    """The success condition's own definition: scripts, runner files, linter configuration
    (see :mod:`axpipe_builtin.guards.condition`)."""

    suffixes = CONDITION_FILES
    name = "condition"
    _implementation = "axpipe_builtin.guards.condition:ConditionGuard"
