"""Agents (``axpipe.agents``): programs that do work or repairs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.records import record


class AgentStatus(StrEnum):
    """How an agent's turn ended."""

    DONE = "done"  # exited 0
    FAILED = "failed"  # exited non-zero or was killed
    STOPPED = "stopped"  # a non-autonomous agent reached a permission prompt
    TIMED_OUT = "timed-out"
    ERROR = "error"  # could not be started (missing program)
    USAGE_LIMIT = "usage-limit"  # the program reported its usage limit (quota, rate limit): nothing it did counts


@record
class AgentRequest:
    """One turn of an agent: the rendered prompt and where and how to run.

    ``env`` already holds the pinned variables (DESIGN §13): ``AXPIPE_PROMPT_FILE``,
    ``AXPIPE_GOAL_ID``, ``AXPIPE_ITERATION``, ``AXPIPE_USAGE_FILE``, and in a repair
    ``AXPIPE_FAILURE_FILE``; plus ``AXPIPE_BLOCKED_FILE`` (see docs/goals.md).
    """

    prompt: str
    prompt_file: Path
    cwd: Path
    env: Mapping[str, str]
    timeout: float
    autonomous: bool
    params: Any
    model: str | None = None
    on_output: Callable[[bytes], None] | None = None


@record
class Usage:
    """What one turn used, as the program itself reported it (DESIGN §18).

    ``cost`` is in USD; None when the program reports no cost (a cost budget then counts the
    turn as unpriced, never as free)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


@record
class AgentOutcome:
    """The result of an agent's turn: data, not an exception."""

    status: AgentStatus
    summary: str
    exit_code: int | None = None
    output_tail: str = ""
    duration: float = 0.0
    prompt: str | None = None  # the permission prompt that stopped a non-autonomous agent
    # With USAGE_LIMIT: when the limit resets, as the program said it (free text), if it did.
    resets: str | None = None
    # ... and as a time (epoch seconds, UTC) when the plugin could read one from what it said.
    resets_at: float | None = None
    # What the turn used as the program reported it; None when it reported nothing readable.
    usage: Usage | None = None


@runtime_checkable
class Agent(Protocol):
    """A program that does work or repairs (``axpipe.agents``): a coding CLI, a codemod, a fixer."""

    params_schema: type | None

    def run(self, request: AgentRequest) -> AgentOutcome:
        """Make one turn of changes in ``request.cwd``. Must not raise for a failing turn.

        A plugin that recognises the program's usage limit (a quota or rate limit it printed)
        returns ``USAGE_LIMIT``, with ``resets`` when the program said when it resets: the
        unit's changes are set aside, the tree restored and the goal paused (exit 4),
        instead of the hard stop a failing turn is (DESIGN §14)."""
        ...
