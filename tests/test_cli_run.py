"""`axpipe run` through Hydra: overrides, multirun, --cfg, --help, --info, and every way a
run can be refused before it starts (exit 2, 5, 7) without touching the workspace."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CLI
from helpers import AXPIPE, BATCH_RECIPE, command_line, git, tree, wait_for, write_recipe

from axpipe.cli import _COMMANDS, build_parser, main
from axpipe.process import pid_alive
from axpipe.runtime.processes import descendants


def normalize(text: str, *paths: Path) -> str:
    for index, path in enumerate(paths):
        text = text.replace(str(path), f"<path{index}>")
    return text


@pytest.fixture
def library(repo: Path) -> Path:
    """A project recipe library (declared in axpipe.yaml) with small recipes."""
    folder = repo / "recipes"
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(folder, "hello", """
name: hello
description: One passing check.
goal:
  objective: "say hello"
  acceptance:
    AC1: {tag: closes, text: "it says hello", check: greet}
  checks:
    - {id: greet, acceptance: [AC1], command: "echo hello ${who}"}
who: world
""")
    write_recipe(folder, "batch", BATCH_RECIPE)
    write_recipe(folder, "slow", """
name: slow
goal:
  objective: "take a while"
  acceptance:
    AC1: {tag: closes, text: "waited", check: wait}
  checks:
    - {id: wait, acceptance: [AC1], command: "sleep 30", timeout: 1m}
""")
    write_recipe(folder, "probed", """
name: probed
probe: "python3 -c 'import sys; sys.exit(\\"database not reachable\\")'"
goal:
  objective: "never runs"
  acceptance:
    AC1: {tag: closes, text: "x", check: touch}
  checks:
    - {id: touch, acceptance: [AC1], command: "touch touched.txt"}
""")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "recipes")
    return folder


def test_front_help_lists_every_subcommand(cli: CLI, snapshot: object) -> None:
    result = cli("--help")
    assert result.exit_code == 0
    assert result.stdout == snapshot


@pytest.mark.parametrize("columns", ["50", "132", "not-a-number", None])
def test_help_is_wrapped_to_columns_as_shutil_measures_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # axpipe measures the terminal itself (importing shutil costs ~3 ms of every start); its
    # help must come out exactly as argparse's stock formatter, which asks shutil, makes it.
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    for command in ("plugins", "schedule"):
        for prog, text in _subcommand_helps(build_parser(command)).items():
            stock = _with_stock_formatter(build_parser(command), prog)
            assert text == stock, prog


def _with_stock_formatter(parser: argparse.ArgumentParser, prog: str) -> str:
    pending = [parser]
    while pending:
        current = pending.pop()
        if current.prog == prog:
            raw = issubclass(current.formatter_class, argparse.RawDescriptionHelpFormatter)
            current.formatter_class = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
            return current.format_help()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
    raise AssertionError(f"no parser {prog}")


def test_building_and_formatting_every_parser_does_not_import_shutil() -> None:
    code = ("import sys; from axpipe.cli import build_parser; build_parser().format_help(); "
            "print(sorted({'shutil', 'bz2', 'lzma'} & set(sys.modules)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


def _subcommand_helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Every subcommand's (and sub-subcommand's) help text, by its command line."""
    helps: dict[str, str] = {}
    pending = [parser]
    while pending:
        current = pending.pop()
        helps[current.prog] = current.format_help()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
    return helps


@pytest.mark.parametrize("command", [name for name in _COMMANDS if name != "run"])
def test_a_parser_built_for_one_command_parses_it_as_the_full_parser_does(command: str) -> None:
    # main() builds only the subcommand on the command line; it must be that subcommand whole.
    full = {prog: text for prog, text in _subcommand_helps(build_parser()).items()
            if prog.startswith(f"axpipe {command}")}
    narrowed = {prog: text for prog, text in _subcommand_helps(build_parser(command)).items()
                if prog != "axpipe"}
    assert len(full) >= 1
    assert narrowed == full


