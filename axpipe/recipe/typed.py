"""Turn composed configuration into typed schema objects, collecting every problem at once.

:func:`build` is the generic part: it walks a dataclass schema (see :mod:`axpipe.recipe.schema`),
checks types, ranges, choices and unknown keys, and returns the typed object together with
the list of :class:`~axpipe.errors.Problem` found. Plugins reuse it for their own params.
:func:`validate_recipe` adds the cross-field rules of a recipe and raises one
:class:`~axpipe.errors.ConfigError` listing everything.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from axpipe.clock import fast
from axpipe.duration import DurationError, format_duration, parse_duration
from axpipe.errors import Problem, did_you_mean
from axpipe.recipe import schema

SourceLocator = Callable[[str], "str | None"]
"""Maps a config path to where its value came from (a file, or "command line")."""

_PARAMS_SECTIONS = (schema.CheckSpec, schema.AgentSpec, schema.SuccessSpec, schema.ReviewerSpec, schema.ReviewRole)


class Collector:
    def __init__(self, locate: SourceLocator | None) -> None:
        self.problems: list[Problem] = []
        self._locate = locate
        self._invalid: set[str] = set()
        self.defaulted: set[str] = set()  # wrong-typed lists and mappings replaced by their default

    def add(self, path: str, message: str) -> None:
        # A value that already failed its type check is not reported again by the rules
        # that depend on it; other rules may each report their own problem with a path.
        if path in self._invalid:
            return
        source = self._locate(path) if self._locate else None
        self.problems.append(Problem(path=path, message=message, source=source))

    def invalid(self, path: str, message: str) -> None:
        """A value of the wrong type or out of range: reported once, then left alone."""
        self.add(path, message)
        self._invalid.add(path)


def build(cls: type, data: Any, *, path: str = "", locate: SourceLocator | None = None,
          extra_into_params: bool = True) -> tuple[Any, list[Problem]]:
    """Validate ``data`` against dataclass ``cls``; return the object and the problems found."""
    collector = Collector(locate)
    value = build_dataclass(cls, data, path, collector, extra_into_params)
    return value, collector.problems


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _is_container(tp: Any) -> bool:
    """A list, a mapping or a section that may not be null (the rules iterate or read it)."""
    return typing.get_origin(tp) in (list, dict) or dataclasses.is_dataclass(tp)


def _has_default(spec_field: dataclasses.Field[Any]) -> bool:
    return spec_field.default_factory is not dataclasses.MISSING or (
        spec_field.default is not dataclasses.MISSING and spec_field.default is not schema.REQUIRED)


def _default(spec_field: dataclasses.Field[Any]) -> Any:
    if spec_field.default_factory is not dataclasses.MISSING:
        return spec_field.default_factory()
    return spec_field.default


def build_dataclass(cls: type, data: Any, path: str, out: Collector, extra_into_params: bool) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        out.add(path, f"expected a mapping, got {_describe(data)}")
        return None
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, raw in data.items():
        if not isinstance(key, str):
            out.add(path, f"keys must be strings, got {_describe(key)}")
            continue
        if key not in fields:
            if extra_into_params and "params" in fields:
                extra[key] = raw
                continue
            out.add(_join(path, key), f"unknown key{did_you_mean(key, fields)}; allowed keys: {', '.join(fields)}")
            continue
        value = _coerce(hints[key], raw, _join(path, key), fields[key].metadata, out, extra_into_params)
        if value is None and _is_container(hints[key]) and _has_default(fields[key]):
            # The problem is recorded; the list or mapping keeps its default, so the
            # cross-field rules that run next iterate it instead of crashing on None.
            value = _default(fields[key])
            out.defaulted.add(_join(path, key))
        values[key] = value
    for name, spec_field in fields.items():
        if name in values:
            continue
        if spec_field.default is schema.REQUIRED or (
                spec_field.default is dataclasses.MISSING and spec_field.default_factory is dataclasses.MISSING):
            out.add(_join(path, name), f"missing required key ({spec_field.metadata.get('doc', '')})")
            values[name] = None
    if extra:
        params = dict(values.get("params") or {})
        clash = sorted(set(params) & set(extra))
        for key in clash:
            out.add(_join(path, key), "given both inline and under params")
        params.update(extra)
        values["params"] = params
    try:
        return cls(**values)
    except TypeError as error:  # a required field left unset above; the problem is recorded
        out.add(path, str(error))
        return None


def _coerce(tp: Any, raw: Any, path: str, meta: Mapping[str, Any], out: Collector,
            extra_into_params: bool) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if raw is None and type(None) in options:
            return None
        non_none = [option for option in options if option is not type(None)]
        if len(non_none) == 1:
            return _coerce(non_none[0], raw, path, meta, out, extra_into_params)
        # Several shapes (a mapping or a list of them): the value's own shape picks one.
        wanted = list if isinstance(raw, list) else dict if isinstance(raw, Mapping) else None
        shapes = [typing.get_origin(option) or (dict if dataclasses.is_dataclass(option) else option)
                  for option in non_none]
        for option, shape in zip(non_none, shapes, strict=True):
            if shape is wanted:
                return _coerce(option, raw, path, meta, out, extra_into_params)
        if all(shape in (list, dict) for shape in shapes):
            names = " or ".join(dict.fromkeys("a list" if shape is list else "a mapping" for shape in shapes))
            out.invalid(path, f"expected {names}, got {_describe(raw)}")
            return None
    if meta.get("strict_int"):
        return _guarded_int(raw, path, meta, out)
    if raw is None:
        out.invalid(path, "must not be null")
        return None
    if tp is schema.Duration:
        return _coerce_duration(raw, path, meta, out)
    if tp is schema.Command:
        return _coerce_command(raw, path, out)
    if tp is Any:
        return raw
    if dataclasses.is_dataclass(tp):
        return build_dataclass(tp, raw, path, out, extra_into_params)  # type: ignore[arg-type]
    if origin is list:
        (item_type,) = typing.get_args(tp)
        if not isinstance(raw, list):
            out.invalid(path, f"expected a list, got {_describe(raw)}")
            return None
        return [_coerce(item_type, item, f"{path}[{index}]", {}, out, extra_into_params)
                for index, item in enumerate(raw)]
    if origin is dict:
        _, value_type = typing.get_args(tp)
        if not isinstance(raw, Mapping):
            out.invalid(path, f"expected a mapping, got {_describe(raw)}")
            return None
        allowed = meta.get("keys")
        result = {}
        for key, item in raw.items():
            key_path = _join(path, str(key))
            if allowed is not None and key not in allowed:
                out.invalid(key_path, f"unknown key; allowed keys: {', '.join(allowed)}")
                continue
            result[str(key)] = _coerce(value_type, item, key_path, {}, out, extra_into_params)
        return result
    if tp is bool:
        if not isinstance(raw, bool):
            out.invalid(path, f"expected true or false, got {_describe(raw)}")
            return None
        return raw
    if tp is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            out.invalid(path, f"expected an integer, got {_describe(raw)}")
            return None
        return _check_bounds(raw, path, meta, out, str)
    if tp is float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            out.invalid(path, f"expected a number, got {_describe(raw)}")
            return None
        return _check_bounds(float(raw), path, meta, out, str)
    if tp is str:
        if not isinstance(raw, str):
            out.invalid(path, f"expected a string, got {_describe(raw)} (quote it in YAML)")
            return None
        choices = meta.get("choices")
        if choices and raw not in choices:
            out.invalid(path, f"{raw!r} is not one of {', '.join(choices)}")
            return None
        if meta.get("regex"):
            try:
                re.compile(raw)
            except re.error as error:
                out.invalid(path, f"not a valid regular expression: {error}")
                return None
        return raw
    raise TypeError(f"schema type {tp!r} at {path} is not supported")  # a bug in the schema


def _guarded_int(raw: Any, path: str, meta: Mapping[str, Any], out: Collector) -> Any:
    """A guard value (repair.budget): an integer in range or an error naming the guard; never clamped."""
    name = path.rsplit(".", 1)[-1]
    low, high = meta["min"], meta["max"]
    if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
        out.invalid(path, f"{name} must be an integer from {low} to {high}, got {raw!r}")
        return None
    return raw

def bounds(meta: Mapping[str, Any]) -> tuple[Any, Any]:
    """A field's ``(min, max)``. A field with ``testing_min`` (``loop.interval``) may go down to
    it while the testing switch ``AXPIPE_TESTING_FAST`` is on (docs/loops.md), never otherwise."""
    low = meta.get("min")
    if meta.get("testing_min") is not None and fast():
        low = meta["testing_min"]
    return low, meta.get("max")


def _check_bounds(value: Any, path: str, meta: Mapping[str, Any], out: Collector,
                  show: Callable[[Any], str]) -> Any:
    low, high = bounds(meta)
    if low is not None and value < low:
        out.invalid(path, f"{show(value)} is below the minimum {show(low)}")
        return None
    if high is not None and value > high:
        out.invalid(path, f"{show(value)} is above the maximum {show(high)}")
        return None
    return value


def _coerce_duration(raw: Any, path: str, meta: Mapping[str, Any], out: Collector) -> Any:
    try:
        seconds = parse_duration(raw)
    except DurationError as error:
        out.invalid(path, str(error))
        return None
    shown = {"value": raw}

    def show(value: float) -> str:
        return str(shown["value"]) if value == seconds else format_duration(value)

    return _check_bounds(seconds, path, meta, out, show)


def _coerce_command(raw: Any, path: str, out: Collector) -> Any:
    if isinstance(raw, str):
        if not raw.strip():
            out.invalid(path, "command is empty")
            return None
        return raw
    if isinstance(raw, list) and raw and all(isinstance(part, str) for part in raw):
        return list(raw)
    out.invalid(path, f"expected a command (a string or a non-empty list of strings), got {_describe(raw)}")
    return None


def load_plugin_params(kind_object: Any, params: Mapping[str, Any], path: str,
                       locate: SourceLocator | None) -> tuple[Any, list[Problem]]:
    """Validate a plugin's params against its ``params_schema`` dataclass, if it declares one."""
    params_schema = getattr(kind_object, "params_schema", None)
    if params_schema is None:
        if params:
            collector = Collector(locate)
            for key in params:
                collector.add(_join(path, key), "unknown key; this kind takes no parameters")
            return dict(params), collector.problems
        return {}, []
    return build(params_schema, dict(params), path=path, locate=locate, extra_into_params=False)

