"""Recipe libraries: precedence project > env > packages > built-in, extension through Hydra
defaults, `recipes list` and `recipes show`, and bad library settings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CLI
from helpers import write_recipe


@pytest.fixture
def layered(repo: Path, tmp_path: Path) -> dict[str, str]:
    """`shared` in project and env libraries, `demo` shadowed by the env library."""
    project = repo / "team-recipes"
    env = tmp_path / "env-recipes"
    write_recipe(project, "shared", "name: shared\ndescription: from the project\n")
    write_recipe(env, "shared", "name: shared\ndescription: from the env\n")
    write_recipe(env, "demo", "name: demo\ndescription: the env's own demo\n")
    write_recipe(env, "env-only", "name: env-only\ndescription: only in the env\n")
    (repo / "axpipe.yaml").write_text("recipe_paths: [team-recipes]\n")
    return {"AXPIPE_RECIPE_PATH": str(env)}


def test_recipes_list_shows_name_description_and_source(cli: CLI, repo: Path, layered: dict[str, str],
                                                        tmp_path: Path, snapshot: object) -> None:
    result = cli("recipes", "list", env=layered)
    assert result.exit_code == 0
    # Column widths follow the temporary path's length; compare the text, not the padding.
    assert re.sub(r" {2,}", "  ", result.stdout.replace(str(tmp_path), "<tmp>")) == snapshot


def test_precedence_is_project_then_env_then_builtin(cli: CLI, layered: dict[str, str]) -> None:
    listing = {item["name"]: item for item in json.loads(cli("recipes", "list", "--json", env=layered).stdout)}
    assert listing["shared"]["description"] == "from the project"
    assert listing["shared"]["source"] == "project (team-recipes)"
    assert listing["shared"]["shadows"][0].startswith("AXPIPE_RECIPE_PATH")
    assert listing["demo"]["description"] == "the env's own demo"
    assert listing["demo"]["shadows"] == ["built-in"]
    assert listing["env-only"]["source"].startswith("AXPIPE_RECIPE_PATH")


def test_the_winning_recipe_is_the_one_composed(cli: CLI, layered: dict[str, str]) -> None:
    shown = cli("recipes", "show", "shared", env=layered)
    assert shown.exit_code == 0
    assert "description: from the project" in shown.stdout
    ran = cli("run", "recipe=demo", "--cfg", "job", env=layered)
    assert "description: the env's own demo" in ran.stdout


def test_recipes_extend_other_recipes_through_defaults(cli: CLI, repo: Path) -> None:
    library = repo / "recipes"
    write_recipe(library, "base-migration", """
name: base-migration
description: shared by every migration
limits: {bounces: 4}
goal:
  objective: "migrate"
  budget: {time: 2h}
""")
    write_recipe(library, "invoices", """
defaults:
  - base-migration
  - _self_
name: invoices
description: one batch
goal:
  objective: "migrate invoices"
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    shown = cli("recipes", "show", "invoices")
    assert shown.exit_code == 0, shown.stderr
    assert "name: invoices" in shown.stdout
    assert "bounces: 4" in shown.stdout and "time: 2h" in shown.stdout
    assert "objective: migrate invoices" in shown.stdout
    refused = cli("run", "recipe=invoices", "limits.bounces=0")
    assert "limits.bounces: 0 is below the minimum 1" in refused.stderr
    bad_base = cli("run", "recipe=invoices", "--cfg", "job")
    assert bad_base.exit_code == 0


def test_a_problem_names_the_file_it_came_from(cli: CLI, repo: Path) -> None:
    library = repo / "recipes"
    write_recipe(library, "base", "name: base\nlimits: {bounces: 0}\n")
    write_recipe(library, "child", "defaults:\n  - base\n  - _self_\nname: child\n")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    result = cli("run", "recipe=child")
    assert result.exit_code == 2
    assert "limits.bounces: 0 is below the minimum 1  (from recipes/base.yaml)" in result.stderr


def test_recipes_show_unknown_name(cli: CLI) -> None:
    result = cli("recipes", "show", "demoo")
    assert result.exit_code == 2
    assert "unknown recipe 'demoo' (did you mean 'demo'?)" in result.stderr


def test_recipes_show_resolves_on_request(cli: CLI) -> None:
    result = cli("recipes", "show", "demo", "goal.budget.time=30m", "--resolve")
    assert result.exit_code == 0
    assert "time: 30m" in result.stdout


def test_missing_env_folder_is_a_config_error(cli: CLI, tmp_path: Path) -> None:
    result = cli("recipes", "list", env={"AXPIPE_RECIPE_PATH": str(tmp_path / "nope")})
    assert result.exit_code == 2
    assert "AXPIPE_RECIPE_PATH[0]: folder" in result.stderr and "does not exist" in result.stderr


def test_bad_project_file_is_a_config_error(cli: CLI, repo: Path) -> None:
    (repo / "axpipe.yaml").write_text("recipe_path: [recipes]\nrecipe_paths: [missing]\n")
    result = cli("run", "recipe=demo")
    assert result.exit_code == 2
    assert "recipe_path: unknown key; allowed keys: recipe_paths" in result.stderr
    assert "recipe_paths[0]: folder 'missing' does not exist" in result.stderr
    assert f"(from {repo / 'axpipe.yaml'})" in result.stderr
    assert not (repo / ".axpipe").exists()


def test_project_file_that_is_not_yaml(cli: CLI, repo: Path) -> None:
    (repo / "axpipe.yaml").write_text("recipe_paths: [unclosed\n")
    result = cli("recipes", "list")
    assert result.exit_code == 2
    assert "not valid YAML" in result.stderr
