"""axpipe.records.record behaves as dataclasses.dataclass for what axpipe uses of it."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from axpipe.records import record


def twins(frozen: bool = False) -> tuple[type, type]:
    """The same class body made by dataclass and by record."""

    def body() -> dict[str, Any]:
        return {
            "__annotations__": {"name": "str", "count": "int", "tags": "list[str]", "note": "str | None",
                                "cache": "dict[str, int]"},
            "__doc__": "A sample.",
            "count": 0,
            "tags": field(default_factory=list),
            "note": field(default=None, repr=False),
            "cache": field(default_factory=dict, compare=False),
        }

    made = type("Sample", (), body())
    made.__module__ = __name__
    made.__qualname__ = "Sample"
    expected = dataclass(frozen=frozen)(made)
    ours_class = type("Sample", (), body())
    ours_class.__module__ = __name__
    ours_class.__qualname__ = "Sample"
    return expected, record(frozen=frozen)(ours_class)


@pytest.mark.parametrize("frozen", [False, True])
def test_repr_is_the_dataclass_repr(frozen: bool) -> None:
    expected, ours = twins(frozen)
    args = {"name": "a", "count": 2, "tags": ["x"], "note": "hidden"}
    assert repr(ours(**args)) == repr(expected(**args)) == "Sample(name='a', count=2, tags=['x'], cache={})"


@pytest.mark.parametrize("frozen", [False, True])
def test_equality_compares_the_compared_fields_of_the_same_class(frozen: bool) -> None:
    expected, ours = twins(frozen)
    for cls in (expected, ours):
        assert cls("a", 1) == cls("a", 1)
        assert cls("a", 1) != cls("a", 2)
        assert cls("a", 1, cache={"k": 1}) == cls("a", 1, cache={"k": 2})  # compare=False
        assert cls("a", 1, note="x") != cls("a", 1, note="y")  # repr=False is still compared
    assert ours("a") != expected("a")  # another class: not equal, as for two dataclasses
    assert (ours("a") == "a") is False


def test_a_mutable_record_cannot_be_hashed() -> None:
    _, ours = twins(frozen=False)
    with pytest.raises(TypeError, match="unhashable"):
        hash(ours("a"))


def test_a_frozen_record_hashes_like_the_frozen_dataclass_and_refuses_assignment() -> None:
    expected, ours = twins(frozen=True)
    assert hash(ours("a", 1, ("t",))) == hash(expected("a", 1, ("t",)))  # a tuple: hashable
    assert len({ours("a", 1, ()), ours("a", 1, ()), ours("b", 1, ())}) == 2
    instance = ours("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        instance.name = "b"  # type: ignore[misc]


def test_the_dataclass_machinery_still_works() -> None:
    _, ours = twins()
    instance = ours("a", 3, ["t"])
    assert dataclasses.is_dataclass(ours)
    assert [f.name for f in dataclasses.fields(ours)] == ["name", "count", "tags", "note", "cache"]
    assert dataclasses.asdict(instance) == {"name": "a", "count": 3, "tags": ["t"], "note": None, "cache": {}}
    assert dataclasses.replace(instance, count=4) == ours("a", 4, ["t"])
    assert ours("a").tags is not ours("a").tags  # default_factory


def test_a_record_that_contains_itself_is_shown_with_an_ellipsis() -> None:
    @record
    class Node:
        children: list[Any] = field(default_factory=list)

    node = Node()
    node.children.append(node)
    assert repr(node) == "test_a_record_that_contains_itself_is_shown_with_an_ellipsis.<locals>.Node(children=[...])"


def test_methods_the_class_defines_are_kept() -> None:
    @record(frozen=True)
    class Key:
        value: str

        def __repr__(self) -> str:
            return f"<{self.value}>"

        def __hash__(self) -> int:
            return 7

    assert repr(Key("k")) == "<k>"
    assert hash(Key("k")) == 7


def test_records_pickle() -> None:
    assert pickle.loads(pickle.dumps(PickledRecord("a", [1]))) == PickledRecord("a", [1])


@record
class PickledRecord:
    name: str
    items: list[int]


def test_a_subclass_compares_and_shows_the_fields_its_maker_settled() -> None:
    """As with dataclasses: a record subclass has its own fields; a plain dataclass
    subclass without eq and repr keeps its parent's methods, and so its parent's fields."""

    @record
    class Parent:
        a: int

    @record
    class Child(Parent):
        b: int = 0

    @dataclass(eq=False, repr=False)
    class Plain(Parent):
        b: int = 0

    assert repr(Child(1, 2)).endswith("Child(a=1, b=2)") and Child(1, 2) != Child(1, 3)
    assert repr(Plain(1, 2)).endswith("Plain(a=1)") and Plain(1, 2) == Plain(1, 3)
    assert Child(1) != Parent(1)  # another class


def test_pytest_shows_a_field_by_field_diff_for_records(tmp_path: Path) -> None:
    """pytest explains a failed == between dataclasses field by field; records get the same."""
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        from axpipe.records import record

        @record
        class Pair:
            left: int
            right: str

        def test_pairs():
            assert Pair(1, "x") == Pair(1, "y")
    """))
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"],
                               cwd=tmp_path, capture_output=True, text=True)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Differing attributes:" in completed.stdout, completed.stdout
    assert "['right']" in completed.stdout, completed.stdout


