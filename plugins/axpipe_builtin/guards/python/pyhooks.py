"""pytest hooks and autouse fixtures that stop tests from running or from failing.

A ``conftest.py`` (or any plugin module) can hide a failure without touching a test:
``pytest_collection_modifyitems`` marking every item skipped or emptying ``items``,
``pytest_ignore_collect`` returning True, ``pytest_runtest_setup`` calling
``pytest.skip()``, an autouse fixture that skips, ``pytest_pyfunc_call`` or
``pytest_runtest_protocol`` answering for a test without running it, a report hook that
rewrites a failure as a pass. Each such construct becomes a :class:`ScopeMarker` (scope
``hook``) keyed by the hook and the construct's source, so only a construct the change
added is reported. Hooks that do something else (register markers, add options, order
items, mark items ``slow``) and fixtures that only set things up are not.
"""

from __future__ import annotations

import ast

from ..model import Marker, ModuleFacts, ScopeMarker
from .pyatoms import dotted

# calls that skip, expect failure or end the run wherever they are made
_STOPPING = {"skip": "skip", "xfail": "skip", "importorskip": "skip", "exit": "exit", "_exit": "exit"}
_STOPPING_OWNERS = ("pytest", "sys", "os", "")
_SKIP_ERRORS = ("Skipped", "SkipTest", "skip.Exception", "xfail.Exception")
_EXIT_ERRORS = ("Exit", "exit.Exception", "SystemExit")
# a report or the session's result, rewritten
_VERDICT_FIELDS = {"outcome": "pass", "longrepr": "pass", "wasxfail": "pass", "exitstatus": "exit",
                   "testsfailed": "exit", "shouldstop": "exit"}
# options that, set from code, change what runs (the same ones the config rules report)
_SELECTING_OPTIONS = {"collectonly", "deselect", "keyword", "markexpr", "ignore", "ignore_glob", "lf", "last_failed",
                      "setuponly", "setupplan", "stepwise", "stepwise_skip"}
# firstresult hooks that, answering for a test, stop pytest from running it
_ANSWERING = {"pytest_pyfunc_call": ("obj", "runtest", "function"),
              "pytest_runtest_protocol": ("runtestprotocol", "runtest", "call_and_report")}
_EFFECT = {"skip": "skips tests", "deselect": "removes tests from the run",
           "pass": "reports tests as passed without running them or without their failures",
           "exit": "ends the run early or overrides its exit status"}


def extract_hooks(tree: ast.Module, facts: ModuleFacts, *, conftest: bool) -> None:
    """Add a ``hook`` scope marker for every construct in ``tree`` that hides tests."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            where = node.name if node.name.startswith("pytest_") else (
                f"autouse fixture {node.name}" if _autouse(node) else None)
            if where is not None:
                for kind, line, text in _hiding(node):
                    _add(facts, where, kind, line, text)
        elif conftest and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            # pytest.skip(allow_module_level=True) in a conftest.py skips its whole folder
            stops = _stopping(node.value)
            if stops:
                _add(facts, "conftest.py at module level", stops, node.lineno, ast.unparse(node.value))


def _add(facts: ModuleFacts, where: str, kind: str, line: int, text: str) -> None:
    facts.scope_markers.append(ScopeMarker("hook", Marker(kind, line, f"{where}: {text}"[:200]), [_EFFECT[kind]]))


def _autouse(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(decorator, ast.Call) and dotted(decorator.func).rsplit(".", 1)[-1] == "fixture"
               and any(keyword.arg == "autouse" and not (isinstance(keyword.value, ast.Constant)
                                                         and not keyword.value.value)
                       for keyword in decorator.keywords)
               for decorator in node.decorator_list)


def _stopping(call: ast.Call) -> str | None:
    parts = dotted(call.func).split(".")
    owner = parts[-2] if len(parts) > 1 else ""
    return _STOPPING.get(parts[-1]) if owner in _STOPPING_OWNERS and parts[-1] in _STOPPING else None


def _hiding(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, int, str]]:
    """(kind, line, source) of each construct in ``function`` that hides tests."""
    found: list[tuple[str, int, str]] = []
    params = {arg.arg for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    items = "items" if "items" in params else None
    for node in ast.walk(function):
        kind = _construct(node, items)
        if kind:
            found.append((kind, getattr(node, "lineno", function.lineno), ast.unparse(node)))
    if function.name == "pytest_ignore_collect":
        found.extend(("deselect", node.lineno, ast.unparse(node)) for node in ast.walk(function)
                     if isinstance(node, ast.Return) and _truthy(node.value))
    if function.name in _ANSWERING and _answers_without_running(function):
        found.append(("pass", function.lineno, f"def {function.name}(...) answers without running the test"))
    return found


def _construct(node: ast.AST, items: str | None) -> str | None:
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if _stopping(node):
            return "skip"
        if last == "add_marker" and any(word in ast.unparse(arg) for arg in node.args for word in ("skip", "xfail")):
            return "skip"
        if items and name in (f"{items}.clear", f"{items}.remove", f"{items}.pop"):
            return "deselect"
        if last == "pytest_deselected" or last == "force_result" or last == "force_exception":
            return "deselect" if last == "pytest_deselected" else "pass"
        if last == "setattr" and len(node.args) >= 2 and dotted(node.args[0]).endswith("option") and \
                isinstance(node.args[1], ast.Constant) and node.args[1].value in _SELECTING_OPTIONS:
            return "deselect"
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = dotted(node.exc.func if isinstance(node.exc, ast.Call) else node.exc)
        if raised.endswith(_SKIP_ERRORS):
            return "skip"
        if raised.endswith(_EXIT_ERRORS):
            return "exit"
    if isinstance(node, ast.Delete) and items and any(
            isinstance(target, ast.Subscript) and dotted(target.value) == items for target in node.targets):
        return "deselect"
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if items and isinstance(target, ast.Subscript) and dotted(target.value) == items:
                return "deselect"   # items[:] = [...]
            if isinstance(target, ast.Attribute):
                if target.attr in _VERDICT_FIELDS:
                    return _VERDICT_FIELDS[target.attr]
                if target.attr in _SELECTING_OPTIONS and dotted(target.value).endswith("option"):
                    return "deselect"
                if target.attr == "args" and dotted(target.value).endswith("config"):
                    return "deselect"
    return None


def _answers_without_running(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A firstresult hook returning a value without touching what runs the test."""
    runners = _ANSWERING[function.name]
    returns_value = any(isinstance(node, ast.Return) and _truthy(node.value) for node in ast.walk(function))
    runs = any(isinstance(node, ast.Attribute | ast.Name) and (
        node.attr if isinstance(node, ast.Attribute) else node.id) in runners for node in ast.walk(function))
    return returns_value and not runs


def _truthy(value: ast.expr | None) -> bool:
    """A returned value that may be truthy: anything but nothing, None or False."""
    return value is not None and not (isinstance(value, ast.Constant) and value.value in (None, False))
