"""The ``command`` agent: any program that edits code, driven through a pty.

The command is a string (run by ``/bin/sh -c``) or a list; ``{prompt_file}`` in it is
replaced by the path of the rendered prompt. The prompt also reaches the program by
``prompt_via``: ``file`` (only the placeholder and ``AXPIPE_PROMPT_FILE``), ``stdin``, or
``arg`` (appended as the last argument). A non-autonomous agent that prints a permission
prompt is stopped there, and the goal pauses with that prompt as the reason.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from axpipe.errors import ExecutableNotFound
from axpipe.interfaces import AgentOutcome, AgentRequest, AgentStatus

DEFAULT_PERMISSION_PROMPTS = [
    r"\[[yY]/[nN]\]",
    r"\([yY]/[nN]\)",
    r"(?i)\b(?:allow|approve|permit)\b[^\n]{0,80}\?",
    r"(?i)do you want to (?:proceed|continue|allow)",
    r"(?i)press enter to (?:continue|confirm)",
]


@dataclass
class CommandAgentParams:
    command: Any = field(metadata={"doc": "the program: a string or a list; {prompt_file} is replaced"})
    prompt_via: str = field(default="file", metadata={"doc": "how the prompt reaches it: file, stdin or arg",
                                                      "choices": ("file", "stdin", "arg")})
    permission_prompts: list[str] = field(default_factory=lambda: list(DEFAULT_PERMISSION_PROMPTS),
                                          metadata={"doc": "regexes of permission prompts that stop a "
                                                           "non-autonomous agent"})
    env: dict[str, str] = field(default_factory=dict, metadata={"doc": "extra environment variables"})


def build_command(params: CommandAgentParams, prompt_file: str, prompt: str) -> str | list[str]:
    """The command to run, with the prompt file substituted and the prompt placed."""
    command = params.command
    if isinstance(command, str):
        text = command.replace("{prompt_file}", shlex.quote(prompt_file))
        if params.prompt_via == "arg":
            text += " " + shlex.quote(prompt)
        return text
    argv = [str(part).replace("{prompt_file}", prompt_file) for part in command]
    if params.prompt_via == "arg":
        argv.append(prompt)
    return argv


class CommandAgent:
    """Runs any CLI as the agent (DESIGN §13)."""

    params_schema = CommandAgentParams

    def run(self, request: AgentRequest) -> AgentOutcome:
        from axpipe import process

        params: CommandAgentParams = request.params
        if not isinstance(params.command, (str, list)) or not params.command:
            return AgentOutcome(AgentStatus.ERROR, "agent.command must be a string or a non-empty list")
        command = build_command(params, str(request.prompt_file), request.prompt)
        stdin_prompt = request.prompt if params.prompt_via == "stdin" else None
        if stdin_prompt is not None:
            # A pty has no separate stdin to close: feed the prompt through the shell instead.
            text = command if isinstance(command, str) else shlex.join(command)
            command = f"{text} < {shlex.quote(str(request.prompt_file))}"
        try:
            result = process.run(command, cwd=request.cwd, env={**params.env, **request.env},
                                 timeout=request.timeout, interactive=True, on_output=request.on_output,
                                 stop_on=[] if request.autonomous else params.permission_prompts)
        except ExecutableNotFound as error:
            return AgentOutcome(AgentStatus.ERROR, error.message)
        if result.prompt is not None:
            status = AgentStatus.STOPPED
        elif result.timed_out:
            status = AgentStatus.TIMED_OUT
        elif result.ok:
            status = AgentStatus.DONE
        else:
            status = AgentStatus.FAILED
        return AgentOutcome(status, result.describe(), exit_code=result.exit_code, output_tail=result.output,
                            duration=result.duration, prompt=result.prompt)
