"""``axpipe schedule`` as a user calls it (subprocesses, a real store): adding tasks and
every way an add is refused, the read commands and their ``--json`` shapes, direct
pause/resume/delete without a backend, recipes registering tasks in their plan phase, and
one-shot commands never claiming due tasks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import write_recipe
from schedule_helpers import Project

from axpipe.cli import main


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project.create(tmp_path / "project", now="2026-05-01T09:30:00")
    yield made
    made.cleanup()


def store_file(project: Project) -> Path:
    return project.root / ".axpipe" / "state.db"


def test_add_stores_a_task_and_says_when_it_runs(project: Project) -> None:
    result = project.cli("schedule", "add", "--daily", "11:00", "--tz", "Europe/Lisbon", "--recipe", "ok",
                         "goal.budget.time=30m", "--title", "Morning check", "--id", "morning")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (  # the clock says 09:30 UTC, 10:30 in Lisbon
        "added task morning: daily 11:00 (Europe/Lisbon), next run 2026-05-01 11:00 WEST; runs "
        "`axpipe run recipe=ok goal.budget.time=30m`\n"
        "No runtime backend is running for this project: tasks fire only while one runs (`axpipe runtime start`).\n")
    task = project.task("morning")
    assert (task["kind"], task["expression"], task["tz"], task["next_run"], json.loads(task["overrides"])) == (
        "daily", "11:00", "Europe/Lisbon", "2026-05-01T10:00:00.000000Z", ["goal.budget.time=30m"])
    assert (task["catch_up"], task["grace"], task["max_run_duration"], task["source"]) == (
        "run_once", 300, 3600, "schedule add")


def test_add_takes_every_option(project: Project) -> None:
    result = project.cli("schedule", "add", "--cron", "*/15 9-17 * * mon-fri", "--tz", "America/New_York",
                         "--recipe", "ok", "--catch-up", "skip", "--max-run-duration", "90s", "--grace", "1m")
    assert result.exit_code == 0, result.stderr
    task = project.task("ok")  # no --id: named after the recipe
    assert (task["catch_up"], task["grace"], task["max_run_duration"], task["next_run"]) == (
        "skip", 60, 90, "2026-05-01T13:00:00.000000Z")


@pytest.mark.parametrize(("args", "message"), [
    (["--cron", "0 0 31 2 *"], "--cron: '0 0 31 2 *' can never fire (no date matches it); nothing was written"),
    (["--cron", "* * *"], "--cron: expected 5 fields (minute hour day-of-month month day-of-week), got 3 in "
                          "'* * *'; nothing was written"),
    (["--at", "2026-05-01T09:00"], "--at: 2026-05-01T09:00:00+00:00 is in the past (now is "
                                   "2026-05-01T09:30:00+00:00 in UTC); a one-shot time must be in the future; "
                                   "nothing was written"),
    (["--daily", "9:00"], "--daily: expected HH:MM (24-hour, two digits each), got '9:00'; nothing was written"),
    (["--daily", "25:00"], "--daily: expected HH:MM (24-hour, two digits each), got '25:00'; nothing was written"),
    (["--weekly", "Funday@09:00"], "--weekly: expected DAY@HH:MM such as MON@09:00 (days: SUN, MON, TUE, WED, THU, "
                                   "FRI, SAT), got 'Funday@09:00'; nothing was written"),
    (["--daily", "09:00", "--tz", "Europe/Atlantis"], "--tz: unknown IANA time zone 'Europe/Atlantis' (for example "
                                                      "Europe/Lisbon, America/New_York, UTC); nothing was written"),
    (["--daily", "09:00", "--max-run-duration", "0s"], "--max-run-duration: 0s is below the minimum 1s; nothing "
                                                       "was written"),
    (["--daily", "09:00", "--max-run-duration", "73h"], "--max-run-duration: 73h is above the maximum 3d; nothing "
                                                        "was written"),
    (["--daily", "09:00", "--grace", "soon"], "--grace: expected a duration such as 30s, 5m, 2h, 1h30m or integer "
                                              "seconds, got 'soon'; nothing was written"),
    (["--daily", "09:00", "--id", "no spaces"], "--id: 'no spaces' is not a valid task id (1-64 letters, digits, "
                                                "'.', '_', '-'; starting with a letter or digit); nothing was written"),
    (["--daily", "09:00", "recipe=other"], "'recipe=other': a task's recipe is chosen with --recipe (or the "
                                           "entry's `recipe:`), not by an override; nothing was written"),
    (["--daily", "09:00", "justaword"], "'justaword' is not an override: expected KEY=VALUE, +KEY=VALUE "
                                        "or ~KEY; nothing was written"),
    # the recipe composed with the overrides, as the task's run would be: refused now, not at every firing
    (["--daily", "09:00", "goal.budget.steps=0"], "'goal.budget.steps=0' is refused by recipe 'ok': "
                                                  "goal.budget.steps: 0 is below the minimum 1; nothing was written"),
    (["--daily", "09:00", "nosuch.key=3"], "'nosuch.key=3' is refused by recipe 'ok': nosuch.key: no such key in "
                                           "the recipe; nothing was written"),
])
def test_bad_input_at_add_exits_2_and_writes_nothing(project: Project, args: list[str], message: str) -> None:
    result = project.cli("schedule", "add", *args, "--recipe", "ok")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"axpipe: error: {message}\n"
    assert not store_file(project).exists()


def test_an_unknown_recipe_is_refused_listing_the_known_ones(project: Project) -> None:
    result = project.cli("schedule", "add", "--daily", "09:00", "--recipe", "okk")
    assert result.exit_code == 2
    assert result.stderr.startswith("axpipe: error: --recipe: unknown recipe 'okk' (did you mean 'ok'?); available: ")
    assert result.stderr.endswith("; nothing was written\n")
    assert not store_file(project).exists()


def test_a_taken_id_is_refused_and_the_first_task_kept(project: Project) -> None:
    assert project.cli("schedule", "add", "--daily", "09:00", "--recipe", "ok", "--id", "x").exit_code == 0
    result = project.cli("schedule", "add", "--daily", "11:00", "--recipe", "fail", "--id", "x")
    assert result.exit_code == 2
    assert "a task 'x' already exists" in result.stderr
    assert (project.task("x")["expression"], project.task("x")["recipe"]) == ("09:00", "ok")


def test_add_needs_exactly_one_schedule_and_a_recipe(project: Project) -> None:
    both = project.cli("schedule", "add", "--daily", "09:00", "--cron", "* * * * *", "--recipe", "ok")
    assert both.exit_code == 2 and "not allowed with argument" in both.stderr
    neither = project.cli("schedule", "add", "--recipe", "ok")
    assert neither.exit_code == 2 and "one of the arguments --cron --daily --weekly --at is required" in neither.stderr
    no_recipe = project.cli("schedule", "add", "--daily", "09:00")
    assert no_recipe.exit_code == 2 and "--recipe" in no_recipe.stderr
    assert not store_file(project).exists()


def add_three(project: Project) -> None:
    for args in (["--daily", "10:00", "--tz", "Europe/Lisbon", "--id", "morning", "--title", "Morning check"],
                 ["--cron", "30 2 * * *", "--tz", "America/New_York", "--id", "nightly", "--catch-up", "skip"],
                 ["--at", "2026-06-01T12:00+00:00", "--tz", "UTC", "--id", "once"]):
        assert project.cli("schedule", "add", *args, "--recipe", "ok").exit_code == 0


def test_list_shows_status_next_run_schedule_id_and_title(project: Project, snapshot: object) -> None:
    add_three(project)
    assert project.cli("schedule", "pause", "nightly").exit_code == 0
    result = project.cli("schedule", "list")
    assert result.exit_code == 0
    assert result.stdout == snapshot


def test_list_json_has_the_pinned_shape(project: Project, snapshot: object) -> None:
    add_three(project)
    result = project.cli("schedule", "list", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == snapshot


def test_reads_without_a_store_do_not_create_one(project: Project) -> None:
    assert project.cli("schedule", "list").stdout.startswith("No scheduled tasks.")
    assert project.cli("schedule", "list", "--json").stdout == "[]\n"
    missing = project.cli("schedule", "show", "nope")
    assert (missing.exit_code, missing.stderr) == (2, "axpipe: error: unknown scheduled task 'nope'; available: none\n")
    assert project.cli("schedule", "runs", "nope").exit_code == 2
    assert project.cli("schedule", "pause", "nope").exit_code == 2
    assert not store_file(project).exists()


def test_unknown_task_ids_are_input_errors_with_a_hint(project: Project) -> None:
    add_three(project)
    for action in ("show", "runs", "pause", "resume", "delete", "run"):
        result = project.cli("schedule", action, "mornin")
        assert result.exit_code == 2, action
        assert result.stderr == ("axpipe: error: unknown scheduled task 'mornin' (did you mean 'morning'?); "
                                 "available: morning, nightly, once\n")


def test_show_and_runs_after_a_sweep(project: Project, snapshot: object) -> None:
    add_three(project)
    from axpipe.schedule.sweep import sweep

    with project.store() as store:  # a sweep as a backend would make it, at 10:01 in Lisbon the next day
        sweep(store, backend="test", now=datetime(2026, 5, 2, 9, 1, tzinfo=UTC))
    show = project.cli("schedule", "show", "morning")
    assert show.exit_code == 0
    assert show.stdout == snapshot(name="show text")
    shown = json.loads(project.cli("schedule", "show", "morning", "--json").stdout)
    assert shown == snapshot(name="show json")
    runs = json.loads(project.cli("schedule", "runs", "morning", "--json").stdout)
    assert runs == snapshot(name="runs json")
    assert list(runs[0]) == ["id", "task", "scheduled_for", "status", "reason", "started_at", "finished_at",
                             "state", "folded", "trigger", "exit_code", "log"]
    assert project.cli("schedule", "runs", "nightly").stdout == (
        "RUN  STATUS   SCHEDULED FOR         STARTED  FINISHED              REASON\n"
        "1    skipped  2026-05-02T06:30:00Z  -        2026-05-02T09:01:00Z  missed: 1 occurrence found beyond the "
        "grace of 5m, from 2026-05-02T06:30:00Z; catch_up is skip\n")
    assert project.cli("schedule", "runs", "once").stdout == "task once has no runs yet\n"
    assert project.cli("schedule", "runs", "morning", "--limit", "0").exit_code == 2


def test_pause_resume_and_delete_write_the_store_without_a_backend(project: Project) -> None:
    add_three(project)
    paused = project.cli("schedule", "pause", "morning")
    assert paused.stdout == "paused task morning (no live backend: written to the store)\n"
    task = project.task("morning")
    assert (task["status"], task["next_run"], task["status_reason"]) == ("paused", None, "paused by a person")
    assert project.cli("schedule", "pause", "morning").stdout.startswith("task morning is already paused")
    project.set_clock("2026-05-02T12:00")
    resumed = project.cli("schedule", "resume", "morning")
    assert resumed.stdout == ("resumed task morning; next run 2026-05-03T09:00:00Z "
                              "(no live backend: written to the store)\n")
    assert project.task("morning")["status"] == "active"
    deleted = project.cli("schedule", "delete", "morning")
    assert deleted.stdout == "deleted task morning and its run history (no live backend: written to the store)\n"
    assert [row["id"] for row in project.query("SELECT id FROM schedule_tasks ORDER BY id")] == ["nightly", "once"]


def test_run_without_a_backend_says_how_to_start_one(project: Project) -> None:
    add_three(project)
    result = project.cli("schedule", "run", "morning")
    assert result.exit_code == 5
    assert "no live runtime backend for this project" in result.stderr
    assert "Start one with `axpipe runtime start`" in result.stderr
    assert project.runs() == []


def test_one_shot_commands_never_claim_due_tasks(project: Project) -> None:
    add_three(project)
    project.set_clock("2026-05-02T12:00")  # morning and nightly are overdue now
    before = project.query("SELECT id, next_run, status FROM schedule_tasks ORDER BY id")
    for args in (["schedule", "list"], ["schedule", "show", "morning"], ["schedule", "runs", "morning"],
                 ["runtime", "status"], ["run", "recipe=ok"]):
        result = project.cli(*args)
        assert result.exit_code in (0, 1), (args, result.stderr)
    assert project.runs() == []
    assert project.query("SELECT id, next_run, status FROM schedule_tasks ORDER BY id") == before


def test_main_in_process_matches_the_subprocess(project: Project, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project.root)
    for name, value in project.env.items():
        monkeypatch.setenv(name, value)
    assert main(["schedule", "add", "--weekly", "MON@08:00", "--tz", "UTC", "--recipe", "ok", "--id", "w"]) == 0
    assert main(["schedule", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.split("\n", 2)[-1])
    assert listed == [{"id": "w", "title": "", "status": "active", "schedule": "weekly MON@08:00", "tz": "UTC",
                       "next_run": "2026-05-04T08:00:00Z", "catch_up": "run_once"}]


# -- recipes register their tasks in the plan phase -------------------------------------

SCHEDULED = """
name: scheduled
description: Registers two tasks.
schedule:
  - id: nightly-ok
    title: "Nightly ok for ${who}"
    cron: "${cron}"
    tz: Europe/Lisbon
    recipe: ok
    overrides: ["goal.budget.time=${budget}"]  # an override the recipe accepts
    max_run_duration: 10m
  - id: once
    at: "2026-06-01T12:00"
    tz: UTC
    recipe: ok
    catch_up: skip
