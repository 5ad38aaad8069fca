"""Deliverers (``axpipe.deliverers``): open the pull request once the branch is pushed (DESIGN §16).

A deliverer is called only after the branch contract held and the push succeeded: it opens
a pull (or merge) request for ``head`` into ``base`` with the title and body axpipe built
from the goal's closing criteria. It never pushes, commits or edits the checkout. A failure
(the program is missing, not authenticated, the server refused) is data, not an exception:
the goal stays complete and ``axpipe deliver <task>`` retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.records import record


@record
class PullRequest:
    """What to open: ``head`` (the pushed task branch) into ``base`` on ``remote``."""

    cwd: Path
    remote: str
    head: str
    base: str
    title: str
    body: str
    params: Any
    timeout: float = 300.0
    env: Mapping[str, str] | None = None


@record
class Opened:
    """How opening the pull request ended: ``ok`` with its ``url``, or the ``reason`` it failed."""

    ok: bool
    url: str | None = None
    reason: str = ""
    command: list[str] | None = None  # the command that ran, for the record and the retry message


@runtime_checkable
class Deliverer(Protocol):
    """Opens a pull or merge request (``github`` through ``gh``, ``gitlab`` through ``glab``)."""

    params_schema: type | None

    def open(self, request: PullRequest) -> Opened:
        """Open the request; must not raise for a refusal (return ``Opened(False, reason=...)``)."""
        ...
