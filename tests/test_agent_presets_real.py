"""The agent presets run as the real CLIs at their pinned versions (DESIGN §18).

Each preset's exact command line starts the real program in a real git repository; a
loopback stand-in of the model API (``tests/agents/standin_api.py``) answers instead of a
paid model, pointed at through the base-URL setting each CLI has. So these tests prove,
with the programs themselves: every flag is accepted, the prompt arrives, a scripted tool
call really edits the workspace, the usage the CLI reports is parsed into tokens (and
cost where the CLI reports one), a commit the agent tries does not land, and the CLI's
usage-limit outcome is recognised. The CLIs are installed once (``tests/agent_clis.py``).

One outcome is not run live: aider's rate limit. aider retries a 429 for 60 s of back-off
(81 s here) before giving up, so its recognition is tested on the output the real aider
printed against this stand-in (``agent_outputs/aider/rate-limit.txt``), in
``test_agent_usage.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import agent_clis
import pytest
from agents.standin_api import USAGE, StandIn
from goalkit import UNIT_CHECK, Project
from helpers import git, write_recipe

from axpipe.interfaces import AgentOutcome, AgentRequest, AgentStatus
from axpipe.plugin import registry
from axpipe.recipe import typed

pytestmark = [pytest.mark.agents, pytest.mark.slow]

PROMPT = "Add a file hello.txt containing the word hello. Do not commit.\n"


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    server = StandIn()
    yield server
    server.close()


def cli_bin(kind: str) -> Path:
    reason = agent_clis.unavailable(kind)
    if reason:
        pytest.skip(f"{kind} cannot be installed here: {reason}")
    return agent_clis.install(kind)


def wiring(kind: str, url: str, home: Path) -> tuple[dict[str, str], list[str]]:
    """The environment and extra arguments that point ``kind`` at the stand-in (docs/agents.md)."""
    if kind == "claude-code":
        # an OAuth token takes the subscription path, where usage limits carry their reset
        return {"ANTHROPIC_BASE_URL": url, "CLAUDE_CODE_OAUTH_TOKEN": "dummy", "CLAUDE_CODE_MAX_RETRIES": "0"}, []
    if kind == "codex":
        return {"OPENAI_API_KEY": "sk-dummy"}, ["-c", f'openai_base_url="{url}/v1"']
    if kind == "gemini-cli":
        (home / ".gemini").mkdir(exist_ok=True)
        (home / ".gemini" / "settings.json").write_text('{"security":{"auth":{"selectedType":"gemini-api-key"}}}')
        return {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": url}, []
    return {"OPENAI_API_KEY": "sk-dummy", "OPENAI_API_BASE": f"{url}/v1"}, []


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a commit and a bare remote it has pushed to: a commit or a push
    that is not blocked would really land."""
    repo, remote = tmp_path / "ws", tmp_path / "remote.git"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("demo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return repo, remote


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)") + git(repo, "rev-parse", "HEAD")


def run_preset(kind: str, scenario: str, tmp_path: Path, standin: StandIn, *, model: str | None = None,
               timeout: float = 120, repo: Path | None = None) -> tuple[AgentOutcome, Path]:
    bin_folder = cli_bin(kind)
    standin.reset()
    repo = repo or workspace(tmp_path)[0]
    home = tmp_path / "home"
    home.mkdir()
    env, extra_args = wiring(kind, standin.url(scenario), home)
    agent = registry.load("axpipe.agents", kind)
    params, problems = typed.load_plugin_params(agent, {"env": {**env, "HOME": str(home)},
                                                        "extra_args": extra_args}, "agent", None)
    assert not problems
    turns = tmp_path / "turns"
    turns.mkdir()
    prompt_file = turns / "0001-prompt.md"
    prompt_file.write_text(PROMPT)
    path = os.pathsep.join([str(bin_folder), os.environ["PATH"]])
    request = AgentRequest(prompt=PROMPT, prompt_file=prompt_file, cwd=repo, timeout=timeout, autonomous=True,
                           params=params, model=model,
                           env={"PATH": path, "AXPIPE_PROMPT_FILE": str(prompt_file), "AXPIPE_ITERATION": "1"})
    return agent.run(request), repo


def prompt_arrived(standin: StandIn) -> bool:
    return any("hello.txt containing the word hello" in json.dumps(entry.get("body")) for entry in standin.requests)


# Tokens in and out one stand-in call adds, as each CLI counts them: claude adds the cache
# reads to the input; codex's input holds them already; gemini's output holds the thinking
# tokens (9 a call) that its own `output_tokens` leaves out.
PER_CALL = {"claude-code": (USAGE["input"] + USAGE["cached"], USAGE["output"]),
            "codex": (USAGE["input"], USAGE["output"]),
            "gemini-cli": (USAGE["input"], USAGE["output"] + 9),
            "aider": (USAGE["input"], USAGE["output"])}
EDITS = [("claude-code", None), ("codex", "gpt-5.5"), ("gemini-cli", None), ("aider", "openai/gpt-4o-mini")]


