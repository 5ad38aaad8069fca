"""Check kinds that misbehave: each breaks one promise of the CheckKind protocol."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any


class ExitsInRun:
    """Ends the interpreter, with success, instead of returning an outcome."""

    params_schema = None
    needs_command = False

    def describe(self, params: Any) -> str:
        return "exits"

    def run(self, request: Any) -> Any:
        sys.exit(0)


class ReturnsDict:
    """Returns a dict where a CheckOutcome is due."""

    params_schema = None
    needs_command = False

    def describe(self, params: Any) -> str:
        return "returns a dict"

    def run(self, request: Any) -> Any:
        return {"status": "passed", "summary": "trust me"}


class DictSchema:
    """Declares its parameters as a dict instead of a dataclass."""

    params_schema = {"max_lines": int}
    needs_command = False

    def describe(self, params: Any) -> str:
        return "dict schema"

    def run(self, request: Any) -> Any:
        raise AssertionError("never run: the schema is refused")


@dataclass
class SetParams:
    tags: set[str] = field(default_factory=set, metadata={"doc": "a type axpipe cannot validate"})


class SetDefault:
    """A params dataclass with a field type (set) recipes cannot express."""

    params_schema = SetParams
    needs_command = False

    def describe(self, params: Any) -> str:
        return "set default"

    def run(self, request: Any) -> Any:
        raise AssertionError("never run: the schema is refused")


class NoRun:
    """Has no run() method."""

    params_schema = None
    needs_command = False

    def describe(self, params: Any) -> str:
        return "cannot run"


class Hangs:
    """Ignores request.timeout and sleeps in the main thread."""

    params_schema = None
    needs_command = False

    def describe(self, params: Any) -> str:
        return "hangs"

    def run(self, request: Any) -> Any:
        time.sleep(3600)
        raise AssertionError("slept an hour")
