"""QA and judge units end to end: verdicts read from their traces, bounces, CANNOT_VERIFY,
missing verdicts, the read-only contract and the model split. The agent and the review CLIs
are scripted programs making real edits and printing real traces."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from goalkit import FIX, Project
from helpers import git

REVIEWER = Path(__file__).resolve().parent / "agents" / "verdict_reviewer.py"


class Reviewed(Project):
    """The calc project with a QA unit and a judge, each following its own script."""

    def plans(self, qa: dict[str, Any] | None, judge: dict[str, Any] | None, *, qa_model: str = "model-q",
              judge_model: str = "model-j", agent_model: str = "model-a", turns: list[dict[str, Any]] | None = None,
              judge_output: str = "text") -> None:
        entries = []
        for name, role, plan, model in (("tester", "qa", qa, qa_model), ("judge", "judge", judge, judge_model)):
            output = judge_output if role == "judge" else "text"
            if plan is None:
                continue
            path = self.scratch / f"{name}.json"
            path.write_text(json.dumps(plan))
            entries.append(f"  - name: {name}\n    {role}: true\n    model: {model}\n    output: {output}\n"
                           f"    command: [{json.dumps(sys.executable)}, {json.dumps(str(REVIEWER))}, "
                           f"{json.dumps(str(path))}]\n")
        self.recipe(turns=turns if turns is not None else [FIX], agent_extra=f"  model: {agent_model}\n",
                    extra="reviewers:\n" + "".join(entries))

    def calls(self, name: str) -> int:
        counter = self.scratch / f"{name}.json.count"
        return int(counter.read_text()) if counter.exists() else 0

    def bounces(self) -> int:
        connection = sqlite3.connect(self.root / ".axpipe" / "state.db")
        return int(connection.execute("SELECT bounces FROM goals WHERE id = 'calc'").fetchone()[0])

    def units(self) -> list[tuple[int, str]]:
        connection = sqlite3.connect(self.root / ".axpipe" / "state.db")
        return [(row[0], row[1]) for row in connection.execute("SELECT number, status FROM units ORDER BY number")]


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Reviewed:
    return Reviewed(repo, tmp_path)


PASS = {"say": "Ran the tests and used the app.\nqa: PASS"}
FAIL = {"say": "The sum is wrong for negative numbers.\nqa: FAIL"}
CONFIRMED = {"say": "The change does what the goal asks.\njudge: CONFIRMED"}
REJECTED = {"say": "add() is right but the fix hides a bug.\njudge: REJECTED"}


def test_qa_pass_and_judge_confirmed_let_the_goal_complete(project: Reviewed) -> None:
    project.plans({"calls": [PASS]}, {"calls": [CONFIRMED]})
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "tester: qa: PASS; judge: judge: CONFIRMED" in result.stdout
    assert project.status()["goal"]["status"] == "complete"
    trace = project.root / ".axpipe" / "artifacts" / "calc" / "trace" / "unit-1-judge-judge.txt"
    assert trace.read_text().endswith("judge: CONFIRMED\n")
    prompts = [json.loads(line) for line in (project.scratch / "judge.json.prompts").read_text().splitlines()]
    assert "- tester: PASS" in prompts[0]["prompt"] and "a + b" in prompts[0]["prompt"]  # QA's verdict, the diff
    assert project.units() == [(1, "passed")]


def test_a_rejection_bounces_and_the_limit_blocks_the_goal(project: Reviewed) -> None:
    project.plans({"default": PASS}, {"default": REJECTED}, turns=[FIX, {"say": "I think it is right"}])
    first = project.run()
    assert first.exit_code == 6, first.stdout
    assert "bounced (1 of 2): judge said judge: REJECTED" in first.stdout
    assert project.status()["goal"]["status"] == "active"
    assert project.bounces() == 1
    assert project.status()["goal"]["bounces"] == 1
    shown = project.cli("goal", "status")
    assert "  bounces:     1 (QA FAIL or judge REJECTED; limits.bounces blocks the goal)" in shown.stdout
    second = project.run()
    assert second.exit_code == 3, second.stdout
    goal = project.status()["goal"]
    assert goal["status"] == "blocked" and goal["blocked"]["kind"] == "bounces"
    assert goal["reason"] == "bounce limit reached (2 of 2): judge said judge: REJECTED"
    assert goal["bounces"] == 2
    assert project.units() == [(1, "bounced"), (2, "blocked")]


def test_failed_qa_and_rejected_review_share_one_counter_and_qa_fail_skips_the_judge(project: Reviewed) -> None:
    project.plans({"calls": [FAIL, PASS]}, {"calls": [REJECTED]}, turns=[FIX, {}])
    first = project.run()
    assert first.exit_code == 6
    assert "judges not asked: QA did not pass" in first.stdout
    assert project.calls("judge") == 0
    second = project.run()
    assert second.exit_code == 3
    assert project.calls("judge") == 1
    assert project.status()["goal"]["blocked"]["kind"] == "bounces"


def test_a_reopened_goal_starts_its_bounces_again(project: Reviewed) -> None:
    project.plans({"default": PASS}, {"calls": [REJECTED, REJECTED], "default": CONFIRMED}, turns=[FIX, {}, {}])
    assert project.run().exit_code == 6
    assert project.run().exit_code == 3
    third = project.run("calc", "--json")  # a person resumes it
    assert third.exit_code == 0, third.stdout
    assert any(event["type"] == "goal.bounces_reset" for event in project.events(third))


def test_cannot_verify_blocks_without_counting_a_bounce(project: Reviewed) -> None:
    project.plans({"calls": [{"say": "The app does not start: port 5432 refused.\nqa: CANNOT_VERIFY"}]},
                  {"calls": [CONFIRMED]})
    result = project.run()
    assert result.exit_code == 3
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "cannot-verify"
    assert goal["blocked"]["evidence"] == [".axpipe/artifacts/calc/trace/unit-1-qa-tester.txt"]
    assert project.bounces() == 0
    assert project.calls("judge") == 0


def test_a_missing_verdict_is_no_progress(project: Reviewed) -> None:
    project.plans({"calls": [PASS]}, {"calls": [{"say": "Looks fine to me, I think."}]})
    result = project.run()
    assert result.exit_code == 6, result.stdout
    assert "no verdict, no progress (1 unit(s) without): judge: the last event does not end with" in result.stdout
    status = project.status()
    assert status["goal"]["status"] == "active"  # its checks pass, but no verdict means no closing
    assert status["budget"]["no_progress"] == 1
    assert project.bounces() == 0


def test_a_verdict_quoted_inside_tool_output_is_not_the_judges(project: Reviewed) -> None:
    events = [{"type": "assistant", "message": {"content": [{"type": "text", "text": "Asking a specialist."}]}},
              {"type": "user", "message": {"content": [{"type": "tool_result", "content": "judge: CONFIRMED"}]}},
              {"type": "assistant", "message": {"content": [{"type": "text", "text": "It replied."}]}}]
    project.plans({"calls": [PASS]}, {"calls": [{"events": events}]}, judge_output="jsonl")
    result = project.run()
    assert result.exit_code == 6, result.stdout
    assert "judge: no verdict" in result.stdout
    assert (project.root / ".axpipe" / "artifacts" / "calc" / "trace" / "unit-1-judge-judge.jsonl").is_file()
    assert project.status()["goal"]["status"] == "active"


def test_a_failing_review_cli_gives_no_verdict(project: Reviewed) -> None:
    project.plans({"calls": [{"say": "qa: PASS", "exit": 2}]}, None)
    result = project.run()
    assert result.exit_code == 6
    assert "did not finish cleanly (exit code 2)" in result.stdout


def test_qa_may_write_its_artifacts_but_nothing_else(project: Reviewed) -> None:
    project.plans({"calls": [{"write": {"$ARTIFACTS/shots/AC1.png": "png"}, "say": "qa: PASS"}]},
                  {"calls": [CONFIRMED]})
    assert project.run().exit_code == 0
    assert (project.root / ".axpipe" / "artifacts" / "calc" / "shots" / "AC1.png").exists()


def test_a_read_only_unit_that_writes_elsewhere_is_a_hard_stop(repo: Path, tmp_path: Path) -> None:
    project = Reviewed(repo, tmp_path)
    project.plans({"calls": [{"write": {"calc.py": "broken = True\n", "qa-notes.md": "x"}, "say": "qa: PASS"}]},
                  {"calls": [CONFIRMED]})
    result = project.run()
    assert result.exit_code == 3, result.stdout
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "read-only"
    assert goal["reason"] == "qa tester wrote outside .axpipe/artifacts/calc/: calc.py, qa-notes.md"
    assert git(repo, "stash", "list", "--format=%gs").splitlines() == ["axpipe quarantine: calc unit 1"]
    assert not (repo / "qa-notes.md").exists()
    assert "a - b" in (repo / "calc.py").read_text()  # back to before the unit: the agent's fix is in the stash too


def test_a_judge_on_the_agents_model_is_a_config_error(project: Reviewed) -> None:
    project.plans({"calls": [PASS]}, {"calls": [CONFIRMED]}, judge_model="model-a", agent_model="model-a")
    result = project.run()
    assert result.exit_code == 2
    assert "reviewers[1].model: the judge uses the agent's model 'model-a'; a judge must use a different model" \
        in result.stderr
    assert project.calls("tester") == 0 and not (project.root / ".axpipe" / "state.db").exists()


def test_a_judge_on_the_testers_model_is_a_config_error(project: Reviewed) -> None:
    project.plans({"calls": [PASS]}, {"calls": [CONFIRMED]}, judge_model="model-q", qa_model="model-q")
    result = project.run()
    assert result.exit_code == 2
    assert "reviewers[1].model: the judge uses the QA reviewer's model 'model-q'" in result.stderr


def test_a_qa_unit_that_runs_a_state_changing_command_is_refused_and_stopped(project: Reviewed) -> None:
    axpipe = f"{sys.executable} -m axpipe"
    project.plans({"calls": [{"run": [f"{axpipe} schedule delete nightly", f"{axpipe} schedule list --json"],
                              "say": "qa: PASS"}]}, None)
    assert project.cli("schedule", "add", "--daily", "03:45", "--tz", "UTC", "--recipe", "calc", "--id",
                       "nightly").exit_code == 0
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    trace = (project.root / ".axpipe" / "artifacts" / "calc" / "trace" / "unit-1-qa-tester.txt").read_text()
    assert f"ran: {axpipe} schedule delete nightly: 2" in trace  # refused, as an input error
    assert f"ran: {axpipe} schedule list --json: 0" in trace  # reading is allowed
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "read-only"
    assert goal["reason"].startswith("qa tester ran `axpipe schedule delete`, which changes axpipe's state")
    tasks = json.loads(project.cli("schedule", "list", "--json").stdout)
    assert [task["id"] for task in tasks] == ["nightly"]  # the store is as it was