@pytest.mark.parametrize(("kind", "model"), EDITS, ids=[kind for kind, _ in EDITS])
def test_a_preset_edits_the_workspace_and_reports_its_usage(kind: str, model: str | None, tmp_path: Path,
                                                            standin: StandIn) -> None:
    scenario = "ok" if kind == "aider" else "edit"  # aider edits by its answer, the others by a tool call
    outcome, repo = run_preset(kind, scenario, tmp_path, standin, model=model)
    assert outcome.status is AgentStatus.DONE, outcome.output_tail[-3000:]
    assert (repo / "hello.txt").read_text().strip() == "hello"
    assert prompt_arrived(standin)
    assert git(repo, "log", "--oneline").count("\n") == 1, "the agent committed"
    usage = outcome.usage
    assert usage is not None, outcome.output_tail[-3000:]
    # every model call of the stand-in reports the same usage; each CLI sums its calls its own way
    per_call_in, per_call_out = PER_CALL[kind]
    calls = usage.tokens_in // per_call_in
    assert calls >= 1 and usage.tokens_in == calls * per_call_in, usage
    assert usage.tokens_out == calls * per_call_out, usage
    if kind in ("claude-code", "aider"):
        assert usage.cost is not None and usage.cost > 0
    else:
        assert usage.cost is None, "this CLI reports no cost: it must not read as free"


@pytest.mark.parametrize("kind", ["claude-code", "codex", "gemini-cli"])
def test_a_commit_or_push_the_agent_tries_does_not_land(kind: str, tmp_path: Path, standin: StandIn) -> None:
    """The stand-in asks for `git commit -am wip` then `git push origin HEAD` (aider has no
    shell tool with its preset: --no-suggest-shell-commands, --no-git)."""
    repo, remote = workspace(tmp_path)
    (repo / "README.md").write_text("changed\n")  # something `commit -a` would take
    before, remote_before = refs(repo), git(remote, "for-each-ref")
    outcome, _ = run_preset(kind, "git", tmp_path, standin, repo=repo)
    assert outcome.status is AgentStatus.DONE, outcome.output_tail[-3000:]
    assert refs(repo) == before
    assert git(remote, "for-each-ref") == remote_before
    # the CLI really ran the tool calls (refused or failed) and went on to its last answer
    tool_results = json.dumps(standin.requests[-1].get("body"))
    assert "git push" in json.dumps([entry.get("body") for entry in standin.requests]), tool_results[:2000]


# (preset, stand-in scenario, hours until the reset the stand-in sent, or None: it sends none)
LIMITS = [("claude-code", "limit", 2), ("claude-code", "limitlong", 73), ("codex", "limit", 2),
          ("codex", "limitlong", 73), ("gemini-cli", "limit", None), ("gemini-cli", "limitlong", 73)]


@pytest.mark.parametrize(("kind", "scenario", "hours"), LIMITS, ids=[f"{k}-{s}" for k, s, _ in LIMITS])
def test_a_usage_limit_is_recognised_with_its_reset_time(kind: str, scenario: str, hours: int | None,
                                                         tmp_path: Path, standin: StandIn) -> None:
    """gemini's daily quota says no reset time (its long RetryInfo does); codex prints the
    reset as a local time to the minute, in the TZ the preset gives it."""
    started = time.time()
    outcome, repo = run_preset(kind, scenario, tmp_path, standin)
    assert outcome.status is AgentStatus.USAGE_LIMIT, outcome.output_tail[-3000:]
    if hours is None:
        assert outcome.resets_at is None, outcome
    else:
        assert outcome.resets_at is not None, outcome
        assert abs(outcome.resets_at - (started + hours * 3600)) < 300, (outcome.resets, outcome.resets_at - started)
    assert git(repo, "status", "--porcelain") == ""


def test_a_missing_policy_file_stops_gemini_before_it_runs(tmp_path: Path) -> None:
    """gemini ignores a --policy path that does not exist, and then nothing denies a commit."""
    agent = registry.load("axpipe.agents", "gemini-cli")
    missing = str(tmp_path / "nope.toml")
    params, _ = typed.load_plugin_params(agent, {"command": ["gemini", "--policy", missing]}, "agent", None)
    outcome = agent.run(AgentRequest(prompt="x", prompt_file=tmp_path / "p.md", cwd=tmp_path, env={},
                                     timeout=10, autonomous=True, params=params))
    assert outcome.status is AgentStatus.ERROR
    assert outcome.summary == (f"agent.command: gemini's --policy file {missing} does not exist (gemini would "
                               "ignore it and run without the no-commit rule)")


def test_the_pins_installed_are_the_pins_tested() -> None:
    """What runs is what docs/agents.md names: the installed version of each program."""
    for kind, (registry_name, package, version, _) in agent_clis.PINS.items():
        if agent_clis.unavailable(kind):
            continue
        folder = agent_clis.install(kind)
        if registry_name == "npm":
            manifest = folder.parent / package / "package.json"
            assert json.loads(manifest.read_text())["version"] == version
        else:
            shown = subprocess.run([str(folder / "pip"), "show", package], capture_output=True, text=True).stdout
            assert f"Version: {version}" in shown


