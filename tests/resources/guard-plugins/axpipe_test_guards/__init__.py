"""Guards that misbehave: one raises while judging, one lacks the Guard protocol."""

from __future__ import annotations


class CrashingGuard:
    params_schema = None
    suffixes = (".py",)

    def describe(self) -> str:
        return "raises on every change"

    def check(self, changes: object, context: object) -> list[object]:
        raise RuntimeError("guard bug: cannot read the change")


class NotAGuard:
    """Has no `check` and no `suffixes`."""

    def describe(self) -> str:
        return "not a guard"
