"""What Hydra makes of the user's input beyond overrides of keys: recipe names that look
like numbers, recipes whose defaults loop back to themselves, flag combinations Hydra
refuses, and the overrides a multirun reports. Every refusal is a config error (exit 2)
that leaves the workspace as it was; nothing the user did is called a bug in axpipe."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import CLI
from helpers import HELLO_GOAL, git, tree, write_recipe

from axpipe import workspace
from axpipe.recipe.hydra_input import quote_recipe_choice, typed_form, user_error


@pytest.fixture
def library(repo: Path) -> Path:
    """A project recipe library with a plain recipe and recipes named like numbers."""
    folder = repo / "recipes"
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(folder, "hello", "name: hello\n" + HELLO_GOAL)
    write_recipe(folder, "2024", "name: '2024'\ndescription: the 2024 batch\n" + HELLO_GOAL)
    write_recipe(folder, "3", "name: '3'\n" + HELLO_GOAL)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "recipes")
    return folder


def normalize(text: str, repo: Path) -> str:
    return text.replace(str(repo), "<repo>")


# -- recipe names Hydra would read as numbers ------------------------------------------------


@pytest.mark.parametrize("name", ["2024", "3"])
def test_a_recipe_named_like_a_number_composes_and_runs(cli: CLI, repo: Path, library: Path, name: str) -> None:
    shown = cli("recipes", "show", name)
    assert (shown.exit_code, shown.stderr) == (0, "")
    assert f"name: '{name}'" in shown.stdout
    printed = cli("run", f"recipe={name}", "--cfg", "job")
    assert (printed.exit_code, printed.stdout) == (0, shown.stdout)
    ran = cli("run", f"recipe={name}")
    assert ran.exit_code == 0, ran.stderr
    [record] = (repo / ".axpipe" / "runs").glob("*/*/run.yaml")
    assert yaml.safe_load(record.read_text())["overrides"] == [f"recipe={name}"]  # as typed, not quoted


def test_a_sweep_over_numbered_recipes_reports_each_name_as_typed(cli: CLI, library: Path) -> None:
    result = cli("run", "-m", "recipe=hello,2024")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == ["job 0: recipe=hello -> exit 0", "job 1: recipe=2024 -> exit 0"]


def test_a_name_quoted_by_the_user_still_works(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe='2024'", "--cfg", "job")
    assert result.exit_code == 0, result.stderr
    assert "description: the 2024 batch" in result.stdout


def test_a_number_that_names_no_recipe_lists_the_recipes(cli: CLI, repo: Path, library: Path) -> None:
    before = tree(repo)
    result = cli("run", "recipe=2025")
    assert result.exit_code == 2
    assert "unknown recipe '2025' (did you mean '2024'?)" in result.stderr
    assert tree(repo) == before


@pytest.mark.parametrize(("arguments", "expected"), [
    (["-m", "recipe=range(1,3)"], "recipe: Config group override must be a string or a list. Got int; "),
    (["recipe=hello", "~recipe=3"], "recipe: Config group override deletion value must be a string; "),
])
def test_a_recipe_choice_hydra_cannot_take_is_a_config_error(cli: CLI, repo: Path, library: Path,
                                                             arguments: list[str], expected: str) -> None:
    before = tree(repo)
    result = cli("run", *arguments)
    assert result.exit_code == 2, result.stderr
    assert expected in result.stderr and "(from command line)" in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert tree(repo) == before


def test_a_number_in_a_defaults_list_is_a_config_error_saying_to_quote_it(cli: CLI, repo: Path,
                                                                          library: Path) -> None:
    write_recipe(library, "unquoted", "defaults:\n  - 2024\n  - _self_\nname: unquoted\n")
    write_recipe(library, "quoted", "defaults:\n  - '2024'\n  - _self_\nname: quoted\n")
    before = tree(repo)
    refused = cli("run", "recipe=unquoted")
    assert refused.exit_code == 2
    assert ("  - defaults: Unsupported type in defaults : int; a recipe name in defaults that looks like a number "
            "needs quotes (- '2024')\n") in refused.stderr
    assert tree(repo) == before
    extended = cli("recipes", "show", "quoted")
    assert extended.exit_code == 0, extended.stderr
    assert "description: the 2024 batch" in extended.stdout and "name: quoted" in extended.stdout


# -- defaults that loop back -----------------------------------------------------------------


@pytest.mark.parametrize("command", [["run", "recipe={}"], ["run", "recipe={}", "--cfg", "job"],
                                     ["recipes", "show", "{}"], ["run", "-m", "recipe=hello,{}"]])
@pytest.mark.parametrize("recipe", ["migration-batch", "itself", "ping"])
def test_defaults_that_loop_back_are_a_config_error_naming_the_cycle(
        cli: CLI, repo: Path, library: Path, command: list[str], recipe: str, snapshot: object) -> None:
    # The project's migration-batch means to extend the built-in one it shadows; `itself`
    # names itself; `ping` and `pong` name each other (one through the absolute form).
    write_recipe(library, "migration-batch", "defaults:\n  - migration-batch\n  - _self_\nname: migration-batch\n")
    write_recipe(library, "itself", "defaults: [itself]\nname: itself\n")
    write_recipe(library, "ping", "defaults:\n  - /recipe: pong\n  - _self_\nname: ping\n")
    write_recipe(library, "pong", "defaults:\n  - ping\n  - _self_\nname: pong\n")
    before = tree(repo)
    result = cli(*[part.format(recipe) for part in command])
    assert result.exit_code == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert normalize(result.stderr, repo) == snapshot
    assert tree(repo) == before


def test_a_recipe_extending_the_one_it_shadows_under_another_name_works(cli: CLI, repo: Path,
                                                                        library: Path) -> None:
    write_recipe(library, "team-migration-batch", "defaults:\n  - migration-batch\n  - _self_\n"
                                                  "name: team-migration-batch\nbatch: payments\n")
    result = cli("recipes", "show", "team-migration-batch", "--resolve")
    assert result.exit_code == 0, result.stderr
    assert "name: team-migration-batch" in result.stdout
    assert "objective: Migrate batch payments of the ledger with parity against export-v1" in result.stdout


# -- flag combinations Hydra refuses ----------------------------------------------------------


@pytest.mark.parametrize(("arguments", "message"), [
    (["-m", "recipe=hello", "--cfg", "job"],
     "Only one of --run, --multirun, --cfg, --info and --shell_completion can be specified"),
    (["--shell-completion"],
     "Expecting one subcommand from ['install', 'uninstall', 'query'] to be set "
     "(e.g. --shell-completion install=bash)"),
    (["recipe=hello", "--resolve"], "The --resolve flag can only be used in conjunction with --cfg or --help"),
])
def test_flag_combinations_hydra_refuses_are_input_errors(cli: CLI, repo: Path, library: Path,
                                                          arguments: list[str], message: str) -> None:
    before = tree(repo)
    result = cli("run", *arguments)
    assert (result.exit_code, result.stderr) == (2, f"axpipe: error: {message}; see axpipe run --help\n")
    assert tree(repo) == before


def test_axpipe_debug_shows_the_traceback_of_a_refused_flag(cli: CLI, library: Path) -> None:
    result = cli("run", "-m", "recipe=hello", "--cfg", "job", env={"AXPIPE_DEBUG": "1"})
    assert result.exit_code == 2
    assert "Traceback" in result.stderr and "ValueError: Only one of --run" in result.stderr


# -- only Hydra's complaints about the user's input are translated -----------------------------


def test_a_value_error_of_hydras_own_making_stays_an_internal_error(repo: Path) -> None:
    from hydra.core.hydra_config import HydraConfig

    project = workspace.load_project(repo)
    try:
        HydraConfig.get()  # a ValueError raised by Hydra, but not about anything the user typed
    except ValueError as error:
        assert user_error(error, project, []) is None
    message = "Only one of --run, --multirun, --cfg, --info and --shell_completion can be specified"
    try:  # Hydra's wording, raised by code that is not Hydra's
        raise ValueError(message)
    except ValueError as error:
        assert user_error(error, project, []) is None
    assert user_error(TypeError(message), project, []) is None


def test_a_recursion_error_without_a_cycle_in_the_defaults_stays_an_internal_error(repo: Path) -> None:
    write_recipe(repo / "recipes", "base", "name: base\n")
    write_recipe(repo / "recipes", "child", "defaults: [base, _self_]\nname: child\n")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    project = workspace.load_project(repo)
    assert user_error(RecursionError("maximum recursion depth exceeded"), project, ["child"]) is None
    assert user_error(RecursionError("maximum recursion depth exceeded"), project, []) is None


# -- the overrides a job reports ----------------------------------------------------------------


def test_a_multirun_reports_the_overrides_the_user_typed(cli: CLI, repo: Path, library: Path) -> None:
    result = cli("run", "-m", "recipe=hello", "goal.budget.steps=1,0", "++goal.budget.time=5m")
    assert result.exit_code == 2  # job 1 is refused: steps must be at least 1
    assert "(from command line: goal.budget.steps=0)" in result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "job 0: recipe=hello goal.budget.steps=1 ++goal.budget.time=5m -> exit 0",
        "job 1: recipe=hello goal.budget.steps=0 ++goal.budget.time=5m -> exit 2"]
    [record] = (repo / ".axpipe" / "runs" / "multirun").glob("*/*/0/run.yaml")
    assert yaml.safe_load(record.read_text())["overrides"] == [
        "recipe=hello", "goal.budget.steps=1", "++goal.budget.time=5m"]


def test_typed_form_undoes_only_axpipes_own_rewrites() -> None:
    typed = ["recipe=a,2024", "goal.budget.steps=1,0", "++limits.bounces=3"]
    assert typed_form("++goal.budget.steps=1", typed) == "goal.budget.steps=1"
    assert typed_form("++limits.bounces=3", typed) == "++limits.bounces=3"
    assert typed_form("recipe='2024'", typed) == "recipe=2024"
    assert typed_form("recipe='2024'", ["recipe='2024'"]) == "recipe='2024'"
    assert quote_recipe_choice("recipe=a, 2024,1.5,true,null,b-2") == "recipe=a,'2024','1.5','true','null',b-2"
    assert quote_recipe_choice("recipe=choice(1,2)") == "recipe=choice(1,2)"
    assert quote_recipe_choice("recipe=demo") == "recipe=demo"
    assert quote_recipe_choice("batch=2024") == "batch=2024"