def test_the_reasons_the_installer_works_around_still_hold() -> None:
    """tests/agent_clis.py installs claude-code on Node 20 though it asks for Node 22 (its
    native binary runs; the engine check only warns), and gives aider a Python below 3.13 of
    its own. When a pin changes either, this fails: look at the installer again."""
    claude = agent_clis.install("claude-code") if not agent_clis.unavailable("claude-code") else None
    if claude is not None:
        manifest = json.loads((claude.parent / "@anthropic-ai" / "claude-code" / "package.json").read_text())
        assert manifest["engines"]["node"] == ">=22.0.0"
    aider = agent_clis.install("aider") if not agent_clis.unavailable("aider") else None
    if aider is not None:
        shown = subprocess.run([str(aider / "pip"), "show", "-v", "aider-chat"], capture_output=True, text=True)
        metadata = next(Path(line.split(": ", 1)[1]) for line in shown.stdout.splitlines()
                        if line.startswith("Location: "))
        requires = next(line for line in (metadata / "aider_chat-0.86.2.dist-info" / "METADATA").read_text()
                        .splitlines() if line.startswith("Requires-Python: "))
        assert requires == "Requires-Python: <3.13,>=3.10"
        assert agent_clis.AIDER_PYTHONS == ("python3.12", "python3.11", "python3.10")


HELP = {"claude-code": ["--help"], "codex": ["exec", "--help"], "gemini-cli": ["--help"], "aider": ["--help"]}


@pytest.mark.parametrize("kind", list(HELP))
def test_every_switch_of_a_preset_is_in_its_programs_help(kind: str, tmp_path: Path) -> None:
    """The program's own `--help` names every option the preset passes (the no-commit and
    non-interactive ones included): a pin that drops one fails here, not on a user's run."""
    bin_folder = cli_bin(kind)
    agent = registry.load("axpipe.agents", kind)
    params, _ = typed.load_plugin_params(agent, {}, "agent", None)
    program, *words = params.command
    options = {word.split("=")[0] for word in words if word.startswith("--")}
    home = tmp_path / "home"
    home.mkdir()
    shown = subprocess.run([str(bin_folder / program), *HELP[kind]], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "HOME": str(home), "NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout + shown.stderr
    missing = sorted(option for option in options if option not in text)
    assert not missing, f"{program} {' '.join(HELP[kind])} does not list {missing}"


# -- a goal driven by the real CLI ------------------------------------------------------------


def goal_with(repo: Path, tmp_path: Path, kind: str, url: str, *, model: str | None = None) -> Project:
    """The goalkit project (calc.add subtracts) whose agent is the real ``kind`` preset
    pointed at the stand-in: the recipe as a person would write it."""
    project = Project(repo, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env, extra_args = wiring(kind, url, home)
    env = {**env, "HOME": str(home), "PATH": os.pathsep.join([str(cli_bin(kind)), os.environ["PATH"]])}
    write_recipe(repo / "recipes", "calc", f"""name: calc
agent:
  kind: {kind}
  {f"model: {model}" if model else ""}
  timeout: 2m
  env: {json.dumps(env)}
  extra_args: {json.dumps(extra_args)}
goal:
  objective: "calc.add adds its arguments"
  acceptance:
    AC1: {{tag: closes, text: "add() adds", check: unit}}
  checks:
{UNIT_CHECK}""")
    git(repo, "add", "recipes")
    git(repo, "commit", "-qm", "the recipe")
    return project


def test_a_goal_counts_the_tokens_and_cost_the_real_cli_reported(repo: Path, tmp_path: Path,
                                                                 standin: StandIn) -> None:
    standin.reset()
    project = goal_with(repo, tmp_path, "claude-code", standin.url("edit"))
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 6, result.stdout + result.stderr  # edited, but add() still subtracts
    assert (repo / "hello.txt").read_text() == "hello\n"
    budget = project.status()["budget"]
    finished = next(event for event in project.events(result) if event["type"] == "agent.finished")
    assert finished["tokens_in"] > 0 and finished["cost"] > 0
    assert (budget["tokens_used"], budget["cost_used"], budget["unpriced_turns"]) == \
        (finished["tokens_in"] + finished["tokens_out"], round(finished["cost"], 6), 0)


def test_a_goal_whose_real_cli_hits_its_usage_limit_pauses_until_the_reset(repo: Path, tmp_path: Path,
                                                                          standin: StandIn) -> None:
    standin.reset()
    project = goal_with(repo, tmp_path, "codex", standin.url("limit"))
    started = time.time()
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 4, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["status"] == "paused" and "You\u2019ve hit your usage limit" in goal["reason"]
    resumes = datetime.fromisoformat(goal["resumes_at"].replace("Z", "+00:00")).timestamp()
    assert abs(resumes - (started + 2 * 3600)) < 300
    assert project.cli("goal", "resume").exit_code == 6  # not before the reset
    assert git(repo, "status", "--porcelain") == ""