who: team
budget: 30m
cron: "30 2 * * *"
"""


def test_a_recipe_registers_its_tasks_and_re_running_it_upserts(project: Project) -> None:
    write_recipe(project.root / "recipes", "scheduled", SCHEDULED)
    first = project.cli("run", "recipe=scheduled", "--json")
    assert first.exit_code == 0, first.stderr
    registered = [json.loads(line) for line in first.stdout.splitlines() if '"schedule.registered"' in line]
    assert [(event["task"], event["change"]) for event in registered] == [
        ("nightly-ok", "created"), ("once", "created")]
    task = project.task("nightly-ok")
    assert (task["title"], json.loads(task["overrides"]), task["source"], task["max_run_duration"]) == (
        "Nightly ok for team", ["goal.budget.time=30m"], "recipe scheduled", 600)
    assert task["next_run"] == "2026-05-02T01:30:00.000000Z"  # 02:30 WEST
    project.cli("schedule", "pause", "nightly-ok")

    again = project.cli("run", "recipe=scheduled", "--json")
    assert [json.loads(line)["change"] for line in again.stdout.splitlines() if '"schedule.registered"' in line] == [
        "unchanged", "unchanged"]
    assert project.task("nightly-ok")["status"] == "paused"  # a person's pause survives re-registration

    changed = project.cli("run", "recipe=scheduled", "who=ops", "budget=1h", "cron=0 3 * * *", "--json")
    assert changed.exit_code == 0, changed.stderr
    task = project.task("nightly-ok")
    assert (task["title"], task["expression"], task["status"], task["next_run"], json.loads(task["overrides"])) == (
        "Nightly ok for ops", "0 3 * * *", "paused", None, ["goal.budget.time=1h"])
    project.cli("schedule", "resume", "nightly-ok")
    project.cli("run", "recipe=scheduled", "who=ops", "cron=15 4 * * *")
    assert project.task("nightly-ok")["next_run"] == "2026-05-02T03:15:00.000000Z"


def test_a_recipe_task_without_a_zone_keeps_the_zone_stored_with_it(project: Project) -> None:
    # The zone of whichever process ran the recipe last (a shell with TZ set, a supervisor
    # without) must not move the task; naming a zone does.
    zoneless = SCHEDULED.replace("    tz: Europe/Lisbon\n", "")
    write_recipe(project.root / "recipes", "scheduled", zoneless)
    assert project.cli("run", "recipe=scheduled", env={"TZ": "America/New_York"}).exit_code == 0
    task = project.task("nightly-ok")
    assert (task["tz"], task["next_run"]) == ("America/New_York", "2026-05-02T06:30:00.000000Z")  # 02:30 EDT

    again = project.cli("run", "recipe=scheduled", "--json", env={"TZ": "UTC"})
    assert again.exit_code == 0, again.stderr
    assert [json.loads(line)["change"] for line in again.stdout.splitlines() if '"schedule.registered"' in line] == [
        "unchanged", "unchanged"]
    task = project.task("nightly-ok")
    assert (task["tz"], task["next_run"]) == ("America/New_York", "2026-05-02T06:30:00.000000Z")

    named = zoneless.replace('    cron: "${cron}"\n', '    cron: "${cron}"\n    tz: UTC\n')
    write_recipe(project.root / "recipes", "scheduled", named)
    assert project.cli("run", "recipe=scheduled", env={"TZ": "America/New_York"}).exit_code == 0
    task = project.task("nightly-ok")
    assert (task["tz"], task["next_run"]) == ("UTC", "2026-05-02T02:30:00.000000Z")


def test_a_recipe_with_a_bad_schedule_is_refused_and_registers_nothing(project: Project) -> None:
    write_recipe(project.root / "recipes", "scheduled", SCHEDULED)
    result = project.cli("run", "recipe=scheduled", "cron=0 0 31 2 *")
    assert result.exit_code == 2
    assert "schedule[0].cron: '0 0 31 2 *' can never fire (no date matches it)" in result.stdout + result.stderr
    assert project.query("SELECT id FROM schedule_tasks") == []


def test_a_recipe_one_shot_in_the_past_is_refused_only_when_new(project: Project) -> None:
    write_recipe(project.root / "recipes", "scheduled", SCHEDULED)
    assert project.cli("run", "recipe=scheduled").exit_code == 0
    project.set_clock("2026-07-01T00:00")  # `once` is in the past now, but already registered: fine
    assert project.cli("run", "recipe=scheduled").exit_code == 0
    moved = SCHEDULED.replace('at: "2026-06-01T12:00"', 'at: "2026-06-15T12:00"')
    write_recipe(project.root / "recipes", "scheduled", moved)
    result = project.cli("run", "recipe=scheduled")
    assert result.exit_code == 2
    assert "schedule[1].at: 2026-06-15T12:00:00+00:00 is in the past" in result.stdout + result.stderr
    assert project.task("once")["expression"] == "2026-06-01T12:00:00+00:00"


ONCE_WITH_GOAL = """
name: once
goal:
  objective: "record the run"
  acceptance:
    AC1: {tag: closes, text: "recorded", check: record}
  checks:
    - {id: record, acceptance: [AC1], command: "true"}
