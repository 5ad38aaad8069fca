"""Reviewers (``axpipe.reviewers``): review CLIs run into round folders."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.process import CommandSpec
from axpipe.records import record

# -- reviewers (axpipe.reviewers) --------------------------------------------------------


@record
class ReviewRequest:
    """What a reviewer plugin needs to build the command of one review."""

    name: str
    """The reviewer's folder name in the round (``round-<n>/<name>/``)."""
    command: CommandSpec | None
    """The recipe's ``command``, or None to use the plugin's own (presets)."""
    model: str | None
    params: Any
    prompt: str
    """The rendered prompt."""
    prompt_file: Path
    """Where the rendered prompt is written (also in ``AXPIPE_PROMPT_FILE``)."""
    workspace: Path


@record
class ReviewInvocation:
    """How to run one review: the round runner runs it and records what happened."""

    command: CommandSpec
    timeout: float
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Reviewer(Protocol):
    """A review CLI (``axpipe.reviewers``). The plugin only says how to call the CLI and in
    which format it answers; the round runner runs it, keeps its output, and reads the
    verdict itself (:mod:`axpipe.review.verdicts`), so a plugin cannot declare a review successful."""

    params_schema: type | None

    def output_format(self, params: Any) -> str:
        """``"text"`` (kept as ``stdout.txt``) or ``"jsonl"`` (an event stream, ``stdout.jsonl``)."""
        ...

    def prompt_template(self, params: Any) -> str:
        """The jinja2 source of the prompt (see docs/reviews.md for its variables)."""
        ...

    def invocation(self, request: ReviewRequest) -> ReviewInvocation:
        """The command (and stdin, environment, timeout) that runs the review."""
        ...
