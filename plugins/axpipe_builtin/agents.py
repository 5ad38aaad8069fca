"""The ``command`` agent: any program that edits code, driven through a pty.

The command is a string (run by ``/bin/sh -c``) or a list; ``{prompt_file}`` in it is
replaced by the path of the rendered prompt. The prompt also reaches the program by
``prompt_via``: ``file`` (only the placeholder and ``AXPIPE_PROMPT_FILE``), ``stdin``, or
``arg`` (appended as the last argument). A non-autonomous agent that prints a permission
prompt is stopped there, and the goal pauses with that prompt as the reason. Output matching
one of ``usage_limits`` (the program's quota or rate-limit message; the presets will fill
them in) reports a usage limit: the goal pauses until it resets (DESIGN §14).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import field
from typing import Any

from axpipe import interfaces
from axpipe.errors import ExecutableNotFound
from axpipe.records import record

DEFAULT_PERMISSION_PROMPTS = [
    r"\[[yY]/[nN]\]",
    r"\([yY]/[nN]\)",
    r"(?i)\b(?:allow|approve|permit)\b[^\n]{0,80}\?",
    r"(?i)do you want to (?:proceed|continue|allow)",
    r"(?i)press enter to (?:continue|confirm)",
]


@record
class CommandAgentParams:
    """Parameters of the ``command`` agent."""

    command: Any = field(metadata={"doc": "the program: a string or a list; {prompt_file} is replaced"})
    prompt_via: str = field(default="file", metadata={"doc": "how the prompt reaches it: file, stdin or arg",
                                                      "choices": ("file", "stdin", "arg")})
    permission_prompts: list[str] = field(default_factory=lambda: list(DEFAULT_PERMISSION_PROMPTS),
                                          metadata={"doc": "regexes of permission prompts that stop a "
                                                           "non-autonomous agent"})
    env: dict[str, str] = field(default_factory=dict, metadata={"doc": "extra environment variables"})
    usage_limits: list[str] = field(default_factory=list,
                                    metadata={"doc": "regexes of the program's usage-limit messages; a turn whose "
                                                     "output matches one (exit code aside) reports usage-limit, "
                                                     "and a group named `resets` says when it resets"})


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
    deliver_flags: tuple[str, ...] = ()  # any program: nothing to add; the runner's refs check holds (§16)

    def run(self, request: interfaces.AgentRequest) -> interfaces.AgentOutcome:
        from axpipe import process

        params: CommandAgentParams = request.params
        if not isinstance(params.command, (str, list)) or not params.command:
            return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR,
                                           "agent.command must be a string or a non-empty list")
        for index, pattern in enumerate(params.usage_limits):
            try:
                re.compile(pattern)
            except re.error as error:  # before the program runs: its turn could not be judged
                return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR,
                                               f"agent.usage_limits[{index}]: {pattern!r} is not a regex ({error})")
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
            return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR, error.message)
        limit = _usage_limit(params.usage_limits, result.output) if result.prompt is None else None
        if limit is not None:
            return interfaces.AgentOutcome(interfaces.AgentStatus.USAGE_LIMIT,
                                           f"usage limit reported: {limit.group(0).strip()[:200]}",
                                           exit_code=result.exit_code, output_tail=result.output,
                                           duration=result.duration, resets=_resets(limit))
        if result.prompt is not None:
            status = interfaces.AgentStatus.STOPPED
        elif result.timed_out:
            status = interfaces.AgentStatus.TIMED_OUT
        elif result.ok:
            status = interfaces.AgentStatus.DONE
        else:
            status = interfaces.AgentStatus.FAILED
        return interfaces.AgentOutcome(status, result.describe(), exit_code=result.exit_code,
                                       output_tail=result.output, duration=result.duration, prompt=result.prompt)


def _usage_limit(patterns: list[str], output: str) -> re.Match[str] | None:
    """The last match of any usage-limit pattern in the output: the message the program
    ended on (the patterns compile: :meth:`CommandAgent.run` checked them first)."""
    found: re.Match[str] | None = None
    for pattern in patterns:
        for match in re.finditer(pattern, output):
            if found is None or match.start() > found.start():
                found = match
    return found


def _resets(match: re.Match[str]) -> str | None:
    resets = match.groupdict().get("resets")
    return resets.strip() or None if resets else None


@record
class RuffFixParams:
    """Parameters of the ``ruff-fix`` agent."""

    paths: list[str] = field(default_factory=lambda: ["."], metadata={"doc": "what to fix and format"})
    format: bool = field(default=True, metadata={"doc": "also run `ruff format`"})
    unsafe_fixes: bool = field(default=False, metadata={"doc": "allow ruff's unsafe fixes"})


class RuffFixAgent:
    """Runs ruff's fixer (and formatter) over the workspace: a deterministic lint repairer.

    ruff is an optional extra (``pip install 'axpipe[ruff]'``); without it the agent reports
    an error instead of pretending to fix anything.
    """

    params_schema = RuffFixParams

    def run(self, request: interfaces.AgentRequest) -> interfaces.AgentOutcome:
        import shutil
        import time

        from axpipe import process

        params: RuffFixParams = request.params
        ruff = shutil.which("ruff", path=request.env.get("PATH") or None)
        if ruff is None:
            return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR,
                                           "ruff is not installed: pip install 'axpipe[ruff]'")
        started = time.monotonic()
        fix = [ruff, "check", "--fix", "--exit-zero", *(["--unsafe-fixes"] if params.unsafe_fixes else []),
               *params.paths]
        outputs = []
        commands = [fix, [ruff, "format", *params.paths]] if params.format else [fix]
        for command in commands:
            result = process.run(command, cwd=request.cwd, env=request.env, timeout=request.timeout,
                                 on_output=request.on_output)
            outputs.append(result.output)
            if not result.ok:
                return interfaces.AgentOutcome(interfaces.AgentStatus.FAILED,
                                               f"{shlex.join(command[:2])}: {result.describe()}",
                                               exit_code=result.exit_code, output_tail="".join(outputs)[-4000:],
                                               duration=time.monotonic() - started)
        return interfaces.AgentOutcome(interfaces.AgentStatus.DONE, "ruff fixed and formatted what it could",
                                       exit_code=0, output_tail="".join(outputs)[-4000:],
                                       duration=time.monotonic() - started)


# Presets for coding-assistant CLIs. Each is the command agent with a default command line;
# the command lines are documented assumptions about those CLIs (docs/agents.md), checked
# only against stand-ins here: no paid assistant runs in axpipe's tests.

def _preset(default: list[str], doc: str, via: str = "stdin", deliver_flags: tuple[str, ...] = ()) -> type:
    @record
    class PresetParams(CommandAgentParams):
        """Parameters of a coding-assistant preset: the command agent's, with its command line."""

        command: Any = field(default_factory=lambda: list(default), metadata={"doc": doc})
        prompt_via: str = field(default=via, metadata={"doc": "how the prompt reaches it: file, stdin or arg",
                                                       "choices": ("file", "stdin", "arg")})

    class Preset(CommandAgent):
        params_schema = PresetParams

    # With `deliver:` these are added to the command: the CLI's own switch against committing
    # and pushing (docs/delivery.md); none where the CLI has no such switch.
    Preset.deliver_flags = deliver_flags

    return Preset


ClaudeCodeAgent = _preset(["claude", "-p", "--permission-mode", "acceptEdits"],
                          "Claude Code in print mode; the prompt arrives on stdin",
                          deliver_flags=("--disallowedTools", "Bash(git commit:*)", "Bash(git push:*)"))
ClaudeCodeAgent.__doc__ = "Claude Code (`claude -p`): the prompt on stdin, edits accepted."
CodexAgent = _preset(["codex", "exec", "--full-auto", "-"], "Codex CLI non-interactive; prompt on stdin")
CodexAgent.__doc__ = "OpenAI Codex CLI (`codex exec --full-auto -`): the prompt on stdin."
GeminiCliAgent = _preset(["gemini", "--yolo"], "Gemini CLI; the prompt on stdin")
GeminiCliAgent.__doc__ = "Gemini CLI (`gemini --yolo`): the prompt on stdin."
AiderAgent = _preset(["aider", "--yes-always", "--message-file", "{prompt_file}"],
                     "aider with the prompt as its message file", via="file",
                     deliver_flags=("--no-auto-commits", "--no-dirty-commits"))
AiderAgent.__doc__ = "aider (`aider --yes-always --message-file {prompt_file}`)."
