"""Plugins through real entry points: axpipe's own, an example third-party distribution
installed with pip, and a distribution that fails to import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLI
from helpers import RESOURCES, ROOT, git, write_recipe

EXAMPLE = ROOT / "plugins" / "axpipe-example-checks"


def pip_install_target(source: Path, target: Path) -> None:
    """A real `pip install` of ``source`` into ``target`` (put on PYTHONPATH by the tests)."""
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, capture_output=True)


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("example-site")
    pip_install_target(EXAMPLE, target)
    return target


@pytest.fixture(scope="session")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("broken-site")
    pip_install_target(RESOURCES / "broken-plugin", target)
    return target


def with_path(*sites: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(str(site) for site in sites)}


def test_plugins_list_json_pins_its_fields(cli: CLI, snapshot: object) -> None:
    result = cli("plugins", "list", "--json")
    assert result.exit_code == 0
    plugins = json.loads(result.stdout)
    assert all(set(plugin) == {"namespace", "name", "distribution", "module", "error"} for plugin in plugins)
    assert plugins == snapshot


def test_plugins_list_text(cli: CLI, snapshot: object) -> None:
    result = cli("plugins", "list")
    assert result.exit_code == 0
    assert result.stdout == snapshot


def test_unknown_namespace_is_an_input_error(cli: CLI) -> None:
    result = cli("plugins", "list", "--namespace", "axpipe.check")
    assert result.exit_code == 2
    assert "unknown namespace 'axpipe.check' (did you mean 'axpipe.checks'?)" in result.stderr


def test_example_distribution_appears_with_its_distribution(cli: CLI, example_site: Path) -> None:
    result = cli("plugins", "list", "--json", env=with_path(example_site))
    plugins = {(plugin["namespace"], plugin["name"]): plugin for plugin in json.loads(result.stdout)}
    line_limit = plugins[("axpipe.checks", "line-limit")]
    assert line_limit == {"namespace": "axpipe.checks", "name": "line-limit",
                          "distribution": "axpipe-example-checks", "module": "axpipe_example_checks",
                          "error": None}
    assert plugins[("axpipe.recipes", "example")]["error"] is None


def test_example_check_kind_runs_from_a_recipe(cli: CLI, repo: Path, example_site: Path) -> None:
    (repo / "short.py").write_text("x = 1\n")
    (repo / "long.py").write_text("y = 2\n" * 50)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    write_recipe(repo / "recipes", "limits", """
name: limits
goal:
  objective: "modules stay short"
  acceptance:
    AC1: {tag: closes, text: "short modules", check: short}
  checks:
    - {id: short, kind: line-limit, acceptance: [AC1], paths: ["*.py"], max_lines: 10}
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    failing = cli("run", "recipe=limits", env=with_path(example_site))
    assert failing.exit_code == 6, failing.stderr  # the goal stays active
    assert "1 file(s) over 10 lines: long.py (50 lines)" in failing.stdout
    changed = cli("run", "recipe=limits", "goal.checks.0.max_lines=60", env=with_path(example_site))
    assert changed.exit_code == 2 and "check short: params changed" in changed.stderr  # refused before it starts
    assert cli("goal", "clear", env=with_path(example_site)).exit_code == 0
    passing = cli("run", "recipe=limits", "goal.checks.0.max_lines=60", env=with_path(example_site))
    assert passing.exit_code == 0, passing.stderr
    assert "2 file(s) within 60 lines" in passing.stdout


def test_example_distribution_ships_a_recipe_library(cli: CLI, repo: Path, example_site: Path) -> None:
    (repo / "module.py").write_text("x = 1\n" * 20)
    listing = json.loads(cli("recipes", "list", "--json", env=with_path(example_site)).stdout)
    entry = next(item for item in listing if item["name"] == "line-limit")
    assert entry["source"] == "package axpipe-example-checks"
    result = cli("run", "recipe=line-limit", "max_lines=1000", env=with_path(example_site))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 file(s) within 1000 lines" in result.stdout
    assert cli("goal", "clear", env=with_path(example_site)).exit_code == 0
    assert cli("run", "recipe=line-limit", "max_lines=10", env=with_path(example_site)).exit_code == 6


def test_example_check_kind_rejects_bad_params_before_running(cli: CLI, repo: Path, example_site: Path) -> None:
    result = cli("run", "recipe=line-limit", "max_lines=0", env=with_path(example_site))
    assert result.exit_code == 2
    assert "goal.checks[0].max_lines: 0 is below the minimum 1" in result.stderr


def test_broken_plugin_is_listed_with_its_error(cli: CLI, broken_site: Path) -> None:
    result = cli("plugins", "list", "--json", env=with_path(broken_site))
    assert result.exit_code == 0
    broken = next(plugin for plugin in json.loads(result.stdout) if plugin["name"] == "broken")
    assert broken["distribution"] == "axpipe-broken-plugin"
    assert broken["error"].endswith("failed to load: ModuleNotFoundError: No module named "
                                    "'axpipe_dependency_that_is_not_installed'")
    text = cli("plugins", "list", env=with_path(broken_site)).stdout
    assert "broken               BROKEN  axpipe-broken-plugin" in text


def test_a_plugin_that_exits_on_import_is_listed_as_broken(cli: CLI, broken_site: Path) -> None:
    result = cli("plugins", "list", "--json", env=with_path(broken_site))
    assert result.exit_code == 0, result.stderr
    plugins = {plugin["name"]: plugin for plugin in json.loads(result.stdout)}
    assert plugins["exits"]["error"].endswith("failed to load: SystemExit: 3")
    assert plugins["command"]["error"] is None  # the others are still listed


def test_broken_plugin_breaks_only_runs_that_use_it(cli: CLI, repo: Path, broken_site: Path) -> None:
    for name, kind in (("uses-command", "command"), ("uses-broken", "broken")):
        write_recipe(repo / "recipes", name, f"""
name: {name}
goal:
  objective: "x"
  acceptance:
    AC1: {{tag: closes, text: "x", check: c}}
  checks:
    - {{id: c, kind: {kind}, acceptance: [AC1], command: "true"}}
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    fine = cli("run", "recipe=uses-command", env=with_path(broken_site))
    assert fine.exit_code == 0, fine.stderr
    refused = cli("run", "recipe=uses-broken", env=with_path(broken_site))
    assert refused.exit_code == 2
    assert ("goal.checks[0].kind: check kind 'broken' (axpipe.checks, from axpipe-broken-plugin, "
            "axpipe_broken_plugin:BrokenCheck) failed to load: ModuleNotFoundError") in refused.stderr
    write_recipe(repo / "recipes", "uses-exits", "name: uses-exits\ngoal:\n  objective: x\n  acceptance:\n"
                 "    AC1: {tag: closes, text: x, check: c}\n  checks:\n"
                 "    - {id: c, kind: exits, acceptance: [AC1], command: 'true'}\n")
    exiting = cli("run", "recipe=uses-exits", env=with_path(broken_site))
    assert exiting.exit_code == 2  # not the plugin's own exit code 3 ("blocked")
    assert ("goal.checks[0].kind: check kind 'exits' (axpipe.checks, from axpipe-broken-plugin, "
            "axpipe_exiting_plugin:ExitingCheck) failed to load: SystemExit: 3") in exiting.stderr