def test_the_front_parser_alone_lists_every_command_without_their_arguments() -> None:
    front = build_parser("--help")
    assert front.format_help() == build_parser().format_help()
    subparsers = next(action for action in front._actions if isinstance(action, argparse._SubParsersAction))
    assert list(subparsers.choices) == list(_COMMANDS)
    assert all(not sub._subparsers and len(sub._actions) <= 1 for sub in subparsers.choices.values())


def test_run_help_is_hydras_with_axpipe_options(cli: CLI, snapshot: object) -> None:
    result = cli("run", "--help")
    assert result.exit_code == 0
    assert "--event-log PATH" in result.stdout
    assert result.stdout == snapshot


def test_version(cli: CLI) -> None:
    from axpipe import __version__

    assert cli("--version").stdout.strip() == f"axpipe {__version__}"
    assert cli("run", "--version").stdout.strip() == f"axpipe {__version__}"


@pytest.mark.parametrize("user_has_ruff", [False, True], ids=["bundled", "users-own-first"])
def test_tools_installed_with_axpipe_are_found_without_activating_its_venv(
        repo: Path, library: Path, tmp_path: Path, user_has_ruff: bool) -> None:
    # `pip install 'axpipe[ruff]'` puts ruff next to axpipe's interpreter; running
    # .venv/bin/axpipe (or a pipx install) without that folder on PATH must still find it,
    # after the user's own tools.
    path = "/usr/bin:/bin"
    if user_has_ruff:
        own = tmp_path / "own-bin"
        own.mkdir()
        (own / "ruff").write_text("#!/bin/sh\necho 'user ruff'\n")
        (own / "ruff").chmod(0o755)
        path = f"{own}:{path}"
    expected = "^user ruff$" if user_has_ruff else r"^ruff \d"
    write_recipe(library, "tools", f"""
name: tools
goal:
  objective: "ruff runs"
  acceptance:
    AC1: {{tag: closes, text: "ruff answers", check: ruff}}
  checks:
    - {{id: ruff, kind: oracle, acceptance: [AC1], command: "ruff --version", line: '{expected}'}}
""")
    completed = subprocess.run([*AXPIPE, "run", "recipe=tools"], cwd=repo, capture_output=True, text=True,
                               env={**os.environ, "PATH": path}, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "required line found" in completed.stdout


def test_without_path_programs_are_looked_up_where_python_would(repo: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PATH"}
    completed = subprocess.run([*AXPIPE, "guard"], cwd=repo, capture_output=True, text=True, env=env, timeout=60)
    assert completed.returncode == 0, completed.stderr  # git is found in os.defpath


def test_a_passing_run(cli: CLI, repo: Path, library: Path) -> None:
    result = cli("run", "recipe=hello")
    assert result.exit_code == 0, result.stderr
    assert "[   ok] greet: exit code 0" in result.stdout
    assert "Run succeeded: settle: complete: every check passed on the current source (1 of 1) (exit 0)" \
        in result.stdout
    assert not (repo / "outputs").exists()
    runs = list((repo / ".axpipe" / "runs").glob("*/*/events.jsonl"))
    assert len(runs) == 1
    events = [json.loads(line) for line in runs[0].read_text().splitlines()]
    assert all({"ts", "type", "goal"} <= event.keys() for event in events)
    assert events[0]["type"] == "run.started" and events[-1]["type"] == "run.finished"
    assert git(repo, "status", "--porcelain") == ""  # .axpipe/ is excluded from git


def test_overrides_reach_the_run(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=hello", "who=axpipe", "goal.checks.0.timeout=10s", "--json")
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    started = next(event for event in events if event["type"] == "check.started")
    assert started["command"] == "echo hello axpipe"


def test_schema_keys_the_recipe_leaves_out_can_be_overridden_without_plus(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=hello", "goal.budget.time=30m", "limits.bounces=3", "--cfg", "job")
    assert result.exit_code == 0, result.stderr
    assert "time: 30m" in result.stdout and "bounces: 3" in result.stdout


def test_plus_adds_a_key(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=hello", "+extra=1", "description=uses ${extra}", "--cfg", "job")
    assert result.exit_code == 0, result.stderr
    assert "extra: 1" in result.stdout


def test_cfg_job_prints_the_composed_recipe_and_writes_nothing(cli: CLI, repo: Path, library: Path) -> None:
    before = tree(repo)
    result = cli("run", "recipe=hello", "--cfg", "job")
    assert result.exit_code == 0
    assert "objective: say hello" in result.stdout
    assert tree(repo) == before


def test_cfg_hydra_shows_the_run_dir_under_axpipe_and_no_chdir(cli: CLI, repo: Path, library: Path) -> None:
    result = cli("run", "recipe=hello", "--cfg", "hydra", "--resolve")
    assert f"dir: {repo}/.axpipe/runs/" in result.stdout
    assert "chdir: false" in result.stdout


def test_info_searchpath_shows_the_recipe_libraries(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=hello", "--info", "searchpath")
    assert result.exit_code == 0
    assert f"axpipe-recipes://{library}" in result.stdout
    assert "axpipe-builtin" in result.stdout


def test_multirun_runs_every_job_with_the_basic_launcher(cli: CLI, repo: Path, library: Path) -> None:
    result = cli("run", "-m", "recipe=batch", "batch=invoices,payments")
    assert result.exit_code == 0, result.stderr
    assert "job 0: recipe=batch batch=invoices -> exit 0" in result.stdout
    assert "job 1: recipe=batch batch=payments -> exit 0" in result.stdout
    assert (repo / ".axpipe" / "batch-invoices.txt").read_text() == "migrating invoices\n"
    assert (repo / ".axpipe" / "batch-payments.txt").read_text() == "migrating payments\n"
    job_dirs = sorted((repo / ".axpipe" / "runs" / "multirun").glob("*/*/[0-9]"))
    assert [path.name for path in job_dirs] == ["0", "1"]
    assert not (repo / "multirun").exists() and not (repo / "outputs").exists()


def test_working_directory_is_not_changed(repo: Path, library: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sub = repo / "recipes"
    monkeypatch.chdir(sub)
    assert main(["run", "recipe=hello"]) == 0
    assert Path.cwd() == sub
    assert (repo / ".axpipe" / "runs").is_dir()  # the run dir goes to the project root
    assert not (sub / ".axpipe").exists() and not (sub / "outputs").exists()
    capsys.readouterr()


# -- refused before anything runs ----------------------------------------------------------


def test_loop_interval_below_minimum_is_refused_and_leaves_the_workspace_untouched(
        cli: CLI, repo: Path, snapshot: object) -> None:
    before = tree(repo)
    result = cli("run", "recipe=demo", "loop.interval=10s")
    assert result.exit_code == 2
    assert "loop.interval" in result.stderr
    assert normalize(result.stderr, repo) == snapshot
    assert tree(repo) == before
    assert git(repo, "status", "--porcelain") == ""


def test_every_config_problem_is_listed(cli: CLI, repo: Path, library: Path, snapshot: object) -> None:
    before = tree(repo)
    result = cli("run", "recipe=hello", "goal.budget.time=soon", "+goal.owner=me", "+desciption=typo",
                 "goal.checks.0.kind=comand", "goal.checks.0.timeout=0", "~goal.objective")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert normalize(result.stderr, repo) == snapshot
    assert tree(repo) == before


def test_a_bad_value_reached_through_an_interpolation_names_the_override(cli: CLI, repo: Path,
                                                                         library: Path) -> None:
    write_recipe(library, "limited", """
name: limited
limit: 30m
goal:
  objective: "within a limit"
  budget: {time: "${limit}"}
  acceptance:
    AC1: {tag: closes, text: "it says hello", check: greet}
  checks:
    - {id: greet, acceptance: [AC1], command: "echo hello"}
""")
    result = cli("run", "recipe=limited", "limit=soon")
    assert result.exit_code == 2
    assert ("  - goal.budget.time: expected a duration such as 30s, 5m, 2h, 1h30m or integer seconds, got 'soon'  "
            "(from command line: limit=soon, through '${limit}' in recipes/limited.yaml)\n") in result.stderr


def test_unknown_recipe_lists_the_available_ones(cli: CLI, repo: Path, library: Path, snapshot: object) -> None:
    result = cli("run", "recipe=helo")
    assert result.exit_code == 2
    assert normalize(result.stderr, repo) == snapshot
    assert not (repo / ".axpipe").exists()


@pytest.mark.parametrize("command", [["run", "recipe=broken"], ["recipes", "show", "broken"],
                                     ["run", "-m", "recipe=broken,hello"], ["run", "recipe=extends-broken"]])
def test_a_recipe_that_is_not_valid_yaml_is_a_config_error_naming_the_file(
        cli: CLI, repo: Path, library: Path, command: list[str], snapshot: object) -> None:
    write_recipe(library, "broken", 'name: broken\ngoal:\n  objective: "totals \\d match"\n')
    write_recipe(library, "extends-broken", "defaults:\n  - broken\n  - _self_\nname: extends-broken\n")
    old = repo / ".axpipe" / "runs" / "2020-01-01" / "old-empty"  # not this run's to remove
    old.mkdir(parents=True)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    before = tree(repo)
    result = cli(*command)
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert normalize(result.stderr, repo) == snapshot
    assert tree(repo) == before


def test_sections_of_the_wrong_shape_are_config_errors_not_crashes(cli: CLI, repo: Path, library: Path) -> None:
    write_recipe(library, "shapes", "name: shapes\ngoal:\n  objective: x\n  acceptance: [AC1]\n"
                                    "repair: 5\nreviewers: codex\n")
    before = tree(repo)
    result = cli("run", "recipe=shapes")
    assert result.exit_code == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "goal.acceptance: expected a mapping, got a list" in result.stderr
    assert "repair: expected a mapping or a list, got int 5" in result.stderr
    assert "reviewers: expected a list, got 'codex'" in result.stderr
    assert tree(repo) == before


@pytest.mark.parametrize(("command", "message"), [
    (["run", "recipe=hello", "--event-log", "README.md/events.jsonl"],
     "--event-log: README.md/events.jsonl would be under <path0>/README.md, which is a file"),
    (["run", "recipe=hello", "--event-log", "recipes"], "--event-log: recipes is a folder; give a file path"),
    (["goal", "resume", "--event-log", "recipes"], "--event-log: recipes is a folder; give a file path"),
    (["loop", "start", "1m", "--command", "true", "--event-log", "recipes"],
     "--event-log: recipes is a folder; give a file path"),
    (["repair", "true", "--agent", "ruff-fix", "--report", "README.md/r.md"],
     "--report: README.md/r.md would be under <path0>/README.md, which is a file"),
    (["gate", "--command", "true", "--baseline", "HEAD", "--report-dir", "README.md"],
     "--report-dir: README.md is a file; give a folder"),
])
def test_an_output_path_that_cannot_be_written_is_refused_before_anything_runs(
        cli: CLI, repo: Path, library: Path, command: list[str], message: str) -> None:
    before = tree(repo)
    result = cli(*command)
    assert (result.exit_code, normalize(result.stderr, repo)) == (2, f"axpipe: error: {message}\n")
    assert tree(repo) == before


def test_the_gate_outside_git_says_what_needs_the_repository(cli: CLI, tmp_path: Path) -> None:
    result = cli("gate", "--command", "true", cwd=tmp_path)
    assert (result.exit_code, result.stderr) == (
        2, f"axpipe: error: {tmp_path} is not inside a git work tree; the gate's narrowing and worktrees need one\n")


def test_optional_overrides_are_not_called_required(cli: CLI, repo: Path) -> None:
    result = cli("recipes", "show")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "axpipe recipes show: error: the following arguments are required: name"


def test_runtime_stop_of_an_unknown_backend_is_refused_with_or_without_a_store(cli: CLI, repo: Path) -> None:
    result = cli("runtime", "stop", "--id", "nosuch")
    assert (result.exit_code, result.stderr) == (2, "axpipe: error: --id: unknown live backend 'nosuch'; "
                                                    "available: none\n")
    assert not (repo / ".axpipe").exists()


def test_no_recipe_selected(cli: CLI, repo: Path) -> None:
    result = cli("run")
    assert result.exit_code == 2
    assert "no recipe selected" in result.stderr and "demo" in result.stderr
    assert not (repo / ".axpipe").exists()


@pytest.mark.parametrize(("override", "expected"), [
    ("goal.budget=[", "bad override: no viable alternative at input '['"),
    ("goal.budgt.time=5m", "goal.budgt.time: no such key in the recipe (did you mean 'goal.budget.time'?)  "
                           "(from command line)"),
    ("batch=7", "batch: no such key in the recipe; +batch=VALUE adds it as a variable, which some value must use "
                "as ${batch}"),
    ("who", "bad override: Error parsing override 'who'"),
])
def test_bad_overrides_are_config_errors_without_traceback(cli: CLI, repo: Path, library: Path,
                                                           override: str, expected: str) -> None:
    before = tree(repo)
    result = cli("run", "recipe=hello", override)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert tree(repo) == before


def test_a_file_system_that_refuses_a_write_is_named_not_called_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    from axpipe.error_handler import guarded

    def refused(number: int) -> int:
        raise OSError(number, os.strerror(number), "/srv/project/.axpipe")

    for number in (errno.EACCES, errno.EROFS):
        assert guarded(lambda number=number: refused(number)) == 1
        assert capsys.readouterr().err == f"axpipe: error: /srv/project/.axpipe: {os.strerror(number)}\n"
    # A full disk also says what to do (issue 25), with the file or without one (a write()
    # to a file opened before the disk filled carries no name).
    advice = ("Free space on that file system (or raise the file size limit) and run the command again; what "
              "this command could not record is closed as failed when the next run starts")
    assert guarded(lambda: refused(errno.ENOSPC)) == 1
    assert capsys.readouterr().err == f"axpipe: error: /srv/project/.axpipe: {os.strerror(errno.ENOSPC)}. {advice}\n"

    def full() -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    assert guarded(full) == 1
    assert capsys.readouterr().err == f"axpipe: error: a write failed: {os.strerror(errno.ENOSPC)}. {advice}\n"

    def broken() -> int:  # an OSError with no file, or of another kind, is still ours to explain
        raise OSError(errno.EINVAL, "Invalid argument")

    assert guarded(broken) == 1
    assert "internal error: OSError: [Errno 22] Invalid argument\nThis is a bug" in capsys.readouterr().err
    from axpipe.error_handler import describe

    assert describe(OSError(errno.EROFS, os.strerror(errno.EROFS), "/x")) == f"/x: {os.strerror(errno.EROFS)}"
    assert describe(ValueError("bad")) == "internal error: ValueError: bad"


def test_axpipe_debug_shows_the_traceback(cli: CLI, library: Path) -> None:
    result = cli("run", "recipe=hello", "goal.budget=[", env={"AXPIPE_DEBUG": "1"})
    assert result.exit_code == 2
    assert "Traceback" in result.stderr


def test_event_log_needs_a_path(cli: CLI) -> None:
    result = cli("run", "recipe=demo", "--event-log")
    assert result.exit_code == 2
    assert "--event-log needs a file path" in result.stderr


def test_probe_failure_exits_5_before_anything_runs(cli: CLI, repo: Path, library: Path) -> None:
    result = cli("run", "recipe=probed")
    assert result.exit_code == 5
    assert "environment not ready: probe exit code 1: database not reachable" in result.stdout
    assert not (repo / "touched.txt").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_second_run_in_the_same_checkout_is_refused_with_the_holders_pid(
        cli: CLI, repo: Path, library: Path) -> None:
    first = subprocess.Popen([*AXPIPE, "run", "recipe=slow"], cwd=repo, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        lock = repo / ".axpipe" / "run.lock"
        deadline = time.monotonic() + 30
        while not (lock.exists() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert str(first.pid) in lock.read_text()
        result = cli("run", "recipe=hello")
        assert result.exit_code == 7
        assert f"pid {first.pid}" in result.stdout
        assert "another axpipe run holds this checkout" in result.stdout
    finally:
        first.kill()
        first.wait()


def test_sigterm_ends_a_run_as_interrupted_with_its_processes_and_its_record(repo: Path, library: Path) -> None:
    # What the runtime backend's cancellation, a supervisor or `kill` sends.
    run = subprocess.Popen([*AXPIPE, "run", "recipe=slow", "--json"], cwd=repo, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    started = []
    assert run.stdout is not None
    for line in run.stdout:
        event = json.loads(line)
        if event["type"] == "check.started":
            started.append(event)
            break
    children = wait_for(lambda: [pid for pid in descendants(run.pid) if command_line(pid).startswith("sleep")],
                        what="the check's sleep to start")
    run.send_signal(signal.SIGTERM)
    rest, stderr = run.communicate(timeout=60)
    assert started and run.returncode == 130, stderr
    finished = [json.loads(line) for line in rest.splitlines() if '"run.finished"' in line]
    assert [(event["status"], event["exit_code"]) for event in finished] == [("interrupted", 130)]
    assert "interrupted" in stderr
    connection = sqlite3.connect(repo / ".axpipe" / "state.db")
    assert connection.execute("SELECT status, exit_code FROM runs").fetchall() == [("interrupted", 130)]
    wait_for(lambda: not any(pid_alive(pid) for pid in children), timeout=5, what="the check's sleep to end")


def test_sigterm_stops_a_multirun_instead_of_starting_its_next_job(repo: Path, library: Path) -> None:
    run = subprocess.Popen([*AXPIPE, "run", "-m", "recipe=slow,hello", "--json"], cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stdout is not None
    for line in run.stdout:
        if json.loads(line)["type"] == "check.started":
            break
    run.send_signal(signal.SIGTERM)
    rest, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    connection = sqlite3.connect(repo / ".axpipe" / "state.db")
    assert connection.execute("SELECT recipe, status FROM runs").fetchall() == [("slow", "interrupted")]
    assert [json.loads(line)["goal"] for line in rest.splitlines() if '"run.started"' in line] == []
    assert stderr.count("axpipe: error: interrupted") == 1


def test_json_writes_only_events_to_stdout_and_event_log_copies_them(cli: CLI, repo: Path,
                                                                      library: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    result = cli("run", "recipe=hello", "--json", "--event-log", str(copy))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert [event["type"] for event in events][:2] == ["run.started", "phase.started"]
    assert copy.read_text().splitlines() == lines
    assert "Run succeeded" in result.stderr  # the human lines move to stderr


def test_an_event_log_inside_the_goals_source_is_refused_before_anything_runs(
        cli: CLI, repo: Path, library: Path) -> None:
    # Every event would change the source the checks are verified on: the goal could
    # never complete, and `goal status` would call each completion stale.
    before = tree(repo)
    result = cli("run", "recipe=hello", "--event-log", "logs/events.jsonl")
    assert result.exit_code == 2
    assert normalize(result.stderr, repo) == (
        "axpipe: error: --event-log: <path0>/logs/events.jsonl is inside the goal's source (source path '.'): "
        "every event written to it would change the files the checks are verified on, so the goal could never "
        "complete; write it under .axpipe/, outside the work tree, or to a path git ignores\n")
    assert tree(repo) == before
    # beside the source, the scope and read-only contracts would count it as the units' change
    beside = cli("run", "recipe=hello", "goal.source_paths=[recipes]", "--event-log", "events.jsonl")
    assert beside.exit_code == 2
    assert normalize(beside.stderr, repo) == (
        "axpipe: error: --event-log: <path0>/events.jsonl is in the git work tree <path0>, which the goal's scope "
        "and read-only contracts judge, and git does not ignore it: the file would count as a change of the goal's "
        "units; write it under .axpipe/, outside the work tree, or to a path git ignores\n")
    assert tree(repo) == before
    assert cli("run", "recipe=hello").exit_code == 0  # a goal to resume
    resumed = cli("goal", "resume", "--event-log", "events.jsonl")
    assert resumed.exit_code == 2 and "--event-log: " in resumed.stderr and "inside the goal's source" in resumed.stderr
    assert not (repo / "events.jsonl").exists()


@pytest.mark.parametrize("where", ["ignored", "state folder", "outside the work tree"])
def test_an_event_log_the_fingerprint_does_not_cover_is_written_and_the_goal_completes(
        cli: CLI, repo: Path, library: Path, tmp_path: Path, where: str) -> None:
    if where == "ignored":
        (repo / ".gitignore").write_text("*.jsonl\n")
        git(repo, "add", ".gitignore")
        git(repo, "commit", "-q", "-m", "ignore logs")
        log = "events.jsonl"
    elif where == "state folder":
        log = ".axpipe/copy.jsonl"
    else:
        log = str(tmp_path / "logs" / "events.jsonl")
    result = cli("run", "recipe=hello", "--event-log", log)
    assert result.exit_code == 0, result.stdout + result.stderr
    events = [json.loads(line) for line in (repo / log).read_text().splitlines()]
    assert events[-1]["type"] == "run.finished" and events[-1]["exit_code"] == 0
    assert json.loads(cli("goal", "status", "--json").stdout)["complete"] is True


def test_the_demo_repairs_catches_a_cheat_and_completes_its_goal(cli: CLI, repo: Path) -> None:
    result = cli("run", "recipe=demo", "--json")
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    workspace = Path(events[0]["workspace"])
    assert workspace != repo and (workspace / ".git").is_dir()
    finished = [event for event in events if event["type"] == "repair.finished"]
    assert [(event["status"], event["iterations_used"]) for event in finished] == [("resolved", 2), ("resolved", 3)]
    iterations = [event for event in events if event["type"] == "repair.iteration"]
    caught = [event for event in iterations if event["guard"]]
    assert len(caught) == 1 and caught[0]["guard"] == "protected-path"  # the cheat edits a test: reverted
    checks = {event["check"]: event["status"] for event in events if event["type"] == "check.finished"}
    assert checks == {"unit-tests": "passed", "lint": "passed"}
    assert events[-1]["status"] == "succeeded"
    diff = git(workspace, "diff")
    assert "-    total = subtotal - tax" in diff and "+    total = subtotal + tax" in diff and "-import os" in diff
    assert "unittest.skip" not in (workspace / "test_invoices.py").read_text()
    status = cli("goal", "status", "--json", cwd=workspace)
    assert json.loads(status.stdout)["goal"]["status"] == "complete"
    reports = sorted(path.name for path in Path(events[0]["run_dir"]).glob("report*.md"))
    assert reports == ["report-1.md", "report-2.md"]


def test_the_demo_sample_really_is_broken() -> None:
    from axpipe import samples

    workspace = samples.prepare("invoices")
    try:
        tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=workspace, capture_output=True, text=True)
        assert tests.returncode == 1 and "Decimal('19.25') != Decimal('30.75')" in tests.stderr
        lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=workspace, capture_output=True,
                              text=True)
        assert lint.returncode == 1 and "F401" in lint.stdout
    finally:
        import shutil

        shutil.rmtree(workspace)


def test_a_run_in_a_sample_workspace_keeps_the_invocation_roots_state_out_of_git_status(
        cli: CLI, repo: Path) -> None:
    # The run's store goes to the sample's copy, but Hydra's run folder is under this
    # repository's .axpipe/: that one must not show in `git status` either (issue 2 item 7).
    write_recipe(repo / "recipes", "sampled", """
name: sampled
workspace: {sample: invoices}
goal:
  objective: "the sample is there"
  acceptance:
    AC1: {tag: closes, text: "the module imports", check: imports}
  checks:
    - {id: imports, acceptance: [AC1], command: "python3 -c 'import invoices'"}
""")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a recipe on a sample workspace")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_text()

    refused = cli("run", "recipe=sampled", "loop.interval=10s")
    assert refused.exit_code == 2, refused.stdout + refused.stderr
    assert (exclude.read_text(), (repo / ".axpipe").exists()) == (before, False)  # a refusal writes nothing

    result = cli("run", "recipe=sampled", "--json")
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert Path(events[0]["workspace"]) != repo and Path(events[0]["run_dir"]).is_relative_to(repo / ".axpipe")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert exclude.read_text().splitlines().count("/.axpipe/") == 1