def _construction_results(cls: type, calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[Any]:
    """What each call of ``cls`` gives: the instance's fields and own attributes, or the TypeError's text."""
    results: list[Any] = []
    for args, kwargs in calls:
        try:
            instance = cls(*args, **kwargs)
        except TypeError as error:
            results.append(("error", str(error).split(".__init__() ", 1)[-1]))
        else:
            results.append((dataclasses.asdict(instance), sorted(vars(instance)), instance.late))
    return results


def _with_init_fields(maker: Any) -> type:
    @maker
    class Sample:
        name: str
        count: int = 0
        tags: list[str] = field(default_factory=list)
        fixed: int = field(default=5, init=False)
        made: list[int] = field(default_factory=lambda: [1], init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "late", f"{self.name}:{self.count}")

    return Sample


_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}), (("a", 2, ["t"]), {}), ((), {"name": "b", "tags": ["u"]}), ((), {}), (("a", 1, [], 9), {}),
    (("a",), {"name": "b"}), (("a",), {"fixed": 1}), (("a",), {"other": 1}), ((), {"count": 3}),
]


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_is_constructed_as_the_dataclass_is_before_and_after_its_init_is_compiled(frozen: bool) -> None:
    """The shared __init__ (no compile) and the generated one that replaces it after a few
    instances give the same instances and the same errors as a dataclass."""
    from axpipe import records

    expected = _construction_results(_with_init_fields(dataclass(frozen=frozen)), _CALLS)
    ours = _with_init_fields(record(frozen=frozen))
    staged = ours.__init__  # type: ignore[misc]
    assert _construction_results(ours, _CALLS) == expected
    for _ in range(records._COMPILE_AFTER):
        ours("warm")
    assert ours.__init__ is not staged  # type: ignore[misc]
    assert ours.__init__.__code__.co_filename == "<string>"  # type: ignore[misc]  # generated by dataclasses
    assert _construction_results(ours, _CALLS) == expected
    assert ours("a", 2).tags is not ours("a", 2).tags


def test_a_record_with_a_required_field_after_a_default_is_refused_as_a_dataclass_is() -> None:
    for maker in (dataclass, record):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
            @maker
            class Bad:
                a: int = 0
                b: int  # type: ignore[misc]


def test_a_record_with_an_init_only_field_gets_the_generated_init() -> None:
    @record
    class WithInitVar:
        a: int
        scale: dataclasses.InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            self.a *= scale

    assert WithInitVar(2, 3).a == 6 and WithInitVar(2).a == 2
