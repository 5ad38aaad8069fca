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
from axpipe_builtin.agent_usage import AgentReport

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
        refused = self.refuse(request)
        if refused is not None:
            return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR, refused)
        command = self.command(request)
        stdin_prompt = request.prompt if params.prompt_via == "stdin" else None
        if stdin_prompt is not None:
            # A pty has no separate stdin to close: feed the prompt through the shell instead.
            text = command if isinstance(command, str) else shlex.join(command)
            command = f"{text} < {shlex.quote(str(request.prompt_file))}"
        try:
            result = process.run(command, cwd=request.cwd, env={**self.env(request), **params.env, **request.env},
                                 timeout=request.timeout, interactive=True, on_output=request.on_output,
                                 stop_on=[] if request.autonomous else params.permission_prompts)
        except ExecutableNotFound as error:
            return interfaces.AgentOutcome(interfaces.AgentStatus.ERROR, error.message)
        report = self.report(request, result.output)
        limit = _usage_limit(params.usage_limits, result.output) if result.prompt is None else None
        if limit is not None and report.limit is None:
            report = AgentReport(usage=report.usage, limit=limit.group(0).strip(), resets=_resets(limit))
        if report.limit is not None and result.prompt is None:
            return interfaces.AgentOutcome(interfaces.AgentStatus.USAGE_LIMIT,
                                           f"usage limit reported: {report.limit[:200]}",
                                           exit_code=result.exit_code, output_tail=result.output,
                                           duration=result.duration, resets=report.resets,
                                           resets_at=report.resets_at, usage=report.usage)
        if result.prompt is not None:
            status = interfaces.AgentStatus.STOPPED
        elif result.timed_out:
            status = interfaces.AgentStatus.TIMED_OUT
        elif result.ok and report.failure is None:
            status = interfaces.AgentStatus.DONE
        else:
            status = interfaces.AgentStatus.FAILED
        summary = result.describe() if report.failure is None else f"{result.describe()}: {report.failure[:300]}"
        return interfaces.AgentOutcome(status, summary, exit_code=result.exit_code,
                                       output_tail=result.output, duration=result.duration, prompt=result.prompt,
                                       usage=report.usage)

    # Hooks for the presets (agent_presets.py); the plain command agent uses none of them.

    def refuse(self, request: interfaces.AgentRequest) -> str | None:
        """Why this turn must not start (a message naming the config path), or None."""
        return None

    def command(self, request: interfaces.AgentRequest) -> str | list[str]:
        """The command line of this turn."""
        return build_command(request.params, str(request.prompt_file), request.prompt)

    def env(self, request: interfaces.AgentRequest) -> dict[str, str]:
        """Environment variables the agent kind itself sets (the recipe's ``env`` wins over them)."""
        return {}

    def report(self, request: interfaces.AgentRequest, output: str) -> AgentReport:
        """What the program reported in its output: usage, a usage limit, a failure it
        exited 0 with. The command agent reads none of it (its usage comes from
        ``AXPIPE_USAGE_FILE``; its limits from ``usage_limits``)."""
        return AgentReport()


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
                                               duration=time.monotonic() - started, usage=interfaces.Usage(0, 0, 0.0))
        return interfaces.AgentOutcome(interfaces.AgentStatus.DONE, "ruff fixed and formatted what it could",
                                       exit_code=0, output_tail="".join(outputs)[-4000:],
                                       duration=time.monotonic() - started,
                                       usage=interfaces.Usage(0, 0, 0.0))  # no model: it costs nothing
