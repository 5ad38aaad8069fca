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

A record's ``__init__`` is compiled only when the class is used: until then a shared
one, built from the class's fields without compiling anything, does the same work
(defaults, default factories, ``__post_init__``, the same ``TypeError`` for a missing or
unexpected argument). After a few instances the generated ``__init__`` replaces it, so
a class made in bulk gets the fast one. A run imports many more classes than it
instantiates; most never pay for the compile at all.
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


# Instances made with the shared __init__ before the compiled one replaces it.
_COMPILE_AFTER = 16


def _compiled_init(cls: Any, frozen: bool) -> Callable[..., None]:
    """The ``__init__`` dataclasses generates for ``cls``: made for a field-less subclass,
    whose fields (inherited) are ``cls``'s, so ``cls`` itself is not processed twice."""
    stand_in = type(cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    made: Any = dataclasses.dataclass(stand_in, repr=False, eq=False, frozen=frozen)
    return cast(Callable[..., None], made.__dict__["__init__"])


def _missing_text(names: list[str]) -> str:
    """Python's wording for missing arguments: ``missing 2 required positional arguments: 'a' and 'b'``."""
    quoted = [repr(name) for name in names]
    if len(quoted) == 1:
        return f"missing 1 required positional argument: {quoted[0]}"
    listed = f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    return f"missing {len(quoted)} required positional arguments: {listed}"


def _staged_init(cls: Any, frozen: bool) -> Callable[..., None] | None:
    """An ``__init__`` for ``cls`` that does what the generated one does, without compiling,
    and installs the generated one after ``_COMPILE_AFTER`` instances. None when ``cls``
    has pseudo-fields (``ClassVar``, ``InitVar``): the generated one handles those."""
    every = dataclasses.fields(cls)
    if len(every) != len(cls.__dataclass_fields__):
        return None
    missing = dataclasses.MISSING
    # (name, takes an argument, default value, default factory), in field order.
    plan = tuple((f.name, f.init, f.default, f.default_factory) for f in every)
    parameters = tuple(f.name for f in every if f.init)
    accepted = frozenset(parameters)
    seen_default = False
    for name, init, default, factory in plan:
        if not init:
            continue
        if default is missing and factory is missing:
            if seen_default:  # the check dataclasses makes when it writes the __init__
                raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            seen_default = True
    required = sum(1 for _, init, default, factory in plan if init and default is missing and factory is missing)
    takes = f"{len(parameters) + 1}" if required == len(parameters) else f"from {required + 1} to {len(parameters) + 1}"
    assign = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")
    qualname = cls.__qualname__
    made = [0]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        made[0] += 1
        if made[0] == _COMPILE_AFTER and cls.__dict__.get("__init__") is __init__:
            cls.__init__ = _compiled_init(cls, frozen)
        if len(args) > len(parameters):
            raise TypeError(f"{qualname}.__init__() takes {takes} positional arguments but {len(args) + 1} were given")
        values = dict(zip(parameters, args, strict=False))  # fewer args than parameters: the rest by keyword
        for key in kwargs:
            if key not in accepted:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
        values.update(kwargs)
        absent = [name for name, init, default, factory in plan
                  if init and name not in values and default is missing and factory is missing]
        if absent:
            raise TypeError(f"{qualname}.__init__() {_missing_text(absent)}")
        for name, init, default, factory in plan:
            if init and name in values:
                assign(self, name, values[name])
            elif factory is not missing:
                assign(self, name, factory())
            elif init:
                assign(self, name, default)
            # a field without init and without a factory is left to its class attribute, as
            # the generated __init__ does
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


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
        made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=frozen)
        if "__init__" not in body:
            made.__init__ = _staged_init(made, frozen) or _compiled_init(made, frozen)
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