%sschedule:
  - {id: once, at: "%s", tz: UTC, recipe: ok}
"""


def _sessions(project: Project) -> list[str]:
    return [row["id"] for row in project.query("SELECT id FROM sessions ORDER BY rowid")] \
        if store_file(project).exists() else []


def test_a_one_shot_in_the_past_is_refused_before_the_run_creates_anything(project: Project) -> None:
    write_recipe(project.root / "recipes", "once", ONCE_WITH_GOAL % ("", "2026-04-01T12:00"))
    result = project.cli("run", "recipe=once")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "schedule[0].at: 2026-04-01T12:00:00+00:00 is in the past" in result.stdout + result.stderr
    assert not (project.root / ".axpipe").exists()  # no store, no goal, no session, no run folder
    # A goal that exists already gets no new session from a refused run either.
    write_recipe(project.root / "recipes", "once", ONCE_WITH_GOAL % ("", "2026-06-01T12:00"))
    assert project.cli("run", "recipe=once").exit_code == 0
    sessions, runs = _sessions(project), project.query("SELECT id FROM runs")
    assert len(sessions) == 1
    write_recipe(project.root / "recipes", "once", ONCE_WITH_GOAL % ("", "2026-04-01T12:00"))
    result = project.cli("run", "recipe=once")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "schedule[0].at: 2026-04-01T12:00:00+00:00 is in the past" in result.stdout + result.stderr
    assert (_sessions(project), project.query("SELECT id FROM runs")) == (sessions, runs)
    assert project.task("once")["expression"] == "2026-06-01T12:00:00+00:00"


def test_a_one_shot_that_passes_while_the_probe_runs_is_refused_before_the_plan(project: Project) -> None:
    # The probe moves the schedule clock past the one-shot time: the check before the run
    # passed, and the plan must refuse it before it creates the goal's session.
    move = f"printf 2026-06-02T00:00:00Z > {project.clock_file}"
    write_recipe(project.root / "recipes", "once", ONCE_WITH_GOAL % (f"probe: {json.dumps(move)}\n",
                                                                     "2026-06-01T12:00"))
    result = project.cli("run", "recipe=once")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "schedule[0].at: 2026-06-01T12:00:00+00:00 is in the past" in result.stdout
    assert _sessions(project) == []
    assert project.query("SELECT id FROM goals") == []
    assert project.query("SELECT id FROM schedule_tasks") == []


def test_a_recipe_naming_an_unknown_recipe_or_bad_override_lists_every_problem(project: Project) -> None:
    write_recipe(project.root / "recipes", "scheduled", """
