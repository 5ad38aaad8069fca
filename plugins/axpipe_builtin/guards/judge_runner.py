"""Tests the runner no longer runs that the change's text does not explain.

The runner's listing at the base and after the change (:class:`CollectedTests`) sees what
the text cannot: a file a configuration now ignores, a conftest that deselects, a test
file renamed out of the runner's patterns, a ``skipif`` whose condition now holds here.
A test run before and not run now (not collected, or skipped or expected to fail) is a
finding unless the text explained it (renamed, folded into another test, removed with the
code it tested) or already reported it.
"""

from __future__ import annotations

from axpipe.interfaces import CollectedTests, GuardClass

from .judge_tests import Found, Surroundings

_ACTIVE = ("run", "listed")
_WORDS = {"skip": "skips it", "xfail": "expects it to fail", "unknown": "cannot say whether it runs"}


def runner_losses(collected: CollectedTests, around: Surroundings) -> list[Found]:
    found: list[Found] = []
    gone = [(path, name) for (path, name), status in collected.before.items() if status in _ACTIVE
            and collected.after.get((path, name)) not in _ACTIVE]
    by_name = {name for _path, name in collected.after if collected.after[_path, name] in _ACTIVE}
    for path, name in sorted(gone):
        if (path, name) in around.explained or (path, name) in around.reported:
            continue
        now = collected.after.get((path, name))
        if now is None and name in by_name and collected.runner != "jest":
            continue  # still run, from another file: a test moved
        moved_to = around.moved.get(path)
        if now is None and collected.runner == "jest" and moved_to is not None and \
                collected.after.get((moved_to, moved_to)) in _ACTIVE:
            continue  # jest lists files: the file was renamed and runs under its new name
        if now is None:
            what = f"the test file {path} is no longer run" if collected.runner == "jest" else \
                f"test {name} is no longer collected"
            found.append((GuardClass.DELETED_TEST, path, 1, f"{what} by {collected.runner} (it was before the change)"))
        else:
            found.append((GuardClass.SKIPPED_TEST, path, 1,
                          f"{name}: {collected.runner} now {_WORDS.get(now, now)} (it ran before the change)"))
    return found
