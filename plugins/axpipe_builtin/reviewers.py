"""Built-in reviewers: ``command`` (any review CLI) and presets for common coding-assistant CLIs.

A reviewer plugin only says how to call its CLI; the round runner
(:mod:`axpipe.review.round`) runs it, keeps its output and exit code, and reads the verdict
itself. The presets are parameter sets for CLIs that axpipe's own tests never run (they are
paid services): what they assume about each CLI is written in docs/reviews.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from axpipe import interfaces
from axpipe.errors import InputError

if TYPE_CHECKING:  # `plugins list` imports this module: keep it to what it needs
    from axpipe.process import CommandSpec
    from axpipe_builtin.reviewer_params import CommandReviewerParams, PresetParams

DEFAULT_PROMPT = """\
You are reviewing a change to a git repository. Do not modify any file.

Reviewer: {{ reviewer }} (review round {{ round }})
Revision under review: {{ revision }}
Compared with: {{ base }}
Files changed:
{% for path in files %}- {{ path }}
{% else %}(none)
{% endfor %}
The change:

```diff
{{ diff }}
```

Look for defects the change introduces: wrong behaviour, missed cases, broken error
handling, security problems, tests that do not test what they claim. Give every finding a
short id (F1, F2, ...), the file and line, and why it is a problem.

Your answer must end with exactly one verdict, alone on the last line, and no other line
may start with the word VERDICT. Either
{{ verdict_format }}
"""

def substitute(command: CommandSpec, prompt_file: str, model: str | None, *, where: str) -> CommandSpec:
    """Replace ``{prompt_file}`` and ``{model}`` in a command (shell-quoted in a string)."""

    import shlex

    def fill(text: str, quote: bool) -> str:
        if "{model}" in text:
            if model is None:
                raise InputError(f"{where}: the command uses {{model}} but the reviewer has no `model`")
            text = text.replace("{model}", shlex.quote(model) if quote else model)
        return text.replace("{prompt_file}", shlex.quote(prompt_file) if quote else prompt_file)

    if isinstance(command, str):
        return fill(command, True)
    return [fill(part, False) for part in command]


class CommandReviewer:
    """Any review CLI: ``command`` with ``{prompt_file}`` (and ``{model}``) substituted."""

    @property
    def params_schema(self) -> type:
        # Imported on use: the params need axpipe.recipe.schema, which `plugins list` can do without.
        from axpipe_builtin.reviewer_params import CommandReviewerParams

        return CommandReviewerParams

    def output_format(self, params: CommandReviewerParams) -> str:
        return params.output

    def prompt_template(self, params: CommandReviewerParams) -> str:
        return params.prompt if params.prompt is not None else DEFAULT_PROMPT

    def invocation(self, request: interfaces.ReviewRequest) -> interfaces.ReviewInvocation:
        params: CommandReviewerParams = request.params
        if request.command is None:
            raise InputError(f"reviewer {request.name!r}: a `command` reviewer needs a `command` "
                             "(the review CLI, with {prompt_file} where the prompt's path goes)")
        command = substitute(request.command, str(request.prompt_file), request.model,
                             where=f"reviewer {request.name!r}")
        stdin = request.prompt.encode("utf-8") if params.stdin else None
        return interfaces.ReviewInvocation(command=command, timeout=params.timeout, stdin=stdin, env=dict(params.env))


class PresetReviewer:
    """A known CLI called the documented way: the prompt on standard input, the model flag
    when the recipe names a model. A recipe's ``command`` replaces the preset's command
    (e.g. a wrapper script), keeping the output format and the prompt on stdin."""

    program = ""
    arguments: tuple[str, ...] = ()
    model_flag = "--model"
    output = "text"

    @property
    def params_schema(self) -> type:
        from axpipe_builtin.reviewer_params import PresetParams

        return PresetParams

    def output_format(self, params: PresetParams) -> str:
        return self.output

    def prompt_template(self, params: PresetParams) -> str:
        return params.prompt if params.prompt is not None else DEFAULT_PROMPT

    def default_command(self, model: str | None, extra_args: list[str]) -> list[str]:
        """The preset's command line for ``model`` (see docs/reviews.md)."""
        model_args = [self.model_flag, model] if model else []
        return [self.program, *self.arguments, *model_args, *extra_args]

    def invocation(self, request: interfaces.ReviewRequest) -> interfaces.ReviewInvocation:
        params: PresetParams = request.params
        if request.command is not None:
            command = substitute(request.command, str(request.prompt_file), request.model,
                                 where=f"reviewer {request.name!r}")
        else:
            command = self.default_command(request.model, list(params.extra_args))
        return interfaces.ReviewInvocation(command=command, timeout=params.timeout,
                                           stdin=request.prompt.encode("utf-8"), env=dict(params.env))


class ClaudeCodeReviewer(PresetReviewer):
    """Claude Code in print mode with its stream-json events: ``claude -p --output-format
    stream-json --verbose [--model M]``, prompt on stdin, kept as ``stdout.jsonl``."""

    program = "claude"
    arguments = ("-p", "--output-format", "stream-json", "--verbose")
    output = "jsonl"


class CodexReviewer(PresetReviewer):
    """OpenAI Codex non-interactively in a read-only sandbox: ``codex exec --json --sandbox
    read-only [--model M] -`` (``-``: the prompt from stdin), kept as ``stdout.jsonl``."""

    program = "codex"
    arguments = ("exec", "--json", "--sandbox", "read-only")
    output = "jsonl"

    def default_command(self, model: str | None, extra_args: list[str]) -> list[str]:
        return [*super().default_command(model, extra_args), "-"]


class GeminiReviewer(PresetReviewer):
    """Gemini CLI headless (its stdin is not a terminal): ``gemini --output-format text
    [--model M]``, prompt on stdin, kept as ``stdout.txt``."""

    program = "gemini"
    arguments = ("--output-format", "text")
    output = "text"
