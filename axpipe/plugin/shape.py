"""What a loaded plugin object must have, checked when it is loaded (DESIGN §10).

A plugin that imports fine but lacks a method its protocol needs, or declares a
``params_schema`` axpipe cannot validate, would otherwise fail in the middle of a run as
an "internal error". :func:`problems` finds that up front, so ``plugins list`` shows the
plugin as broken with the reason and a recipe naming it is refused before anything runs.

The protocols themselves are documented once, in :mod:`axpipe.interfaces`; this module
only knows the names each one requires. It imports nothing heavy: ``plugins list`` calls
it for every plugin, and reads a ``params_schema`` that is a property (the built-in
reviewers build theirs on first use) only when a run loads the plugin (``deep``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

# namespace -> (protocol name, attributes, methods), as in axpipe/interfaces/<kind>.py
REQUIRED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "axpipe.checks": ("CheckKind", ("params_schema", "needs_command"), ("describe", "run")),
    "axpipe.agents": ("Agent", ("params_schema",), ("run",)),
    "axpipe.reviewers": ("Reviewer", ("params_schema",), ("output_format", "prompt_template", "invocation")),
    "axpipe.receipt_verifiers": ("ReceiptVerifier", (), ("verify",)),
    "axpipe.test_adapters": ("TestAdapter", ("suffixes",), ("run",)),
    "axpipe.guards": ("Guard", ("params_schema", "suffixes"), ("describe", "check")),
    "axpipe.deliverers": ("Deliverer", ("params_schema",), ("open",)),
}

_MISSING = object()
_SCALARS = (bool, int, float, str)
_SCHEMA_TYPES = ("Duration", "Command")  # axpipe.recipe.schema's NewTypes the validator reads


def protocol_name(namespace: str) -> str | None:
    entry = REQUIRED.get(namespace)
    return entry[0] if entry else None


def _static(plugin: object, name: str) -> Any:
    """``name`` on ``plugin`` without running a property (as ``inspect.getattr_static``)."""
    own = getattr(plugin, "__dict__", None)
    if isinstance(own, dict) and name in own:
        return own[name]
    for klass in type(plugin).__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


def problems(namespace: str, plugin: object, *, deep: bool) -> list[str]:
    """What ``plugin`` lacks for its namespace's protocol, in words; empty when it conforms.
    ``deep`` also reads attributes that are properties (``params_schema`` built on use)."""
    if namespace not in REQUIRED:
        return []
    _, attributes, methods = REQUIRED[namespace]
    found: list[str] = []
    for name in methods:
        value = _static(plugin, name)
        if value is _MISSING:
            found.append(f"it has no {name}() method")
        elif not (callable(value) or isinstance(value, (staticmethod, classmethod, property))):
            found.append(f"{name} is {type(value).__name__}, not a method")
    for name in attributes:
        value = _static(plugin, name)
        if value is _MISSING:
            found.append(f"it has no `{name}` attribute")
            continue
        if hasattr(value, "__get__") and not isinstance(value, type) and not callable(value):
            if not deep:
                continue  # a property: read when a run loads the plugin
            try:
                value = getattr(plugin, name)
            except (Exception, SystemExit) as error:
                found.append(f"reading `{name}` raised {type(error).__name__}: {error}")
                continue
        problem = _attribute_problem(name, value)
        if problem:
            found.append(problem)
    return found


def _attribute_problem(name: str, value: Any) -> str | None:
    if name == "needs_command" and not isinstance(value, bool):
        return f"`needs_command` is {type(value).__name__} {value!r}, not True or False"
    if name == "suffixes" and (not isinstance(value, (tuple, list)) or not all(isinstance(s, str) for s in value)):
        return f"`suffixes` is {type(value).__name__} {value!r}, not a tuple of file name endings"
    if name == "params_schema":
        return schema_problem(value)
    return None


def schema_problem(params_schema: Any) -> str | None:
    """Why ``params_schema`` cannot describe a plugin's parameters, or None: it must be None
    or a dataclass whose fields have types recipe values can be checked against, and whose
    defaults can be written into the frozen contract (JSON)."""
    if params_schema is None:
        return None
    if not (isinstance(params_schema, type) and dataclasses.is_dataclass(params_schema)):
        return (f"`params_schema` is {type(params_schema).__name__} {_short(params_schema)}, not a dataclass "
                "(or None when the plugin takes no parameters)")
    return _dataclass_problem(params_schema, "params_schema", set())


def _dataclass_problem(cls: type, where: str, seen: set[type]) -> str | None:
    if cls in seen:
        return None
    seen.add(cls)
    try:
        hints = typing.get_type_hints(cls)
    except Exception as error:  # a name only imported under TYPE_CHECKING, a typo
        return f"the annotations of `{where}` ({cls.__qualname__}) cannot be resolved: {type(error).__name__}: {error}"
    for spec in dataclasses.fields(cls):
        path = f"{where}.{spec.name}"
        unsupported = _type_problem(hints.get(spec.name, Any), seen, path)
        if unsupported:
            return unsupported
        default = _default(spec)
        if default is not _MISSING and not _json_like(default):
            return (f"field `{path}` has the default {_short(default)} ({type(default).__name__}), which the frozen "
                    "contract cannot hold: use None, a bool, number, string, list or mapping")
    return None


def _default(spec: dataclasses.Field[Any]) -> Any:
    if spec.default_factory is not dataclasses.MISSING:
        try:
            return spec.default_factory()
        except Exception:
            return _MISSING  # reported when the plugin is used with the field left out
    if spec.default is dataclasses.MISSING or type(spec.default) is object:  # schema.REQUIRED
        return _MISSING
    return spec.default


def _type_problem(tp: Any, seen: set[type], path: str) -> str | None:
    """None when the validator (:func:`axpipe.recipe.typed._coerce`) can check values of ``tp``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(tp):
            if option is not type(None):
                problem = _type_problem(option, seen, path)
                if problem:
                    return problem
        return None
    if tp is Any or tp in _SCALARS:
        return None
    if getattr(tp, "__module__", None) == "axpipe.recipe.schema" and getattr(tp, "__name__", None) in _SCHEMA_TYPES:
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_problem(tp, path, seen)
    if origin is list and len(typing.get_args(tp)) == 1:
        return _type_problem(typing.get_args(tp)[0], seen, path + "[]")
    if origin is dict and len(typing.get_args(tp)) == 2 and typing.get_args(tp)[0] is str:
        return _type_problem(typing.get_args(tp)[1], seen, path + "[]")
    shown = tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")
    return (f"field `{path}` has the type {shown}, which recipe values cannot be checked against: use bool, int, "
            "float, str, list[...], dict[str, ...], a dataclass, or Optional of these")


def _json_like(value: Any) -> bool:
    if value is None or isinstance(value, _SCALARS):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_like(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_like(item) for key, item in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(_json_like(getattr(value, spec.name)) for spec in dataclasses.fields(value))
    return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