name: scheduled
schedule:
  - {id: a, daily: "09:00", recipe: nope}
  - {id: b, daily: "09:00", recipe: ok, overrides: ["--cfg", "hydra.run.dir=/tmp/x"]}
  - {id: "bad id", daily: "09:00", recipe: ok}
""")
    result = project.cli("run", "recipe=scheduled")
    assert result.exit_code == 2
    output = result.stdout + result.stderr
    assert "schedule[0].recipe: unknown recipe 'nope'" in output
    assert "schedule[1].overrides[0]: '--cfg' is a flag" in output
    assert "schedule[1].overrides[1]: 'hydra.run.dir=/tmp/x' sets hydra.run.dir, which axpipe sets for " \
           "scheduled runs" in output
    assert "schedule[2].id: 'bad id' is not a valid task id" in output
    assert project.query("SELECT id FROM schedule_tasks") == []


def test_help_of_the_schedule_commands(project: Project, snapshot: object) -> None:
    for args in (["schedule", "--help"], ["schedule", "add", "--help"], ["runtime", "--help"],
                 ["runtime", "start", "--help"]):
        result = project.cli(*args)
        assert result.exit_code == 0
        assert result.stdout == snapshot(name=" ".join(args))


def test_add_lists_every_override_the_recipe_refuses_and_a_recipe_that_would_not_run(project: Project) -> None:
    normal = {"AXPIPE_TESTING_FAST": "0"}  # the tests' switch lets a loop tick faster than 30s
    result = project.cli("schedule", "add", "--daily", "09:00", "--recipe", "ok", "goal.budget.time=30m",
                         "nosuch.key=3", "loop.interval=1s", env=normal)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "axpipe: error: the task would fail every time it fires (2 problems):\n"
        "  - 'nosuch.key=3' is refused by recipe 'ok': nosuch.key: no such key in the recipe\n"
        "  - 'loop.interval=1s' is refused by recipe 'ok': loop.interval: 1s is below the minimum 30s\n"
        "Nothing was written.\n")
    write_recipe(project.root / "recipes", "broken", "name: broken\nloop: {interval: 10s, command: 'true'}\n")
    broken = project.cli("schedule", "add", "--daily", "09:00", "--recipe", "broken", env=normal)
    assert broken.exit_code == 2
    assert broken.stderr == ("axpipe: error: --recipe: recipe 'broken' would be refused when the task fires: "
                             "loop.interval: 10s is below the minimum 30s (in recipes/broken.yaml); nothing was "
                             "written\n")
    assert not store_file(project).exists()


def test_every_problem_of_a_recipe_and_its_schedule_is_listed_at_once_with_its_file(project: Project) -> None:
    # One run says everything: the loop's interval and each schedule problem, with the file.
    write_recipe(project.root / "recipes", "everything", """
