"""Recipe validation: every problem listed at once, each with its config path."""

from __future__ import annotations

from typing import Any

import pytest

from axpipe.errors import ConfigError, ExitCode
from axpipe.recipe import schema
from axpipe.recipe.validation import validate_recipe

GOAL = {
    "objective": "totals are right",
    "acceptance": {"AC1": {"tag": "closes", "text": "totals", "check": "tests"}},
    "checks": [{"id": "tests", "kind": "command", "acceptance": ["AC1"], "command": "pytest -q"}],
}


def problems_of(config: dict[str, Any], unresolved: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as raised:
        validate_recipe(config, unresolved or config, recipe_name="r")
    assert raised.value.exit_code == ExitCode.INPUT_ERROR
    return [(problem.path, problem.message) for problem in raised.value.problems]


def paths_of(config: dict[str, Any], unresolved: dict[str, Any] | None = None) -> list[str]:
    return [path for path, _ in problems_of(config, unresolved)]


def test_a_minimal_recipe_gets_its_defaults() -> None:
    recipe, variables = validate_recipe({"name": "r"}, {"name": "r"})
    assert recipe.name == "r"
    assert recipe.goal is None
    assert recipe.limits.bounces == 2
    assert recipe.limits.unit_timeout == 3600
    assert variables == {}


def test_a_goal_recipe_is_typed() -> None:
    recipe, _ = validate_recipe({"name": "r", "goal": GOAL}, {"name": "r", "goal": GOAL})
    assert recipe.goal is not None
    check = recipe.goal.checks[0]
    assert (check.id, check.kind, check.timeout) == ("tests", "command", 600)
    assert recipe.goal.budget.steps == 20000


def test_name_is_required() -> None:
    assert paths_of({}) == ["name"]


@pytest.mark.parametrize(("value", "message"), [
    ("10s", "10s is below the minimum 30s"),
    ("25h", "25h is above the maximum 1d"),
    ("soon", "expected a duration such as 30s, 5m, 2h, 1h30m or integer seconds, got 'soon'"),
])
def test_loop_interval_bounds(value: str, message: str) -> None:
    assert problems_of({"name": "r", "loop": {"interval": value, "command": "true"}}) == [
        ("loop.interval", message)]


def test_loop_max_runs_is_capped_at_500() -> None:
    assert problems_of({"name": "r", "loop": {"interval": "1m", "command": "true", "max_runs": 501}}) == [
        ("loop.max_runs", "501 is above the maximum 500")]


AGENT = {"kind": "command", "command": "my-coding-cli {prompt_file}"}


@pytest.mark.parametrize("value", [0, -1, 33, 500, 2.5, "4", True, None])
def test_repair_budget_is_a_guard_never_clamped(value: Any) -> None:
    assert problems_of({"name": "r", "agent": AGENT, "repair": {"target": "pytest", "budget": value}}) == [
        ("repair.budget", f"budget must be an integer from 1 to 32, got {value!r}")]


def test_repair_targets_may_be_a_list_and_each_needs_an_agent() -> None:
    config = {"name": "r", "repair": [{"target": "ruff check .", "agent": {"kind": "command", "command": "x"}},
                                      {"target": "pytest", "budget": 40}]}
    assert problems_of(config) == [("repair[1].budget", "budget must be an integer from 1 to 32, got 40"),
                                   ("repair[1].agent", "a repair needs an agent to make its fixes: declare `agent:` "
                                                       "(here or at the top)")]


@pytest.mark.parametrize(("value", "message"), [
    ("0s", "0s is below the minimum 1s"),
    ("73h", "73h is above the maximum 3d"),
])
def test_max_run_duration_bounds(value: str, message: str) -> None:
    entry = {"id": "nightly", "cron": "0 2 * * *", "recipe": "r", "max_run_duration": value}
    assert problems_of({"name": "r", "schedule": [entry]}) == [("schedule[0].max_run_duration", message)]


def test_unknown_keys_are_named_with_a_hint() -> None:
    found = problems_of({"name": "r", "goal": {**GOAL, "objectiv": "x"}})
    assert found == [("goal.objectiv", "unknown key (did you mean 'objective'?); allowed keys: objective, "
                      "id, assure, acceptance, sources, source_paths, checks, budget, no_progress_limit, protect, "
                      "allow_test_edits, task_file")]


def test_wrong_types_are_named() -> None:
    found = problems_of({"name": "r", "goal": {**GOAL, "assure": "yes", "source_paths": "src"}})
    assert found == [("goal.assure", "expected true or false, got 'yes'"),
                     ("goal.source_paths", "expected a list, got 'src'")]


@pytest.mark.parametrize(("section", "expected"), [
    ({"goal": {**GOAL, "acceptance": ["AC1"]}}, ("goal.acceptance", "expected a mapping, got a list")),
    ({"goal": {**GOAL, "checks": {"id": "tests"}}}, ("goal.checks", "expected a list, got a mapping")),
    ({"schedule": {"id": "nightly"}}, ("schedule", "expected a list, got a mapping")),
    ({"reviewers": "codex"}, ("reviewers", "expected a list, got 'codex'")),
    ({"repair": 5}, ("repair", "expected a mapping or a list, got int 5")),
    ({"limits": [1]}, ("limits", "expected a mapping, got a list")),
])
def test_a_section_of_the_wrong_shape_is_one_problem_not_a_crash(section: dict[str, Any],
                                                                 expected: tuple[str, str]) -> None:
    # The cross-field rules run after the types; they must see the section's default, not
    # None, and must not add problems of their own about a section already reported.
    assert problems_of({"name": "r", **section}) == [expected]


def test_a_wrong_shape_hides_only_the_problems_it_would_cause() -> None:
    # `acceptance: AC1` in one check: the coverage of AC1 is not judged on the empty list
    # that stands in, but the other check's unknown kind and unknown criterion still are.
    checks = [{"id": "tests", "acceptance": "AC1", "command": "pytest -q"},
              {"id": "lint", "kind": "comand", "acceptance": ["AC9"], "command": "ruff check ."}]
    found = problems_of({"name": "r", "goal": {**GOAL, "checks": checks}})
    assert [path for path, _ in found] == ["goal.checks[0].acceptance", "goal.checks[1].acceptance[0]",
                                           "goal.checks[1].kind"]
    assert found[0][1] == "expected a list, got 'AC1'"
    assert found[1][1] == "unknown acceptance id 'AC9'; declared: AC1"
    assert found[2][1].startswith("unknown check kind 'comand' (did you mean 'command'?)")


def test_an_unknown_sample_workspace_is_a_config_error() -> None:
    assert problems_of({"name": "r", "workspace": {"sample": "nosuch"}}) == [
        ("workspace.sample", "unknown sample project 'nosuch'; available: invoices, ledger, review, tasks")]


def test_a_recipe_without_its_package_header_is_told_so_once() -> None:
    # Without `# @package _global_` Hydra nests the file's keys under the `recipe` group.
    assert problems_of({"recipe": {"name": "r", "goal": GOAL}}) == [
        ("recipe", "the recipe's keys are nested under `recipe:`; start the recipe file with the line "
                   "`# @package _global_`")]


def test_unknown_plugin_kind_lists_what_is_available() -> None:
    checks = [{"id": "tests", "kind": "comand", "acceptance": ["AC1"], "command": "pytest"}]
    found = problems_of({"name": "r", "goal": {**GOAL, "checks": checks}})
    assert found == [("goal.checks[0].kind", "unknown check kind 'comand' (did you mean 'command'?); "
                      "available: browser, command, git-scope, idempotent, no-match, oracle, pytest, receipts "
                      "(entry point group axpipe.checks)")]


def test_acceptance_not_covered_by_any_check() -> None:
    goal = {**GOAL, "acceptance": {**GOAL["acceptance"], "AC2": {"tag": "closes", "text": "lint clean"}}}
    assert problems_of({"name": "r", "goal": goal}) == [
        ("goal.acceptance.AC2", "acceptance id not covered by any check: criterion AC2 is `closes`, so a check "
                                "must list it in `acceptance` (or name the check here with `check: <id>`)")]


def test_found_and_process_criteria_need_no_check() -> None:
    acceptance = {**GOAL["acceptance"], "AC3": {"tag": "found", "text": "page shows totals"},
                  "AC4": {"tag": "process", "text": "a person reads the changelog"}}
    config = {"name": "r", "goal": {**GOAL, "acceptance": acceptance}}
    recipe, _ = validate_recipe(config, config)
    assert recipe.goal is not None and set(recipe.goal.acceptance) == {"AC1", "AC3", "AC4"}


def test_check_referring_to_unknown_acceptance_and_criterion_to_unknown_check() -> None:
    goal = {**GOAL, "acceptance": {"AC1": {"tag": "closes", "check": "nope"}},
            "checks": [{"id": "tests", "acceptance": ["AC9"], "command": "pytest"}]}
    assert paths_of({"name": "r", "goal": goal}) == [
        "goal.checks[0].acceptance[0]", "goal.acceptance.AC1.check", "goal.acceptance.AC1"]


def test_duplicate_check_ids() -> None:
    checks = [*GOAL["checks"], {"id": "tests", "acceptance": ["AC1"], "command": "true"}]
    assert problems_of({"name": "r", "goal": {**GOAL, "checks": checks}}) == [
        ("goal.checks[1].id", "duplicate check id 'tests' (also goal.checks[0])")]


def test_every_problem_is_listed_at_once() -> None:
    config = {"name": "r", "desciption": "typo", "loop": {"interval": "10s", "command": "true"}, "agent": AGENT,
              "repair": {"target": "pytest", "budget": 500},
              "goal": {**GOAL, "budget": {"time": "forever"}}}
    assert paths_of(config) == ["desciption", "loop.interval", "repair.budget", "goal.budget.time"]


def test_a_referenced_top_level_scalar_is_a_variable() -> None:
    config = {"name": "r", "batch": "invoices", "description": "batch invoices"}
    unresolved = {"name": "r", "batch": "invoices", "description": "batch ${batch}"}
    recipe, variables = validate_recipe(config, unresolved)
    assert variables == {"batch": "invoices"}
    assert recipe.description == "batch invoices"


def test_an_unreferenced_top_level_scalar_is_an_unknown_key() -> None:
    found = problems_of({"name": "r", "desciption": "typo"})
    assert found[0][0] == "desciption"
    assert found[0][1].startswith("unknown key (did you mean 'description'?)")


def test_inline_plugin_params_are_validated_against_the_kind() -> None:
    checks = [{"id": "tests", "kind": "oracle", "acceptance": ["AC1"], "command": "x", "lines": "PASS"}]
    assert paths_of({"name": "r", "goal": {**GOAL, "checks": checks}}) == [
        "goal.checks[0].lines", "goal.checks[0].line"]


def test_inline_plugin_params_become_typed() -> None:
    checks = [{"id": "tests", "kind": "oracle", "acceptance": ["AC1"], "command": "x", "line": "^PASS"}]
    config = {"name": "r", "goal": {**GOAL, "checks": checks}}
    recipe, _ = validate_recipe(config, config)
    assert recipe.goal is not None
    assert recipe.goal.checks[0].params.line == "^PASS"


def test_repair_success_kinds() -> None:
    config = {"name": "r", "agent": AGENT, "repair": {"target": "t", "success": {"kind": "oracle", "line": "^ok"}}}
    recipe, _ = validate_recipe(config, config)
    assert isinstance(recipe.repair, schema.Repair) and recipe.repair.success.params.line == "^ok"
    assert paths_of({"name": "r", "agent": AGENT, "repair": {"target": "t", "success": {"kind": "vibes"}}}) == [
        "repair.success.kind"]


def test_repair_phase_names_are_fixed() -> None:
    config = {"name": "r", "agent": AGENT, "repair": {"target": "t", "phases": {"lint": "ruff", "deploy": "x"}}}
    assert problems_of(config) == [
        ("repair.phases.deploy", "unknown key; allowed keys: lint, build, test")]


def test_schedule_entries() -> None:
    entries = [{"id": "a", "recipe": "r"},
               {"id": "b", "recipe": "r", "daily": "9:00", "tz": "Mars/Olympus"},
               {"id": "c", "recipe": "r", "weekly": "MON@09:00", "catch_up": "always"}]
    assert problems_of({"name": "r", "schedule": entries}) == [
        ("schedule[2].catch_up", "'always' is not one of run_once, skip"),
        ("schedule[0]", "declare exactly one of at, daily, weekly, cron"),
        ("schedule[1].daily", "expected HH:MM (24-hour), got '9:00'"),
        ("schedule[1].tz", "unknown IANA time zone 'Mars/Olympus' (for example Europe/Lisbon)"),
    ]


def test_a_value_that_failed_its_type_is_not_reported_twice() -> None:
    checks = [{"id": "tests", "acceptance": ["AC1"], "command": True}]
    assert problems_of({"name": "r", "goal": {**GOAL, "checks": checks}}) == [
        ("goal.checks[0].command", "expected a command (a string or a non-empty list of strings), got bool True")]


def test_problems_name_the_file_they_came_from() -> None:
    with pytest.raises(ConfigError) as raised:
        validate_recipe({"name": "r", "limits": {"bounces": 0}}, {"name": "r"}, recipe_name="r",
                        locate=lambda path: "recipes/r.yaml")
    assert raised.value.problems[0].render() == "limits.bounces: 0 is below the minimum 1  (from recipes/r.yaml)"


def test_schema_paths() -> None:
    assert schema.is_schema_path("goal.budget.time")
    assert schema.is_schema_path("goal.acceptance.AC7.text")
    assert not schema.is_schema_path("batch")
    assert schema.is_schema_path("goal.checks.0.timeout")
    assert not schema.is_schema_path("goal.checks.first.timeout")
    assert "loop.interval" in schema.all_paths()


def test_repair_guards_must_be_installed_guards() -> None:
    config = {"name": "r", "agent": AGENT, "repair": {"target": "t", "guards": ["python", "pyhton"]}}
    found = problems_of(config)
    assert found[0][0] == "repair.guards[1]"
    assert found[0][1].startswith("unknown guard 'pyhton' (did you mean 'python'?)")


def test_schedule_timing_and_overrides_are_validated_with_the_rest_of_the_recipe() -> None:
    # Without a workspace (no root): what the schedule engine and the override grammar
    # refuse is still listed with every other problem, not in a later pass.
    entries = [{"id": "never", "recipe": "r", "cron": "0 0 31 2 *"},
               {"id": "garbled", "recipe": "r", "at": "tomorrow", "tz": "UTC"},
               {"id": "flag", "recipe": "r", "daily": "09:00", "overrides": ["-m", "x=1"]}]
    assert problems_of({"name": "r", "loop": {"interval": "10s", "command": "true"}, "schedule": entries}) == [
        ("loop.interval", "10s is below the minimum 30s"),
        ("schedule[0].cron", "'0 0 31 2 *' can never fire (no date matches it)"),
        ("schedule[1].at", "expected an ISO date-time such as 2026-12-01T09:00 or 2026-12-01T09:00+01:00, got "
                           "'tomorrow'"),
        ("schedule[2].overrides[0]", "'-m' is a flag; a scheduled run takes Hydra overrides only (KEY=VALUE)"),
    ]
