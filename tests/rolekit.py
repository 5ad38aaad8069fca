"""A project whose goal works through a task file: planner, implementer, QA and judge are
scripted programs (tests/agents/careful_agent.py, verdict_reviewer.py) that read their real
prompts and make real edits in a real git repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from goalkit import Project
from helpers import Completed

AGENTS = Path(__file__).resolve().parent / "agents"
CAREFUL = AGENTS / "careful_agent.py"
REVIEWER = AGENTS / "verdict_reviewer.py"
CRITERION = "1. **[closes]** add() adds: `python3 -m unittest -q`"
FIX = ["calc.py", "a - b", "a + b"]
PASS = {"say": "Ran the tests.\nqa: PASS"}
CONFIRMED = {"say": "The change does what the goal asks.\njudge: CONFIRMED"}


class TaskProject(Project):
    """The calc project (add() subtracts) with a recipe declaring roles."""

    def roles(self, *, planner: dict[str, Any] | None = None, implementer: dict[str, Any] | None = None,
              prototype: dict[str, Any] | None = None,
              qa: dict[str, Any] | None = None, judge: dict[str, Any] | None = None, scope: str | None = "[calc.py]",
              goal_extra: str = "", extra: str = "", name: str = "tasks") -> str:
        sections = []
        for role, plan, model in (("planner", planner, "model-p"), ("prototype", prototype, "model-s"),
                                  ("implementer", implementer, "model-a")):
            if plan is None:
                continue
            path = self.scratch / f"{role}.json"
            path.write_text(json.dumps(plan))
            sections.append(f"  {role}:\n    kind: command\n    model: {model}\n"
                            f"    command: [{json.dumps(sys.executable)}, {json.dumps(str(CAREFUL))}]\n"
                            f"    env: {{CAREFUL_AGENT_PLAN: {json.dumps(str(path))}}}\n    timeout: 1m\n")
        for role, plan, model in (("qa", qa, "model-q"), ("judge", judge, "model-j")):
            if plan is None:
                continue
            path = self.scratch / f"{role}.json"
            path.write_text(json.dumps(plan))
            sections.append(f"  {role}:\n    model: {model}\n"
                            f"    command: [{json.dumps(sys.executable)}, {json.dumps(str(REVIEWER))}, "
                            f"{json.dumps(str(path))}]\n")
        body = f"""name: {name}
roles:
{''.join(sections)}goal:
  objective: "calc.add adds its arguments"
{goal_extra}{f"scope: {scope}" if scope is not None else ""}
{extra}"""
        (self.root / "recipes" / f"{name}.yaml").write_text("# @package _global_\n" + body)
        return name

    def task_text(self, goal: str = "tasks") -> str:
        return (self.root / ".axpipe" / "tasks" / f"{goal}.md").read_text()

    def prompts_of(self, role: str) -> list[str]:
        log = self.scratch / f"{role}.json.prompts"
        if not log.exists():
            return []
        return [json.loads(line)["prompt"] for line in log.read_text().splitlines()]

    def run_tasks(self, *overrides: str) -> Completed:
        return self.cli("run", "recipe=tasks", *overrides)
