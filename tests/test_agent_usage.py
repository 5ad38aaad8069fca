"""The presets' readers of what each coding CLI printed: usage, cost, usage limits.

The inputs are the real programs' output (``agent_outputs/``, each file says where it came
from); ``test_agent_presets_real.py`` runs the programs themselves.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from axpipe_builtin import agent_usage

from axpipe.interfaces import AgentRequest, AgentStatus, Usage
from axpipe.plugin import registry
from axpipe.recipe import typed

OUTPUTS = Path(__file__).parent / "agent_outputs"


def text(name: str) -> str:
    return (OUTPUTS / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "usage"), [
    ("claude-code/success.json.txt", Usage(1434, 56, 0.006096000000000001)),
    # three API calls, cache reads counted as input
    ("claude-code/success-with-denials.stream-json.txt", Usage(4302, 168, 0.018288000000000002)),
    # an error result zeroes `usage` but keeps modelUsage and the cost
    ("claude-code/max-budget.stream-json.txt", Usage(1434, 56, 0.0030480000000000004)),
])
def test_claude_codes_usage_and_cost_come_from_its_result(name: str, usage: Usage) -> None:
    report = agent_usage.claude_code(text(name))
    assert report.usage == usage
    assert report.limit is None


@pytest.mark.parametrize(("name", "resets_at", "resets"), [
    ("claude-code/usage-limit-5h.stream-json.txt", 1796672360.0, "7:39pm (UTC)"),
    ("claude-code/usage-limit-weekly.stream-json.txt", 1796928671.0, "Dec 10, 6:51pm (UTC)"),
])
def test_claude_codes_usage_limit_carries_its_reset(name: str, resets_at: float, resets: str) -> None:
    report = agent_usage.claude_code(text(name))
    assert report.limit is not None and report.limit.startswith("You've hit your ")
    assert report.resets_at == resets_at
    assert report.resets == resets


def test_an_api_key_429_is_a_limit_without_a_reset() -> None:
    report = agent_usage.claude_code(text("claude-code/api-key-429.stream-json.txt"))
    assert report.limit is not None and "429" in report.limit
    assert report.resets_at is None


def test_not_logged_in_is_a_failure_not_a_limit() -> None:
    report = agent_usage.claude_code(text("claude-code/not-logged-in.stream-json.txt"))
    assert report.limit is None
    assert report.failure == "Not logged in · Please run /login"


def test_codex_reports_tokens_and_no_cost() -> None:
    report = agent_usage.codex(text("codex/success.jsonl.txt"))
    assert report.usage == Usage(3702, 168, None)
    assert report.limit is None


def test_codex_usage_limit_today_resets_at_that_time_or_tomorrow() -> None:
    before = datetime(2026, 12, 7, 17, 41, tzinfo=UTC).timestamp()
    report = agent_usage.codex(text("codex/usage-limit-today.jsonl.txt"), "UTC", now=before)
    assert report.limit is not None and report.limit.startswith("You\u2019ve hit your usage limit.")
    assert report.resets == "7:41 PM"
    assert report.resets_at == datetime(2026, 12, 7, 19, 41, tzinfo=UTC).timestamp()
    after = datetime(2026, 12, 7, 20, 0, tzinfo=UTC).timestamp()
    assert agent_usage.codex(text("codex/usage-limit-today.jsonl.txt"), "UTC", now=after).resets_at == \
        datetime(2026, 12, 8, 19, 41, tzinfo=UTC).timestamp()


def test_codex_usage_limit_later_names_its_date_in_the_zone_codex_ran_in() -> None:
    report = agent_usage.codex(text("codex/usage-limit-later.jsonl.txt"), "Europe/Lisbon")
    assert report.resets == "Dec 10th, 2026 6:51 PM"
    assert report.resets_at == datetime(2026, 12, 10, 18, 51, tzinfo=UTC).timestamp()  # Lisbon is UTC in December


def test_codex_401_is_neither_usage_nor_limit() -> None:
    report = agent_usage.codex(text("codex/unauthorized.jsonl.txt"))
    assert report.usage is None and report.limit is None


def test_gemini_reports_tokens_with_thinking_as_output_and_no_cost() -> None:
    report = agent_usage.gemini_cli(text("gemini-cli/success-with-denials.stream-json.txt"))
    assert report.usage == Usage(4936, 5196 - 4936, None)
    assert report.limit is None and report.failure is None


def test_gemini_daily_quota_is_a_limit_without_a_reset() -> None:
    report = agent_usage.gemini_cli(text("gemini-cli/quota-daily.stream-json.txt"))
    assert report.limit is not None and "exhausted your daily quota" in report.limit
    assert report.resets_at is None


def test_gemini_retry_after_sets_the_reset() -> None:
    report = agent_usage.gemini_cli(text("gemini-cli/quota-retry-after.stream-json.txt"), now=1000.0)
    assert report.resets_at == 1000.0 + 262794
    assert report.resets == "in 262794 s"


def test_aider_usage_and_cost_come_from_its_analytics_log() -> None:
    report = agent_usage.aider(text("aider/success.txt"), OUTPUTS / "aider/success.analytics.jsonl")
    assert report.usage == Usage(1234, 56, 0.0002187)
    assert report.limit is None and report.failure is None


def test_aider_without_its_log_reports_no_usage(tmp_path: Path) -> None:
    assert agent_usage.aider(text("aider/success.txt"), tmp_path / "missing.jsonl").usage is None


def test_aiders_rate_limit_is_recognised_though_it_exits_0() -> None:
    """The real aider retried a 429 for 81 s here, then exited 0: too slow to run in the suite."""
    report = agent_usage.aider(text("aider/rate-limit.txt"), OUTPUTS / "aider/rate-limit.analytics.jsonl")
    assert report.limit is not None and report.limit.startswith("litellm.RateLimitError")
    assert report.usage == Usage(0, 0, 0.0)


def test_aiders_authentication_failure_fails_the_turn_though_it_exits_0(tmp_path: Path) -> None:
    report = agent_usage.aider(text("aider/auth-failure.txt"), tmp_path / "none.jsonl")
    assert report.failure is not None and report.failure.startswith("litellm.AuthenticationError")
    assert report.limit is None


# -- what recipe validation refuses before anything runs (exit 2) ---------------------------


@pytest.mark.parametrize(("agent", "budget", "message"), [
    ("{kind: aider}", "", "  - agent.model: the aider preset needs a model (e.g. agent.model=openai/gpt-4o-mini); "
                          "without one aider waits minutes for a browser login"),
    ("{kind: codex}", "  budget: {cost: 1}\n", "  - goal.budget.cost: the 'codex' agent's program reports no cost "
                                               "(tokens only), so a cost budget could not be kept: use "
                                               "goal.budget.tokens, or an agent that reports cost"),
    ("{kind: gemini-cli, command: [gemini, --policy, /nonexistent/policy.toml]}", "",
     "  - agent.command: gemini's --policy file /nonexistent/policy.toml does not exist (gemini would ignore it "
     "and run without the no-commit rule)"),
], ids=["aider-without-model", "codex-with-cost-budget", "gemini-missing-policy"])
def test_a_preset_the_recipe_cannot_run_is_refused_before_anything_runs(cli: Any, repo: Path, agent: str,
                                                                       budget: str, message: str) -> None:
    (repo / "recipes").mkdir()
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (repo / "recipes" / "r.yaml").write_text(
        f"# @package _global_\nname: r\nagent: {agent}\ngoal:\n  objective: o\n  acceptance:\n"
        "    A1: {tag: closes, text: t, check: c}\n  checks:\n"
        "    - {id: c, acceptance: [A1], command: \"python3 -c pass\"}\n" + budget)
    result = cli("run", "recipe=r")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert not (repo / ".axpipe" / "state.db").exists()


def test_the_codex_preset_reads_the_reset_in_the_zone_it_gave_codex(tmp_path: Path) -> None:
    """codex prints the reset as a local time: the preset runs it with TZ=UTC unless the
    recipe's `env` sets a zone, and reads the time in that zone. The program here prints
    what codex printed at its limit (agent_outputs/codex/usage-limit-later)."""
    line = next(line for line in text("codex/usage-limit-later.jsonl.txt").splitlines() if '"turn.failed"' in line)
    script = tmp_path / "codex.py"
    script.write_text(f"import os\nprint(os.environ['TZ'])\nprint({line!r})\n")
    agent = registry.load("axpipe.agents", "codex")
    prompt = tmp_path / "prompt.md"
    prompt.write_text("work\n")
    outcomes = {}
    for env in ({}, {"TZ": "America/New_York"}):
        params, problems = typed.load_plugin_params(agent, {"command": [sys.executable, str(script)], "env": env},
                                                    "agent", None)
        assert not problems
        outcomes[env.get("TZ", "UTC")] = agent.run(AgentRequest(prompt="work", prompt_file=prompt, cwd=tmp_path,
                                                                env={}, timeout=30, autonomous=True, params=params))
    for zone, outcome in outcomes.items():
        assert outcome.status is AgentStatus.USAGE_LIMIT
        assert outcome.output_tail.splitlines()[0].strip() == zone
    # Dec 10th, 2026 6:51 PM: in UTC, and five hours later in New York's winter time
    assert outcomes["UTC"].resets_at == datetime(2026, 12, 10, 18, 51, tzinfo=UTC).timestamp()
    assert outcomes["America/New_York"].resets_at == datetime(2026, 12, 10, 23, 51, tzinfo=UTC).timestamp()