name: everything
loop: {interval: 10s, command: "true"}
schedule:
  - {id: once, at: "2026-04-01T12:00", tz: UTC, recipe: ok}
  - {id: never, cron: "0 0 31 2 *", recipe: ok}
  - {id: typo, daily: "09:00", recipe: okk}
  - {id: flags, daily: "09:00", recipe: ok, overrides: ["-m"]}
""")
    result = project.cli("run", "recipe=everything", env={"AXPIPE_TESTING_FAST": "0"})
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "axpipe: error: recipe 'everything' is invalid (5 problems):\n"
        "  - loop.interval: 10s is below the minimum 30s  (from recipes/everything.yaml)\n"
        "  - schedule[0].at: 2026-04-01T12:00:00+00:00 is in the past (now is 2026-05-01T09:30:00+00:00 in UTC); a "
        "one-shot time must be in the future  (from recipes/everything.yaml)\n"
        "  - schedule[1].cron: '0 0 31 2 *' can never fire (no date matches it)  (from recipes/everything.yaml)\n"
        f"  - schedule[2].recipe: unknown recipe 'okk' (did you mean 'ok'?) on the search path of {project.root}  "
        "(from recipes/everything.yaml)\n"
        "  - schedule[3].overrides[0]: '-m' is a flag; a scheduled run takes Hydra overrides only (KEY=VALUE)  "
        "(from recipes/everything.yaml)\n"
        "Nothing was run and nothing was written.\n")
    assert not (project.root / ".axpipe").exists()


def test_a_recipe_task_whose_overrides_its_recipe_refuses_is_not_registered(project: Project) -> None:
    write_recipe(project.root / "recipes", "scheduled", """
