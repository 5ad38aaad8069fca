"""Dataclasses that are cheaper to create: :func:`record`.

On Python 3.11, ``@dataclass`` compiles every method it generates from source, one
``exec`` each, when the class statement runs: ``__init__``, ``__repr__`` and ``__eq__``,
and for a frozen class ``__setattr__``, ``__delattr__`` and ``__hash__`` too. That is
0.5 to 1.2 ms a class, and ``axpipe run`` creates about fifty of them before its first
phase: class creation was the largest share of its start-up (docs/performance.md).

A record is a real dataclass (``dataclasses.fields``, ``asdict``, ``replace`` and field
metadata work as usual) whose ``__init__`` (and a frozen record's ``__setattr__`` and
``__delattr__``) is generated as usual, and whose ``__repr__``, ``__eq__`` and
``__hash__`` are the shared functions below. They give the results the generated ones
would: the same repr text, equality field by field between instances of the same class,
and a frozen record hashes its compared fields while a mutable one is unhashable.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast, dataclass_transform, overload

_T = TypeVar("_T", bound=type)
_in_repr = threading.local()  # ids of records whose repr is being built, per thread


def _shown(instance: Any) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(instance) if f.repr]


def _compared(instance: Any) -> tuple[Any, ...]:
    return tuple(getattr(instance, f.name) for f in dataclasses.fields(instance) if f.compare)


def _repr(self: Any) -> str:
    active: set[int] | None = getattr(_in_repr, "ids", None)
    if active is None:
        active = _in_repr.ids = set()
    if id(self) in active:  # a record that contains itself, as dataclasses' repr says it
        return "..."
    active.add(id(self))
    try:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in _shown(self))
        return f"{type(self).__qualname__}({fields})"
    finally:
        active.discard(id(self))


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)
                      if (f.compare if f.hash is None else f.hash)))


@overload
def record(cls: _T, /) -> _T: ...
@overload
def record(*, frozen: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """``@dataclass`` or ``@dataclass(frozen=True)``, with shared ``__repr__``, ``__eq__``
    and ``__hash__`` instead of generated ones."""

    def wrap(cls: _T) -> _T:
        body = dict(cls.__dict__)  # what the class statement itself defined
        made: Any = dataclasses.dataclass(cls, repr=False, eq=False, frozen=frozen)
        if "__repr__" not in body:
            made.__repr__ = _repr
        if "__eq__" not in body:
            made.__eq__ = _eq
        # As dataclass does with eq=True: unless the class defines __hash__ itself, a frozen
        # record hashes its compared fields and a mutable one cannot be hashed.
        if "__hash__" not in body or (body["__hash__"] is None and "__eq__" in body):
            made.__hash__ = _hash if frozen else None
        return cast(_T, made)

    return wrap if cls is None else wrap(cls)
