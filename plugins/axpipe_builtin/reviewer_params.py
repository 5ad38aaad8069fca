"""Parameters of the built-in reviewers (kept apart so that listing plugins stays cheap)."""

from __future__ import annotations

from dataclasses import field

from axpipe.recipe.schema import Duration
from axpipe.records import record

_MINUTE = 60.0


def _doc(text: str, **extra: object) -> dict[str, object]:
    return {"doc": text, **extra}


@record
class CommandReviewerParams:
    output: str = field(default="text", metadata=_doc(
        "text: stdout kept as stdout.txt; jsonl: an event stream kept as stdout.jsonl", choices=("text", "jsonl")))
    prompt: str | None = field(default=None, metadata=_doc(
        "jinja2 template of the prompt (default: axpipe's review prompt)"))
    stdin: bool = field(default=False, metadata=_doc("also send the prompt on standard input"))
    timeout: Duration = field(default=Duration(20 * _MINUTE), metadata=_doc(
        "kill the review after this long (the attempt then fails)", min=1.0, max=72 * 3600.0))
    env: dict[str, str] = field(default_factory=dict, metadata=_doc("extra environment variables"))


@record
class PresetParams:
    prompt: str | None = field(default=None, metadata=_doc(
        "jinja2 template of the prompt (default: axpipe's review prompt)"))
    timeout: Duration = field(default=Duration(20 * _MINUTE), metadata=_doc(
        "kill the review after this long (the attempt then fails)", min=1.0, max=72 * 3600.0))
    extra_args: list[str] = field(default_factory=list, metadata=_doc("arguments appended to the preset's command"))
    env: dict[str, str] = field(default_factory=dict, metadata=_doc("extra environment variables"))


