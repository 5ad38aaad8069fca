"""Presets for the coding CLIs: the command agent with each program's command line, its
usage read from its own output and its usage limit recognised (DESIGN §18).

Every command line here was run against the pinned program (docs/agents.md lists the
versions; ``tests/test_agent_presets_real.py`` runs them in CI): its flags are accepted, the
prompt arrives the way ``prompt_via`` says, and the agent can edit but not commit or push
with the switches that program has. Those switches are a first line only (some can be
bypassed with another spelling of ``git commit``): the runner checks HEAD and the refs
after every unit whatever the agent was told.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe import interfaces
from axpipe.records import record
from axpipe_builtin import agent_usage
from axpipe_builtin.agent_usage import AgentReport
from axpipe_builtin.agents import CommandAgent, CommandAgentParams, build_command

GEMINI_POLICY = Path(__file__).with_name("gemini_no_commit.toml")

CLAUDE_CODE = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
               "--allowedTools", "Bash,Edit,Write,Read,Glob,Grep",
               "--disallowedTools", "Bash(git commit *)", "Bash(git push *)"]
CODEX = ["codex", "exec", "--json", "--sandbox", "workspace-write", "-"]
GEMINI_CLI = ["gemini", "--skip-trust", "--approval-mode", "yolo", "--output-format", "stream-json",
              "--policy", str(GEMINI_POLICY)]
AIDER = ["aider", "--no-git", "--yes-always", "--no-check-update", "--no-show-release-notes", "--no-analytics",
         "--analytics-log", "{analytics_log}", "--no-suggest-shell-commands", "--no-detect-urls",
         "--no-show-model-warnings", "--no-pretty", "--no-fancy-input", "--no-stream",
         "--chat-history-file", "/dev/null", "--input-history-file", "/dev/null", "--message-file", "{message_file}"]


def _params(default: list[str], via: str, doc: str) -> type[CommandAgentParams]:
    @record
    class PresetParams(CommandAgentParams):
        """Parameters of a coding-CLI preset: the command agent's, with its command line."""

        command: Any = field(default_factory=lambda: list(default), metadata={"doc": doc})
        prompt_via: str = field(default=via, metadata={"doc": "how the prompt reaches it: file, stdin or arg",
                                                       "choices": ("file", "stdin", "arg")})
        extra_args: list[str] = field(default_factory=list,
                                      metadata={"doc": "more arguments for the program, placed before the prompt "
                                                       "(a trailing `-`) and after the model flag"})

    return PresetParams


class _Preset(CommandAgent):
    """A CLI preset: ``model_flag`` and ``extra_args`` go before a trailing ``-`` (the
    "prompt on stdin" marker), which must stay the last argument. ``reports_cost``: whether
    the program prints what a turn cost (a cost budget needs it; recipe validation asks)."""

    model_flag = "--model"
    reports_cost = True

    def config_problems(self, params: Any, model: str | None) -> list[tuple[str, str]]:
        """Problems with the recipe's ``agent`` section, as (path under ``agent.``, message),
        found when the recipe is validated (exit 2, before anything runs)."""
        problem = self.refuse_config(params, model)
        return [problem] if problem else []

    def refuse_config(self, params: Any, model: str | None) -> tuple[str, str] | None:
        return None

    def refuse(self, request: interfaces.AgentRequest) -> str | None:
        problem = self.refuse_config(request.params, request.model)
        return f"agent.{problem[0]}: {problem[1]}" if problem else None

    def command(self, request: interfaces.AgentRequest) -> str | list[str]:
        params = request.params
        command = build_command(params, str(request.prompt_file), request.prompt)
        if not isinstance(command, list):  # a person's own command string: used as written
            return command
        extra = [*([self.model_flag, request.model] if request.model else []), *params.extra_args]
        if command and command[-1] == "-":
            return [*command[:-1], *extra, "-"]
        return [*command, *extra]


ClaudeCodeParams = _params(CLAUDE_CODE, "stdin", "Claude Code in print mode, stream-json output, edits and Bash "
                                                 "allowed, git commit/push denied; the prompt on stdin")


