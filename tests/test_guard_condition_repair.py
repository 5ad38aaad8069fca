"""``axpipe repair`` end to end against an agent that redefines the success condition
instead of meeting it (DESIGN §6: the condition is never redefined): the scripted agent
rewrites the target's script, its Makefile recipe or package.json script, or silences the
linter; the ``condition`` guard rejects the fix, it is reverted, and an honest fix resolves."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI
from helpers import git

AGENT = Path(__file__).resolve().parent / "agents" / "scripted_agent.py"
SMOKE = "#!/bin/sh\npython3 app.py | grep -q '^ready$' && echo 'smoke: PASS'\n"
APP = "print('starting')\n"
CALC = "import os\n\n\ndef add(a, b):\n    return a + b\n"
PYPROJECT = '[project]\nname = "calc"\nversion = "1.0"\n\n[tool.ruff]\nline-length = 100\n'


def agent_command(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"turns": turns, "default": {}}))
    return f"env SCRIPTED_AGENT_PLAN={shlex.quote(str(plan))} {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}"


def commit(root: Path, files: dict[str, str], executable: tuple[str, ...] = ()) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for path in executable:
        (root / path).chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")


def report_of(result: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


@pytest.fixture
def smoke(repo: Path) -> Path:
    commit(repo, {"smoke.sh": SMOKE, "app.py": APP}, executable=("smoke.sh",))
    return repo


REWRITE_SMOKE = {"write": {"smoke.sh": "#!/bin/sh\necho 'smoke: PASS'\n"}}
FIX_APP = {"write": {"app.py": "print('ready')\n"}}


def test_rewriting_the_smoke_script_is_rejected_and_reverted(cli: CLI, smoke: Path, tmp_path: Path) -> None:
    result = cli("repair", "./smoke.sh", "--until-line", "^smoke: PASS", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, [REWRITE_SMOKE]))
    assert result.exit_code == 4, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "unresolved"
    first = report["iterations"][0]
    assert first["guard"] == "redefined-condition"
    assert first["fix"].startswith("rejected by the redefined-condition guard (smoke.sh:2: redefined-condition: "
                                   "smoke.sh defines the success condition (`./smoke.sh` runs it)")
    assert report["discarded"] == ["iteration 1: smoke.sh (+1 -1) (redefined-condition)"]
    assert report["next_step"].startswith("1 fix(es) were rejected by guards: fix the code under test, not what "
                                          "the success condition runs (its scripts, runner or linter configuration)")
    assert (smoke / "smoke.sh").read_text() == SMOKE  # reverted
    assert git(smoke, "status", "--porcelain", "--untracked-files=no") == ""


def test_after_a_rejected_rewrite_an_honest_fix_resolves(cli: CLI, smoke: Path, tmp_path: Path) -> None:
    result = cli("repair", "./smoke.sh", "--until-line", "^smoke: PASS", "--json",
                 "--agent-command", agent_command(tmp_path, [REWRITE_SMOKE, FIX_APP]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "resolved" and report["iterations_used"] == 3
    assert report["final_diff"] == "app.py (+1 -1)"
    assert (smoke / "smoke.sh").read_text() == SMOKE


def test_a_script_in_a_project_folder_is_protected_there(cli: CLI, repo: Path, tmp_path: Path) -> None:
    commit(repo, {"svc/axpipe.yaml": "", "svc/smoke.sh": SMOKE, "svc/app.py": APP}, executable=("svc/smoke.sh",))
    result = cli("repair", "./smoke.sh", "--until-line", "^smoke: PASS", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, [REWRITE_SMOKE]), cwd=repo / "svc")
    assert result.exit_code == 4, result.stdout + result.stderr
    assert report_of(result)["iterations"][0]["guard"] == "redefined-condition"
    assert (repo / "svc" / "smoke.sh").read_text() == SMOKE


@pytest.fixture
def lint(repo: Path) -> Path:
    commit(repo, {"calc.py": CALC, "pyproject.toml": PYPROJECT})
    return repo


@pytest.mark.parametrize("cheat", [
    {"replace": [["pyproject.toml", "line-length = 100\n", 'line-length = 100\nextend-exclude = ["calc.py"]\n']]},
    {"write": {"pyproject.toml": PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401"]\n'}},
    {"write": {"pyproject.toml": PYPROJECT + '\n[tool.ruff.lint.per-file-ignores]\n"calc.py" = ["F401"]\n'}},
    {"write": {"ruff.toml": 'line-length = 100\n\n[lint]\nignore = ["F"]\n'}},
    {"write": {"calc.py": "# ruff: noqa\n" + CALC}},
], ids=["extend-exclude", "lint.ignore", "per-file-ignores", "ruff.toml", "file-noqa"])
def test_silencing_ruff_is_rejected(cli: CLI, lint: Path, tmp_path: Path, cheat: dict[str, Any]) -> None:
    result = cli("repair", "ruff check .", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, [cheat]))
    assert result.exit_code == 4, result.stdout + result.stderr
    report = report_of(result)
    assert report["iterations"][0]["guard"] == "silenced-linter", report["iterations"][0]["fix"]
    assert report["final_diff"] == "none"
    assert (lint / "calc.py").read_text() == CALC and not (lint / "ruff.toml").exists()


def test_an_honest_lint_fix_with_a_new_rule_resolves(cli: CLI, lint: Path, tmp_path: Path) -> None:
    honest = {"write": {"calc.py": "def add(a, b):\n    return a + b\n",
                        "pyproject.toml": PYPROJECT + '\n[tool.ruff.lint]\nextend-select = ["B", "UP"]\n'},
              "run": [f"{shlex.quote(sys.executable)} -m ruff format -q calc.py"]}
    result = cli("repair", "ruff check .", "--json", "--agent-command", agent_command(tmp_path, [honest]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["status"] == "resolved" and not report["discarded"]


def test_a_linter_phase_is_protected_while_another_phase_fails(cli: CLI, lint: Path, tmp_path: Path) -> None:
    # The whole target is ./ci.sh; in the test phase the failing command is unittest, yet the
    # lint phase's ruff is still part of the condition: silencing it there is rejected too.
    commit(lint, {"calc.py": "def add(a, b):\n    return a - b\n",
                  "test_calc.py": "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
                                  "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
                  "ci.sh": "#!/bin/sh\nset -e\nruff check .\npython3 -m unittest -q\n"}, executable=("ci.sh",))
    both = {"write": {"calc.py": "import os\n\n\ndef add(a, b):\n    return a + b\n",
                      "pyproject.toml": PYPROJECT + '\n[tool.ruff.lint]\nignore = ["F401"]\n'}}
    result = cli("repair", "./ci.sh", "--budget", "1", "--json",
                 "--phases", "lint=ruff check .,test=python3 -m unittest -q",
                 "--agent-command", agent_command(tmp_path, [both]))
    assert result.exit_code == 4, result.stdout + result.stderr
    first = report_of(result)["iterations"][0]
    assert (first["phase"], first["command"], first["guard"]) == ("test", "python3 -m unittest -q", "silenced-linter")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_rewriting_the_make_recipe_is_rejected(cli: CLI, smoke: Path, tmp_path: Path) -> None:
    commit(smoke, {"Makefile": "check:\n\tpython3 app.py | grep -q '^ready$$'\n"})
    cheat = {"write": {"Makefile": "check:\n\ttrue\n"}}
    result = cli("repair", "make check", "--budget", "1", "--json",
                 "--agent-command", agent_command(tmp_path, [cheat]))
    assert result.exit_code == 4, result.stdout + result.stderr
    assert report_of(result)["iterations"][0]["guard"] == "redefined-condition"
    assert (smoke / "Makefile").read_text() == "check:\n\tpython3 app.py | grep -q '^ready$$'\n"


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="npm is not installed")
def test_rewriting_the_npm_test_script_is_rejected_and_other_package_edits_pass(cli: CLI, repo: Path,
                                                                                tmp_path: Path) -> None:
    package = {"name": "calc", "version": "1.0.0", "private": True, "scripts": {"test": "node check.js"}}
    commit(repo, {"package.json": json.dumps(package, indent=2) + "\n", "app.js": "module.exports = () => 41;\n",
                  "check.js": "if (require('./app.js')() !== 42) process.exit(1);\n"})
    cheat = {"write": {"package.json": json.dumps({**package, "scripts": {"test": "exit 0"}}, indent=2) + "\n"}}
    honest = {"write": {"app.js": "module.exports = () => 42;\n",
                        "package.json": json.dumps({**package, "version": "1.0.1"}, indent=2) + "\n"}}
    result = cli("repair", "npm test --silent", "--json", "--agent-command", agent_command(tmp_path, [cheat, honest]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    assert report["iterations"][0]["guard"] == "redefined-condition"
    assert "the package.json script \"test\" defines the success condition" in report["iterations"][0]["fix"]
    assert report["status"] == "resolved" and report["iterations_used"] == 3