name: scheduled
schedule:
  - {id: fast, daily: "09:00", recipe: ok, overrides: ["loop.interval=1s", "nosuch.key=3", "goal.budget.time=1h"]}
  - {id: itself, daily: "10:00", recipe: scheduled}
  - {id: broken, daily: "11:00", recipe: broken}
""")
    write_recipe(project.root / "recipes", "broken", "name: broken\nrepair: {target: t, budget: 99}\n")
    result = project.cli("run", "recipe=scheduled", env={"AXPIPE_TESTING_FAST": "0"})
    assert (result.exit_code, result.stdout) == (2, "")
    problems = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
    assert problems == [
        "  - schedule[0].overrides[1]: 'nosuch.key=3' is refused by recipe 'ok': nosuch.key: no such key in the "
        "recipe  (from recipes/scheduled.yaml)",
        "  - schedule[0].overrides[0]: 'loop.interval=1s' is refused by recipe 'ok': loop.interval: 1s is below "
        "the minimum 30s  (from recipes/scheduled.yaml)",
        "  - schedule[2].recipe: recipe 'broken' would be refused when the task fires: repair.budget: budget must be "
        "an integer from 1 to 32, got 99 (in recipes/broken.yaml)  (from recipes/scheduled.yaml)",
        "  - schedule[2].recipe: recipe 'broken' would be refused when the task fires: repair.agent: a repair needs "
        "an agent to make its fixes: declare `agent:` (here or at the top) (in recipes/broken.yaml)  (from "
        "recipes/scheduled.yaml)",
    ]  # a recipe that schedules itself is fine, and its own tasks are not composed again (no recursion)
    assert not store_file(project).exists()


def test_a_recipe_task_naming_a_recipe_called_like_a_number_is_composed_and_registered(project: Project) -> None:
    """Inside `axpipe run` the task's recipe is composed through the running Hydra: its name
    must be quoted there too, or Hydra reads `2024` as an int (an internal error before)."""
    write_recipe(project.root / "recipes", "2024", "name: '2024'\n")
    write_recipe(project.root / "recipes", "scheduler", """
name: scheduler
schedule:
  - {id: yearly, daily: "09:00", recipe: "2024"}
""")
    result = project.cli("run", "recipe=scheduler")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert [task["id"] for task in json.loads(project.cli("schedule", "list", "--json").stdout)] == ["yearly"]
    assert "runs:              axpipe run recipe=2024\n" in project.cli("schedule", "show", "yearly").stdout