class ClaudeCodeAgent(_Preset):
    """Claude Code (`claude -p --output-format stream-json`): usage and cost from its result."""

    params_schema = ClaudeCodeParams
    # With `deliver:` added to the command even when a recipe replaces it (docs/delivery.md);
    # the default command line denies these already.
    deliver_flags = ("--disallowedTools", "Bash(git commit *)", "Bash(git push *)")

    def report(self, request: interfaces.AgentRequest, output: str) -> AgentReport:
        return agent_usage.claude_code(output)


CodexParams = _params(CODEX, "stdin", "Codex CLI `exec --json` in the workspace-write sandbox (.git read-only); "
                                      "the prompt on stdin")


class CodexAgent(_Preset):
    """OpenAI Codex CLI (`codex exec --json --sandbox workspace-write -`): tokens from its events."""

    params_schema = CodexParams
    model_flag = "-m"
    reports_cost = False

    def env(self, request: interfaces.AgentRequest) -> dict[str, str]:
        # codex prints a usage limit's reset as a local time: run it in a zone we know
        return {"TZ": "UTC"}

    def report(self, request: interfaces.AgentRequest, output: str) -> AgentReport:
        zone = {**request.params.env, **request.env}.get("TZ", "UTC")
        return agent_usage.codex(output, zone if os.path.exists(f"/usr/share/zoneinfo/{zone}") else "UTC")


GeminiCliParams = _params(GEMINI_CLI, "stdin", "Gemini CLI headless, the folder trusted for the run, yolo with "
                                               "axpipe's no-commit policy, stream-json output; the prompt on stdin")


class GeminiCliAgent(_Preset):
    """Gemini CLI (`gemini --skip-trust --approval-mode yolo --output-format stream-json`)."""

    params_schema = GeminiCliParams
    model_flag = "-m"
    reports_cost = False

    def refuse_config(self, params: Any, model: str | None) -> tuple[str, str] | None:
        # gemini ignores a --policy file that does not exist, and then nothing stops a commit
        words = params.command if isinstance(params.command, list) else []
        for index, word in enumerate(words[:-1]):
            if word == "--policy" and not Path(str(words[index + 1])).is_file():
                return "command", (f"gemini's --policy file {words[index + 1]} does not exist (gemini would "
                                   "ignore it and run without the no-commit rule)")
        return None

    def report(self, request: interfaces.AgentRequest, output: str) -> AgentReport:
        return agent_usage.gemini_cli(output)


AiderParams = _params(AIDER, "file", "aider without git (it never commits), no shell commands, exact usage in an "
                                     "analytics log outside the tree; the prompt as its message file")


class AiderAgent(_Preset):
    """aider (`aider --model M --no-git --message-file …`): tokens and cost from its analytics log.

    aider needs ``agent.model``: without one it waits minutes for a browser login."""

    params_schema = AiderParams
    deliver_flags = ("--no-auto-commits", "--no-dirty-commits")  # with `deliver:` (docs/delivery.md)

    def refuse_config(self, params: Any, model: str | None) -> tuple[str, str] | None:
        command = params.command
        named = (isinstance(command, list) and "--model" in command) or "--model" in params.extra_args
        if not model and not named:
            return "model", ("the aider preset needs a model (e.g. agent.model=openai/gpt-4o-mini); without one "
                             "aider waits minutes for a browser login")
        return None

    def command(self, request: interfaces.AgentRequest) -> str | list[str]:
        command = super().command(request)
        # aider runs a message that starts with `/` as one of its own commands (`/run ...`)
        message = self._message_file(request)
        self._analytics_log(request).unlink(missing_ok=True)  # a log left by an earlier turn is not this one's
        message.write_text(("The task follows.\n\n" if request.prompt.lstrip().startswith("/") else "")
                           + request.prompt, encoding="utf-8")
        values = {"{analytics_log}": str(self._analytics_log(request)), "{message_file}": str(message)}
        if isinstance(command, str):
            for key, value in values.items():
                command = command.replace(key, shlex.quote(value))
            return command
        return [values.get(word, word) for word in command]

    def report(self, request: interfaces.AgentRequest, output: str) -> AgentReport:
        return agent_usage.aider(output, self._analytics_log(request))

    @staticmethod
    def _analytics_log(request: interfaces.AgentRequest) -> Path:
        return request.prompt_file.with_name(request.prompt_file.stem + "-aider-analytics.jsonl")

    @staticmethod
    def _message_file(request: interfaces.AgentRequest) -> Path:
        return request.prompt_file.with_name(request.prompt_file.stem + "-aider-message.md")
