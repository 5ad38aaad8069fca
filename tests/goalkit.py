"""A small project with a real bug, recipes driving the scripted agent, and the CLI around it."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from helpers import Completed, git, run_cli, write_recipe

AGENT = Path(__file__).resolve().parent / "agents" / "scripted_agent.py"

CALC = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return x * 2\n"
TEST_CALC = """import unittest

from calc import add, double


class CalcTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_double(self):
        self.assertEqual(double(4), 8)


if __name__ == "__main__":
    unittest.main()
"""
UNIT_CHECK = '    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q", purpose: "add adds"}\n'
FIX = {"replace": [["calc.py", "a - b", "a + b"]], "tokens": 120, "say": "fixed add()"}


class Project:
    """A git repository with calc.py (add() subtracts) and a recipe library."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root = root
        self.scratch = scratch
        (root / "calc.py").write_text(CALC)
        (root / "test_calc.py").write_text(TEST_CALC)
        (root / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
        (root / ".gitignore").write_text("__pycache__/\n")
        write_recipe(root / "recipes", "placeholder", "name: placeholder\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "calc with a bug")
        self.log = scratch / "prompts.jsonl"
        self.env: dict[str, str] = {}

    def recipe(self, *, turns: list[dict[str, Any]] | None = None, default: dict[str, Any] | None = None,
               name: str = "calc", checks: str | None = None, acceptance: str | None = None,
               goal_extra: str = "", agent_extra: str = "", extra: str = "", agent: bool = True,
               outside: bool = False, kind: str = "command") -> str:
        """Write a recipe; ``outside`` puts it in a library outside the workspace (AXPIPE_RECIPE_PATH),
        where an agent working in the workspace cannot read it; ``kind``: the agent plugin that
        runs the scripted agent (a preset reads its output as its CLI's)."""
        plan = self.scratch / f"{name}-plan.json"
        plan.write_text(json.dumps({"turns": turns or [], "default": default or {}}))
        checks = checks or UNIT_CHECK
        acceptance = acceptance or '    AC1: {tag: closes, text: "add() adds", check: unit}\n'
        agent_section = f"""agent:
  kind: {kind}
  command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]
  env: {{SCRIPTED_AGENT_PLAN: {json.dumps(str(plan))}, SCRIPTED_AGENT_LOG: {json.dumps(str(self.log))}}}
  timeout: 1m
{agent_extra}""" if agent else ""
        body = f"""name: {name}
{agent_section}
goal:
  objective: "calc.add adds its arguments"
  acceptance:
{acceptance}  checks:
{checks}{goal_extra}
{extra}"""
        if outside:
            library = self.scratch / "outside-recipes"
            write_recipe(library, name, body)
            self.env["AXPIPE_RECIPE_PATH"] = str(library)
        else:
            write_recipe(self.root / "recipes", name, body)
        return name

    def cli(self, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Completed:
        return run_cli(*args, cwd=self.root, env={**self.env, **(env or {})}, timeout=timeout)

    def run(self, name: str = "calc", *overrides: str) -> Completed:
        return self.cli("run", f"recipe={name}", *overrides)

    def status(self, *args: str) -> dict[str, Any]:
        result = self.cli("goal", "status", "--json", *args)
        assert result.exit_code == 0, result.stderr
        payload: dict[str, Any] = json.loads(result.stdout)
        return payload

    def prompts(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(line)["prompt"] for line in self.log.read_text().splitlines()]

    def receipts(self) -> list[dict[str, Any]]:
        connection = sqlite3.connect(self.root / ".axpipe" / "state.db")
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute("SELECT * FROM receipts ORDER BY started_at, rowid")]

    def events(self, result: Completed) -> list[dict[str, Any]]:
        return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def project_with_origin(tmp_path: Path) -> Project:
    """calc.py with its bug, on `main`, pushed to a bare repository that is its `origin`
    (``.remote``): what delivery pushes to."""
    root = tmp_path / "work"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    made = Project(root, tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", remote.as_uri())
    git(root, "push", "-q", "origin", "main")
    made.remote = remote  # type: ignore[attr-defined]
    return made
