"""Dataclasses that are cheaper to create: :func:`record`.

On Python 3.11, ``@dataclass`` compiles every method it generates from source, one
``exec`` each, when the class statement runs: ``__init__``, ``__repr__`` and ``__eq__``,
and for a frozen class ``__setattr__``, ``__delattr__`` and ``__hash__`` too. That is
0.5 to 1.2 ms a class, and ``axpipe run`` creates over forty of them before its first
phase: class creation was the largest part of what axpipe adds to Hydra's start-up
(docs/performance.md).

A record is a real dataclass (``dataclasses.fields``, ``asdict``, ``replace`` and field
metadata work as usual) whose ``__init__`` (and a frozen record's ``__setattr__`` and
``__delattr__``) is generated as usual, and whose ``__repr__``, ``__eq__`` and
``__hash__`` are the shared functions below, reading the field names each class
settled when it was made. They give the results the generated ones would: the same repr
text, equality field by field between instances of the same class, and a frozen record
hashes its compared fields while a mutable one is unhashable. ``record`` takes only
``frozen``; a class that needs ``order``, ``slots`` or ``kw_only`` stays a dataclass.
"""

from __future__ import annotations

import _thread
import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform, overload

_T = TypeVar("_T", bound=type)


class _Fields:
    """What a record's shared methods read, settled once per class (a plain class: a
    NamedTuple here would cost the compile this module exists to save)."""

    __slots__ = ("compared", "hashed", "shown")

    def __init__(self, shown: tuple[str, ...], compared: Callable[[Any], tuple[Any, ...]],
                 hashed: Callable[[Any], tuple[Any, ...]]) -> None:
        self.shown = shown  # names in the repr
        self.compared = compared  # the values __eq__ compares
        self.hashed = hashed  # the values __hash__ hashes


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _: ()
    get = attrgetter(*names)
    if len(names) == 1:
        return lambda instance: (get(instance),)
    return cast(Callable[[Any], tuple[Any, ...]], get)


_repr_running: set[tuple[int, int]] = set()  # (record, thread) whose repr is being built


def _repr(self: Any) -> str:
    key = (id(self), _thread.get_ident())
    if key in _repr_running:  # a record that contains itself, shown as dataclasses show it
        return "..."
    _repr_running.add(key)
    try:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_fields__.shown)
        return f"{type(self).__qualname__}({shown})"
    finally:
        _repr_running.discard(key)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        compared = self.__record_fields__.compared
        return compared(self) == compared(other)
    return NotImplemented


# pytest shows a field-by-field diff for a dataclass whose __eq__ was generated, which it
# recognises by the "<string>" file name of generated code; this is that __eq__ but for
# the name, and a failing comparison of records deserves the same diff.
_eq.__code__ = _eq.__code__.replace(co_filename="<string>")


def _hash(self: Any) -> int:
    return hash(self.__record_fields__.hashed(self))


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
        fields = dataclasses.fields(made)
        made.__record_fields__ = _Fields(
            shown=tuple(f.name for f in fields if f.repr),
            compared=_values(tuple(f.name for f in fields if f.compare)),
            hashed=_values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))))
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
