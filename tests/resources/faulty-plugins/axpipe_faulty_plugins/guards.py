"""A guard that ends the interpreter, with success, while judging a change."""

from __future__ import annotations

import sys
from typing import Any


class ExitsGuard:
    params_schema = None
    suffixes = (".py",)

    def describe(self) -> str:
        return "exits while judging"

    def check(self, changes: Any, context: Any) -> list[Any]:
        sys.exit(0)
