"""A third party's guard that fails to import (tests/resources/broken-guard, installed through
a real entry point) breaks only the repairs that name it (DESIGN §10).

Nobody named it: every installed guard applies by default, so the guards that load judge
each fix, and the repair, `axpipe guard` and the report say which one judged nothing.
Named in a recipe or on the command line: refused before anything is written (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLI
from helpers import RESOURCES, git
from test_plugins import pip_install_target
from test_repair import CHEAT, FIX, agent_command, make_calc, report_of

FAILED_TO_LOAD = ("guard 'sloppy' (axpipe.guards, from axpipe-broken-guard, axpipe_broken_guard.guard:SloppyGuard) "
                  "failed to load: ModuleNotFoundError: No module named "
                  "'axpipe_guard_dependency_that_is_not_installed'")


@pytest.fixture(scope="module")
def broken_guard_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("broken-guard-site")
    pip_install_target(RESOURCES / "broken-guard", target)
    return target


@pytest.fixture
def env(broken_guard_site: Path, tmp_path: Path) -> dict[str, str]:
    recipes = tmp_path / "recipes"  # outside the repository: a refusal must leave it as it was
    recipes.mkdir()
    return {"PYTHONPATH": str(broken_guard_site), "AXPIPE_RECIPE_PATH": str(recipes)}


def write_repair_recipe(env: dict[str, str], name: str, agent: str, extra: str = "") -> None:
    body = (f"# @package _global_\nname: {name}\nrepair:\n  target: \"python3 -m unittest -q\"\n"
            f"  agent: {{kind: command, command: {json.dumps(agent)}}}\n{extra}")
    (Path(env["AXPIPE_RECIPE_PATH"]) / f"{name}.yaml").write_text(body)


def untouched(repo: Path) -> list[str]:
    """What is in ``repo`` besides git: a refused run must add nothing (no .axpipe/)."""
    return sorted(path.name for path in repo.iterdir() if path.name != ".git")


def test_the_broken_guard_is_installed_and_listed_as_broken(cli: CLI, env: dict[str, str]) -> None:
    listed = json.loads(cli("plugins", "list", "--json", env=env).stdout)
    [sloppy] = [plugin for plugin in listed if plugin["name"] == "sloppy"]
    assert (sloppy["namespace"], sloppy["distribution"], sloppy["error"]) == (
        "axpipe.guards", "axpipe-broken-guard", FAILED_TO_LOAD)


# -- nobody named it: the working guards judge, the broken one is reported ----------------


def test_a_recipe_repair_runs_with_the_guards_that_load(cli: CLI, repo: Path, env: dict[str, str],
                                                        tmp_path: Path) -> None:
    make_calc(repo)
    write_repair_recipe(env, "fixer", agent_command(tmp_path, [FIX]))
    result = cli("run", "recipe=fixer", env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"  warning: {FAILED_TO_LOAD}, so it judged nothing\n" in result.stdout
    [report] = (repo / ".axpipe" / "runs").glob("*/*/report.json")
    payload = json.loads(report.read_text())
    assert payload["status"] == "resolved" and payload["final_diff"] == "calc.py (+1 -1)"
    # resolved, because the condition was verified by running the target; what the broken
    # guard would have looked for was not: the report says so, with who and why
    assert (f"{FAILED_TO_LOAD}, so it judged none of the fixes (only condition, javascript, python did)"
            in payload["not_validated"])
    [events] = (repo / ".axpipe" / "runs").glob("*/*/events.jsonl")
    [unavailable] = [event for line in events.read_text().splitlines()
                     if (event := json.loads(line))["type"] == "repair.guard_unavailable"]
    assert (unavailable["guard"], unavailable["distribution"], unavailable["error"]) == (
        "sloppy", "axpipe-broken-guard", FAILED_TO_LOAD)


def test_the_guards_that_load_still_reject_a_cheating_fix(cli: CLI, repo: Path, env: dict[str, str],
                                                          tmp_path: Path) -> None:
    make_calc(repo)
    result = cli("repair", "python3 -m unittest -q", "--json", "--budget", "1", "--allow-test-edits",
                 "--agent-command", agent_command(tmp_path, [CHEAT]), env=env)
    assert result.exit_code == 4, result.stdout + result.stderr
    report = report_of(result)
    assert report["iterations"][0]["guard"] == "skipped-test"
    assert "skipped" not in (repo / "test_calc.py").read_text()  # the cheating edit was reverted
    assert any(item.startswith(FAILED_TO_LOAD) for item in report["not_validated"])


def test_the_repair_command_resolves_with_a_broken_guard_installed(cli: CLI, repo: Path, env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    make_calc(repo)
    result = cli("repair", "python3 -m unittest -q", "--agent-command", agent_command(tmp_path, [FIX]), env=env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "- Status: resolved" in result.stdout
    assert f"{FAILED_TO_LOAD}, so it judged none of the fixes" in result.stdout


def test_the_guard_command_judges_with_the_guards_that_load(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    make_calc(repo)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    honest = cli("guard", "--base", "HEAD", env=env)
    assert honest.exit_code == 0, honest.stderr
    assert honest.stdout == ("guard: nothing fired; judged 1 changed file of `git diff HEAD` with condition, "
                             "javascript, python; not by sloppy, which failed to load\n")
    assert honest.stderr == f"warning: {FAILED_TO_LOAD}, so it judged nothing\n"
    git(repo, "checkout", "-q", "calc.py")
    (repo / "test_calc.py").write_text((repo / "test_calc.py").read_text().replace(
        "    def test_add(self):", "    @unittest.skip('flaky')\n    def test_add(self):"))
    cheating = cli("guard", "--base", "HEAD", "--json", env=env)
    assert cheating.exit_code == 1, cheating.stderr
    assert [finding["guard"] for finding in json.loads(cheating.stdout)] == ["skipped-test"]
    assert cheating.stderr == f"warning: {FAILED_TO_LOAD}, so it judged nothing\n"


# -- named: refused before anything is written ---------------------------------------------


def test_a_recipe_naming_the_broken_guard_is_refused_before_anything_is_written(
        cli: CLI, repo: Path, env: dict[str, str]) -> None:
    write_repair_recipe(env, "named", "true", "  guards: [python, sloppy]\n")
    result = cli("run", "recipe=named", env=env)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert f"  - repair.guards[1]: {FAILED_TO_LOAD}" in result.stderr
    assert untouched(repo) == ["README.md"]


def test_a_recipe_with_an_empty_guard_list_is_refused_before_anything_is_written(
        cli: CLI, repo: Path, env: dict[str, str]) -> None:
    write_repair_recipe(env, "none", "true", "  guards: []\n")
    result = cli("run", "recipe=none", env=env)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert ("  - repair.guards: name at least one guard, or leave `guards` out for every installed one; "
            "available: condition, javascript, python, sloppy") in result.stderr
    assert untouched(repo) == ["README.md"]


@pytest.mark.parametrize("guards", ["sloppy", "python,sloppy"])
def test_the_repair_command_naming_the_broken_guard_is_refused_before_anything_is_written(
        cli: CLI, repo: Path, env: dict[str, str], guards: str) -> None:
    result = cli("repair", "python3 -c pass", "--agent-command", "true", "--guards", guards, env=env)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr == f"axpipe: error: --guards: {FAILED_TO_LOAD}\n"
    assert "- Status: input-error" in result.stdout
    assert untouched(repo) == ["README.md"]


def test_the_guard_command_naming_the_broken_guard_is_refused(cli: CLI, repo: Path, env: dict[str, str]) -> None:
    (repo / "README.md").write_text("changed\n")
    result = cli("guard", "--guards", "python,sloppy", env=env)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr == f"axpipe: error: {FAILED_TO_LOAD}\n"
    assert result.stdout == ""


def test_without_the_broken_guard_nothing_is_reported(cli: CLI, repo: Path) -> None:
    # The same change without the plugin installed: no warning, the usual guards.
    (repo / "README.md").write_text("changed\n")
    result = cli("guard")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.endswith("with condition, javascript, python\n")
