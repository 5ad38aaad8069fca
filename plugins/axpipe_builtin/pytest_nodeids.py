"""A pytest plugin the ``pytest`` test adapter loads into the project's pytest run.

It records each test's node id as a JUnit XML property (``axpipe_nodeid``), because the
JUnit ``classname``/``name`` pair cannot be turned back into a node id reliably (dots in
folder names, tests inherited from another module). The adapter copies this file into a
temporary folder on ``PYTHONPATH``, so it works whichever interpreter runs the tests.
"""

import pytest


def pytest_itemcollected(item: pytest.Item) -> None:
    # At collection, not setup: a test skipped or failing in setup still gets its id.
    item.user_properties.append(("axpipe_nodeid", item.nodeid))
