"""A pytest plugin the ``pytest`` test adapter loads into the project's pytest run.

It records two JUnit XML properties on every test case:

- ``axpipe_nodeid``: the test's node id, because the JUnit ``classname``/``name`` pair cannot
  be turned back into a node id reliably (dots in folder names, inherited tests);
- ``axpipe_run``: a number per execution, because JUnit writes a test that fails and then
  errors in teardown as two test cases: both carry the same number, so they count once,
  while a test that really runs twice (a rerun) gets two numbers.

The adapter copies this file into a temporary folder on ``PYTHONPATH``, so it works
whichever interpreter runs the project's tests.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator

import pytest

_runs = itertools.count(1)


def pytest_itemcollected(item: pytest.Item) -> None:
    # At collection, not setup: a test skipped or failing in setup still gets its id.
    item.user_properties.append(("axpipe_nodeid", item.nodeid))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    # Every execution has exactly one setup phase; the reports of its phases copy this.
    item.user_properties[:] = [prop for prop in item.user_properties if prop[0] != "axpipe_run"]
    item.user_properties.append(("axpipe_run", str(next(_runs))))
    yield
