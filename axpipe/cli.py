"""The ``axpipe`` command: one front parser, one module per subcommand.

``axpipe run ...`` goes to Hydra before argparse sees it (Hydra owns that command line);
every other subcommand is plain argparse and never imports Hydra, so it starts fast.
Each subcommand is a function in :mod:`axpipe.commands` that returns an exit code; errors
are turned into messages and exit codes once, by :func:`axpipe.error_handler.guarded`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from axpipe import __version__
from axpipe.error_handler import guarded
from axpipe.run import collector

_DESCRIPTION = """\
axpipe runs unattended engineering work that you can trust afterwards:
recipes composed by Hydra, checks that leave receipts, gates narrowed to a change.
The agent is told; the code checks."""

_EPILOG = """\
exit codes: 0 success, 1 failure, 2 input or config error, 3 blocked,
4 budget limited, 5 environment not ready, 6 not terminal, 7 checkout locked,
124 idle timeout, 130 interrupted.
Run `axpipe COMMAND --help` for a command's options; `axpipe run --help` shows Hydra's."""


def _terminal_width() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil: it pulls in zlib,
    bz2 and lzma, ~3 ms of every start, and argparse asks for the width whenever an
    argument is added (it formats each one to validate its metavar)."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized by :func:`_terminal_width`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_width() - 2 if width is None else width)


class _RawFormatter(_Formatter, argparse.RawDescriptionHelpFormatter):
    """:class:`_Formatter` that keeps descriptions and epilogs as written."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help formatter defaults to :class:`_Formatter`; subparsers
    are of the same class, so every parser of the command line gets it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The front parser with every subcommand (``run`` is listed; Hydra parses its arguments).

    When ``command`` names a subcommand, the parser holds only that one; otherwise it
    lists every subcommand by name and help without their arguments (enough for
    ``--help``, ``--version`` and an unknown command's error). ``None`` builds everything.
    Building all of them costs more than a fast subcommand's whole start-up budget
    (argparse looks up translations for every parser and option), and one command line
    only ever needs one.
    """
    parser = _Parser(prog="axpipe", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=_RawFormatter)
    parser.add_argument("--version", action="version", version=f"axpipe {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = [command] if command in _COMMANDS else list(_COMMANDS)
    for name in chosen:
        help_text, options, fill = _COMMANDS[name]
        subparser = commands.add_parser(name, help=help_text, **options)
        if fill is not None and command in (None, name):
            fill(subparser)
    return parser


def _fill_recipes(recipes: argparse.ArgumentParser) -> None:
    recipes_commands = recipes.add_subparsers(dest="action", metavar="ACTION", required=True)
    recipes_list = recipes_commands.add_parser("list", help="every recipe with its description and source")
    recipes_list.add_argument("--json", action="store_true", help="print a JSON list")
    recipes_show = recipes_commands.add_parser("show", help="print a recipe's composed YAML")
    recipes_show.add_argument("name", help="recipe name (as in recipe=NAME)")
    recipes_show.add_argument("overrides", nargs="*", default=[], help="Hydra overrides to apply, KEY=VALUE")
    recipes_show.add_argument("--resolve", action="store_true", help="resolve ${...} interpolations")


def _fill_verify(verify: argparse.ArgumentParser) -> None:
    verify.add_argument("check_id", metavar="CHECK_ID", help="the check's id in the goal's contract")
    _goal_selection(verify, session=True)
    verify.add_argument("--json", action="store_true", help="print the receipt as JSON")


def _fill_goal(goal: argparse.ArgumentParser) -> None:
    goal_commands = goal.add_subparsers(dest="action", metavar="ACTION", required=True)
    goal_status = goal_commands.add_parser("status", help="the goal, each check's state and why, budget use")
    _goal_selection(goal_status, session=True)
    goal_status.add_argument("--json", action="store_true", help="print JSON (DESIGN §13 shape)")
    _goal_selection(goal_commands.add_parser("pause", help="pause the goal"), session=False)
    _goal_selection(goal_commands.add_parser("clear", help="remove the goal with its contracts and receipts"),
                    session=False)
    goal_resume = goal_commands.add_parser(
        "resume", help="drive the goal until it settles (JSONL events on stdout)",
        description="Exit codes: 0 complete, 3 blocked, 4 budget limited, 5 environment not ready (probe), "
                    "6 paused or not terminal, 1 session error, 124 idle timeout.")
    _goal_selection(goal_resume, session=True)
    goal_resume.add_argument("--event-log", metavar="PATH", help="also append the events to PATH")
    goal_resume.add_argument("--idle-timeout-ms", metavar="N", type=int, default=600_000,
                             help="give up (exit 124) after N ms without an event (default 600000)")
    goal_revise = goal_commands.add_parser("revise", help="freeze a new contract from the edited recipe")
    goal_revise.add_argument("correction", help="what changed and why, in words")
    _goal_selection(goal_revise, session=False)
    _goal_selection(goal_commands.add_parser("fork", help="start a new session under the same contract"),
                    session=False)


def _fill_task(task: argparse.ArgumentParser) -> None:
    actions = task.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="the task file, and the goal's status with its reason")
    show.add_argument("task", metavar="TASK", help="a task or goal id, or the task file's project path")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    for name, text in (("approve", "approve the plan (status: approved)"), ("answer", "answer a question"),
                       ("note", "add a note"), ("replan", "have the planner write the plan again on the next run"),
                       ("reopen", "reset the bounce counter to 0 and reopen a goal blocked for its bounces")):
        parser = actions.add_parser(name, help=text + "; journalled, never counted as a unit's work")
        parser.add_argument("task", metavar="TASK", help="a task or goal id, or the task file's project path")
        parser.add_argument("text", metavar="TEXT", nargs="?" if name in ("replan", "reopen", "approve") else None,
                            default="", help="what the journal line says")


def _fill_rules(rules: argparse.ArgumentParser) -> None:
    actions = rules.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("sync", "copy rules.standing into every agent instruction file of the recipe"),
                       ("check", "compare every copy with rules.standing; exit 2 on drift")):
        parser = actions.add_parser(name, help=text)
        parser.add_argument("--recipe", metavar="NAME", required=True, help="the recipe whose `rules:` to use")
        parser.add_argument("overrides", metavar="KEY=VALUE", nargs="*", help="recipe overrides, as for `run`")


def _fill_plugins(plugins: argparse.ArgumentParser) -> None:
    plugins_commands = plugins.add_subparsers(dest="action", metavar="ACTION", required=True)
    plugins_list = plugins_commands.add_parser("list", help="every plugin with its distribution and load error")
    plugins_list.add_argument("--json", action="store_true", help="print a JSON list")
    plugins_list.add_argument("--namespace", help="only this namespace, e.g. axpipe.checks")


def _fill_report(report: argparse.ArgumentParser) -> None:
    report.add_argument("--out", metavar="DIR", help="write the report here (default .axpipe/report/)")
    report.add_argument("--open", action="store_true", dest="open_browser", help="open it in the default browser")
    report.add_argument("--json", action="store_true", help="print the report's data as JSON instead")
    report.add_argument("--since", metavar="DATE", help="only runs, receipts and reports from DATE on (YYYY-MM-DD)")


def _fill_deliver(deliver: argparse.ArgumentParser) -> None:
    deliver.add_argument("task", metavar="TASK", help="the task (goal id) whose branch to push again")
    deliver.add_argument("--dry-run", action="store_true",
                         help="check the branch contract and the upstream, print what would be pushed and the body")


def _goal_selection(parser: argparse.ArgumentParser, *, session: bool) -> None:
    parser.add_argument("--goal", metavar="ID", dest="goal_id",
                        help="the goal (default: the project's only resumable goal)")
    if session:
        parser.add_argument("-s", "--session", metavar="ID", dest="session_id",
                            help="a session of the goal (default: its latest)")


_REPAIR_EPILOG = """\
exit codes: 0 resolved, 4 unresolved (budget spent), 2 input error (nothing edited).
The report (Markdown, or --json) goes to stdout and .axpipe/runs/<run>/report.md|json."""


def _fill_repair(repair: argparse.ArgumentParser) -> None:
    repair.add_argument("target", metavar="TARGET", help="a command (\"pytest -q\") or a prose end state")
    repair.add_argument("--budget", metavar="N", help="iterations, an integer from 1 to 32 (default 4)")
    condition = repair.add_mutually_exclusive_group()
    condition.add_argument("--until-line", metavar="REGEX", help="success: an output line matches (exit code ignored)")
    condition.add_argument("--condition", metavar="KIND", help="success: a check kind (exit, no-match, idempotent)")
    agent = repair.add_mutually_exclusive_group()
    agent.add_argument("--agent", metavar="NAME", help="an agent plugin or preset (ruff-fix, claude-code, ...)")
    agent.add_argument("--agent-command", metavar="CMD", help="any program as the agent; {prompt_file} is replaced")
    repair.add_argument("--phases", metavar="lint=..,build=..,test=..", help="the phases of a combined target")
    repair.add_argument("--guards", metavar="A,B", help="only these guards (default: every installed one that loads)")
    repair.add_argument("--prose", action="store_true", help="TARGET is an end state even if it looks like a command")
    repair.add_argument("--protect", metavar="GLOB", action="append", default=None,
                        help="a fix's edits to files matching GLOB are reverted before the guards judge it "
                        "(default: the project's tests); repeatable")
    repair.add_argument("--allow-test-edits", action="store_true", help="let fixes edit the project's tests")
    repair.add_argument("--json", action="store_true", help="print the report as JSON")
    repair.add_argument("--report", metavar="PATH", help="also write the report here (.json for JSON)")


_GUARD_EPILOG = """\
exit codes: 0 nothing fired, 1 a guard fired, 2 input error (unknown revision,
unreadable or malformed patch, unknown guard).
Without --base or --patch, the working tree (with untracked files) is judged against HEAD."""


def _fill_guard(guard: argparse.ArgumentParser) -> None:
    source = guard.add_mutually_exclusive_group()
    source.add_argument("--base", metavar="REV", help="judge the working tree against REV (default HEAD)")
    source.add_argument("--patch", metavar="FILE", help="judge a unified diff (- reads stdin)")
    guard.add_argument("--staged", action="store_true", help="judge the index instead of the working tree "
                       "(for pre-commit hooks)")
    guard.add_argument("--guards", metavar="A,B", help="only these guards (default: every installed one that loads)")
    guard.add_argument("--json", action="store_true", help='print a JSON list of {"guard", "file", "line", "evidence"}')
    guard.add_argument("--failure-output", metavar="FILE", help="the failing run's output, so guards know "
                       "what the failing test expected")
    guard.add_argument("--failing-test", metavar="ID", action="append", default=[],
                       help="a failing test's id (tests/test_x.py::test_y); repeatable")
    guard.add_argument("--command", dest="condition_command", metavar="CMD", action="append", default=[],
                       help="a command the change must not redefine (its scripts, runner files, linter "
                       "configuration; run from the current folder); repeatable")
    guard.add_argument("--runner", metavar="NAME", help="also ask the test runner what it collects at the base and "
                       "now (pytest, unittest, vitest, jest; auto: the one --command runs); not with --patch/--staged")


_GATE_EPILOG = """\
exit codes: 0 the gate passed, 1 a phase failed (a blamed finding or test),
2 input error (an unresolvable baseline included), 5 a phase could not run,
130 interrupted (the baseline's worktree is removed).
The change is the working tree against the baseline (default HEAD~1). Lint findings
count only on changed lines. Test commands of pytest, python -m unittest, vitest, jest
and node --test are read as written (another runner writes JUnit XML: put {junit_xml}
in its command) and run to their end (without -x, --maxfail, --bail); failing tests
are re-run at the baseline in a throwaway worktree under .axpipe/worktrees/, kept
from the workspace's code, and are pre-existing only if they fail
there the same way; one that passes, is skipped or fails differently there, or is
new, counts. In a pre-commit hook use --baseline HEAD."""


def _fill_gate(gate: argparse.ArgumentParser) -> None:
    gate.add_argument("overrides", nargs="*", default=[], metavar="KEY=VALUE", help="overrides for --recipe")
    gate.add_argument("--recipe", metavar="NAME", help="take the phases from this recipe's `gate:` section")
    gate.add_argument("--lint", metavar="CMD", help='lint command, e.g. "ruff check ."')
    gate.add_argument("--typecheck", metavar="CMD", help='type-check command, e.g. "mypy src"')
    gate.add_argument("--test", metavar="CMD",
                      help='test command, e.g. "pytest -q" (another runner: "mytool --junit={junit_xml}")')
    gate.add_argument("--command", dest="command_", metavar="CMD",
                      help="one command decided by its exit code (not narrowed)")
    gate.add_argument("--baseline", metavar="REV", help="narrow against REV (default: the recipe's gate.baseline, "
                      "else HEAD~1)")
    gate.add_argument("--no-narrow", dest="narrow", action="store_false", help="count every finding and failing test")
    gate.add_argument("--timeout", metavar="D", help="kill a command after this long (default 30m)")
    gate.add_argument("--report-dir", metavar="DIR", help="write the report and logs here "
                      "(default .axpipe/gate/<time>/)")
    gate.add_argument("--json", action="store_true", help="print the report as JSON")


def _fill_schedule(schedule: argparse.ArgumentParser) -> None:
    actions = schedule.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="register a task that runs a recipe on a schedule",
                             description="Register a task that runs `axpipe run recipe=NAME [overrides]` on a "
                                         "schedule. Everything is validated first; a refused task writes nothing.")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", metavar="EXPR", help='5-field cron expression, e.g. "30 2 * * *"')
    when.add_argument("--daily", metavar="HH:MM", help="every day at this local time")
    when.add_argument("--weekly", metavar="DAY@HH:MM", help="every week, e.g. MON@09:00")
    when.add_argument("--at", metavar="ISO", help="once, e.g. 2026-12-01T09:00 (in --tz) or with an offset")
    add.add_argument("--tz", metavar="ZONE", help="IANA time zone (default: this machine's)")
    add.add_argument("--recipe", metavar="NAME", required=True, help="the recipe to run")
    add.add_argument("overrides", nargs="*", default=[], metavar="KEY=VALUE", help="overrides for that recipe")
    add.add_argument("--title", help="shown by `schedule list`")
    add.add_argument("--catch-up", choices=("run_once", "skip"), default="run_once",
                     help="missed occurrences: one run for all of them (default), or skip them")
    add.add_argument("--max-run-duration", metavar="D", default="1h",
                     help="cancel a run after this long, 1s..72h (default 1h)")
    add.add_argument("--grace", metavar="D", default="5m",
                     help="how late an occurrence may be found and still run as usual (default 5m)")
    add.add_argument("--id", dest="task_id", metavar="ID", help="task id (default: the recipe's name)")
    listing = actions.add_parser("list", help="every task: status, next run, schedule, id, title")
    listing.add_argument("--json", action="store_true", help="print a JSON list")
    show = actions.add_parser("show", help="a task's details and its five latest runs")
    show.add_argument("task_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    runs = actions.add_parser("runs", help="a task's runs, newest first: fired, failed, skipped and why")
    runs.add_argument("task_id", metavar="ID")
    runs.add_argument("--json", action="store_true", help="print a JSON list")
    runs.add_argument("--limit", type=int, metavar="N", help="only the N newest runs")
    for name, text in (("pause", "stop a task firing (runs that have not started are cancelled)"),
                       ("resume", "let a paused task fire again"),
                       ("delete", "remove a task and its history (a run in progress is cancelled)"),
                       ("run", "run a task now; needs a live runtime backend")):
        actions.add_parser(name, help=text).add_argument("task_id", metavar="ID")


def _fill_store(store: argparse.ArgumentParser) -> None:
    actions = store.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("migrate", help="bring the store (SQLite, or store.url) to this axpipe's schema")
    copy = actions.add_parser("copy", help="copy this project's SQLite store into an empty PostgreSQL store, "
                                           "then compare every row")
    copy.add_argument("--to", required=True, metavar="URL", help="the target: postgresql://USER@HOST/DB")


def _fill_runtime(runtime: argparse.ArgumentParser) -> None:
    actions = runtime.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="run a backend in the foreground (sweeps at start, then every D)")
    start.add_argument("--sweep-interval", metavar="D", default="60s", help="time between sweeps (default 60s, min 1s)")
    status = actions.add_parser("status", help="live backends and their work; exit 1 when none is alive")
    status.add_argument("--json", action="store_true", help="print JSON")
    stop = actions.add_parser("stop", help="stop the live backends; runs in progress finish on their own")
    stop.add_argument("--id", dest="backend_id", metavar="ID", help="only this backend")
    stop.add_argument("--timeout", metavar="D", default="30s", help="how long to wait for them (default 30s)")


_LOOP_EPILOG = """\
A loop lives only in the process that runs it (this one): it ends when the process ends.
It ticks at once, then every INTERVAL; a tick that comes while the previous one still runs
is skipped and counted, never queued. Each tick is an ordinary run of the goal's recipe
(probe, contracts, budgets, completion gate). A checkout runs one loop: starting one
replaces the running loop after its tick in progress.
exit codes: as `axpipe run` (0 goal complete, 3 blocked, 4 budget limited, 6 stopped or
paused with the goal still active, 7 checkout held by another run); 2 bad arguments."""


def _fill_loop(loop: argparse.ArgumentParser) -> None:
    actions = loop.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = actions.add_parser(
        "start", help="run a loop in the foreground: a tick now, then one every INTERVAL",
        description="Run the goal's recipe (or --recipe NAME) with this loop, in the foreground.",
        epilog=_LOOP_EPILOG, formatter_class=_RawFormatter)
    start.add_argument("interval", metavar="INTERVAL", help="time between ticks, 30s..24h (e.g. 5m)")
    start.add_argument("prompt", metavar="PROMPT", nargs="?", help="sent to the goal's agent each tick, "
                       "before its work prompt")
    start.add_argument("--command", metavar="CMD", dest="tick_command",
                       help="run CMD each tick instead of the agent's turn")
    which = start.add_mutually_exclusive_group()
    which.add_argument("--goal", metavar="ID", dest="goal_id",
                       help="the goal to drive (default: the project's only resumable goal)")
    which.add_argument("--recipe", metavar="NAME", help="loop on this recipe instead of a goal's")
    start.add_argument("--max-runs", metavar="N", type=int, default=500,
                       help="stop after N ticks, 1..500 (default 500)")
    start.add_argument("--json", action="store_true", help="JSONL events on stdout")
    start.add_argument("--event-log", metavar="PATH", help="also append the events to PATH")
    status = actions.add_parser("status", help="the running loop: runs, busy-skips, the prompt; exit 1 when none runs")
    status.add_argument("--json", action="store_true", help="print JSON")
    stop = actions.add_parser("stop", help="stop the running loop after its tick in progress")
    stop.add_argument("--now", action="store_true", help="end the tick in progress too (its processes are ended)")
    stop.add_argument("--timeout", metavar="D", default="30s", help="how long to wait for it (default 30s)")


def _fill_review(review: argparse.ArgumentParser) -> None:
    review_commands = review.add_subparsers(dest="action", metavar="ACTION", required=True)
    review_round = review_commands.add_parser(
        "round", help="run every reviewer once on HEAD into ROOT/round-<n>/",
        description="Run the reviewers of a recipe's `reviewers:` section once on HEAD. A round where every "
                    "reviewer exits 0 with one final verdict becomes ROOT/round-<n>/; otherwise the attempt "
                    "stays under ROOT/attempts/ and the exit code is 1.")
    review_round.add_argument("overrides", nargs="*", default=[], help="Hydra overrides for the recipe, KEY=VALUE")
    review_round.add_argument("--recipe", metavar="NAME", help="recipe whose reviewers to run (required)")
    review_round.add_argument("--reviewers", metavar="A,B", help="only these reviewers, by name")
    review_round.add_argument("--root", metavar="DIR",
                              help="receipts folder (default: the recipe's receipts.root, else .axpipe/review)")
    review_round.add_argument("--base", metavar="REV",
                              help="diff base (default: the first round's base, else HEAD's parent)")
    review_round.add_argument("--max-diff-bytes", type=int, default=4 * 1024 * 1024, metavar="N",
                              help="refuse a diff larger than this (default 4 MiB)")
    review_round.add_argument("--json", action="store_true", help="print the round as JSON")


def _fill_receipts(receipts: argparse.ArgumentParser) -> None:
    receipts_commands = receipts.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = receipts_commands.add_parser(
        "verify", help="check review rounds, verdicts, dispositions and regression tests",
        description="Verify CLI-review receipts: exit 0 when there is no problem, 1 listing every problem "
                    "with its round, reviewer and finding, 2 for bad input.")
    verify.add_argument("--root", metavar="DIR", required=True, help="folder holding round-<n>/ folders")
    verify.add_argument("--reviewers", metavar="A,B,C",
                        help="required reviewers (default: every reviewer folder of the final round)")
    verify.add_argument("--test-dir", default="tests", metavar="DIR",
                        help="folder regression tests must live in (default: tests)")
    verify.add_argument("--test-adapter", metavar="NAME",
                        help="test adapter for every regression (default: chosen by file suffix)")
    verify.add_argument("--timeout", default="10m", metavar="DURATION",
                        help="kill a regression test run after this long (default: 10m)")
    verify.add_argument("--python", metavar="PATH",
                        help="interpreter that runs Python regression tests (default: the project's .venv or "
                             "venv, else python3 on PATH)")
    verify.add_argument("--json", action="store_true", help="print the verification as JSON")


_Fill = Callable[[argparse.ArgumentParser], None]
_RAW = _RawFormatter

# Every subcommand in `axpipe --help` order: its help line, add_parser's other options and
# what fills in its arguments (``run`` has none: Hydra parses them).
_COMMANDS: dict[str, tuple[str, dict[str, Any], _Fill | None]] = {
    "run": ("compose a recipe with Hydra and run it (recipe=NAME [overrides] [-m] [--cfg job])",
            {"add_help": False}, None),
    "recipes": ("list recipes on the search path, or show one composed", {}, _fill_recipes),
    "verify": ("run one frozen check of a goal and record its receipt", {}, _fill_verify),
    "goal": ("a goal's status, and headless control: pause, clear, resume, ...", {}, _fill_goal),
    "task": ("a goal's task file: show, approve, answer, note, replan, reopen", {}, _fill_task),
    "rules": ("standing rules in every agent instruction file: sync, check", {}, _fill_rules),
    "guard": ("judge a change with the cheating-fix guards (CI, pre-commit)",
              {"description": "Run every installed guard (axpipe.guards) over a change and report each finding.",
               "epilog": _GUARD_EPILOG, "formatter_class": _RAW}, _fill_guard),
    "gate": ("the project's lint, type-check and tests, narrowed to a change",
             {"description": "Run the gate phases of a recipe's `gate:` section, or the commands given here, and "
                             "judge them only on what changed since the baseline.",
              "epilog": _GATE_EPILOG, "formatter_class": _RAW}, _fill_gate),
    "repair": ("replx: repair a target until its declared condition holds",
               {"description": "Run TARGET once per iteration; while the success condition fails, an agent makes "
                               "one fix, judged by the guards. TARGET is a command, or a prose end state the agent "
                               "turns into one.",
                "epilog": _REPAIR_EPILOG, "formatter_class": _RAW}, _fill_repair),
    "plugins": ("list installed plugins per namespace", {}, _fill_plugins),
    "schedule": ("durable scheduled tasks: add, list, show, runs, pause, ...", {}, _fill_schedule),
    "runtime": ("the backend that fires scheduled tasks: start, status, stop", {}, _fill_runtime),
    "store": ("the project store: migrate it, or copy it into PostgreSQL", {}, _fill_store),
    "loop": ("repeat a goal's work every interval, in this process: start, status, stop", {}, _fill_loop),
    "review": ("run a review round with a recipe's reviewers", {}, _fill_review),
    "receipts": ("verify review receipts", {}, _fill_receipts),
    "report": ("a static HTML report of runs, goals, receipts, repairs, gates and schedules", {}, _fill_report),
    "deliver": ("push a complete goal's branch and open its pull request again", {}, _fill_deliver),
}


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "recipes":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import recipes

        if args.action == "list":
            return recipes.list_recipes(as_json=args.json)
        return recipes.show_recipe(name=args.name, overrides=args.overrides, resolve=args.resolve)
    if args.command in ("goal", "verify"):
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import goal

        if args.command == "verify":
            return goal.verify(check_id=args.check_id, goal_id=args.goal_id, session_id=args.session_id,
                               as_json=args.json)
        if args.action == "status":
            return goal.status(goal_id=args.goal_id, session_id=args.session_id, as_json=args.json)
        if args.action == "resume":
            from axpipe import workspace  # deferred: pathlib costs every command's start-up

            event_log = workspace.output_path(args.event_log, "--event-log") if args.event_log else None
            return goal.resume(goal_id=args.goal_id, session_id=args.session_id, event_log=event_log,
                               idle_timeout_ms=args.idle_timeout_ms)
        if args.action == "revise":
            return goal.revise(correction=args.correction, goal_id=args.goal_id)
        return {"pause": goal.pause, "clear": goal.clear, "fork": goal.fork}[args.action](goal_id=args.goal_id)

    if args.command == "task":
        from axpipe.commands import task

        if args.action == "show":
            return task.show(task=args.task, as_json=args.json)
        return task.edit(action=args.action, task=args.task, text=args.text)
    if args.command == "rules":
        from axpipe.commands import rules

        return {"sync": rules.sync, "check": rules.check}[args.action](recipe=args.recipe, overrides=args.overrides)
    if args.command == "repair":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import repair

        return repair.repair(target=args.target, budget=args.budget, until_line=args.until_line,
                             condition=args.condition, agent=args.agent, agent_command=args.agent_command,
                             phases=args.phases, as_json=args.json, report_path=args.report, prose=args.prose,
                             guards=args.guards, protect=args.protect, allow_test_edits=args.allow_test_edits)
    if args.command == "guard":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import guard

        return guard.guard(base=args.base, patch=args.patch, staged=args.staged, guards=args.guards,
                           as_json=args.json, failure_output=args.failure_output, failing_tests=args.failing_test,
                           commands=args.condition_command, runner=args.runner)
    if args.command == "gate":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import gate

        return gate.gate(recipe=args.recipe, overrides=args.overrides, lint=args.lint, typecheck=args.typecheck,
                         test=args.test, command=args.command_, baseline=args.baseline, narrow=args.narrow,
                         timeout=args.timeout, report_dir=args.report_dir, as_json=args.json)
    if args.command == "plugins":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import plugins

        return plugins.list_plugins(as_json=args.json, namespace=args.namespace)
    if args.command == "schedule":
        return _dispatch_schedule(args)
    if args.command == "runtime":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import runtime

        if args.action == "start":
            return runtime.start(sweep_interval=args.sweep_interval)
        if args.action == "status":
            return runtime.status(as_json=args.json)
        return runtime.stop(backend_id=args.backend_id, timeout=args.timeout)
    if args.command == "store":
        from axpipe.commands import store

        return store.migrate() if args.action == "migrate" else store.copy_to(args.to)
    if args.command == "loop":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import loop

        if args.action == "start":
            return loop.start(interval=args.interval, prompt=args.prompt, command=args.tick_command,
                              goal_id=args.goal_id, recipe=args.recipe, max_runs=args.max_runs, as_json=args.json,
                              event_log=args.event_log)
        if args.action == "status":
            return loop.status(as_json=args.json)
        return loop.stop(now=args.now, timeout=args.timeout)
    if args.command == "review":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import review

        return review.review_round(recipe=args.recipe, overrides=args.overrides, reviewers=args.reviewers,
                                   root=args.root, base=args.base, max_diff_bytes=args.max_diff_bytes,
                                   as_json=args.json)
    if args.command == "receipts":
        # deferred: each command loads only its own module (start-up)
        from axpipe.commands import receipts

        return receipts.verify_receipts(root=args.root, reviewers=args.reviewers, test_dir=args.test_dir,
                                        test_adapter=args.test_adapter, timeout=args.timeout, python=args.python,
                                        as_json=args.json)
    if args.command == "report":
        from axpipe.commands import report

        return report.report(out=args.out, open_browser=args.open_browser, as_json=args.json, since=args.since)
    if args.command == "deliver":
        from axpipe.commands import deliver

        return deliver.deliver(task=args.task, dry_run=args.dry_run)
    raise AssertionError(f"unhandled command {args.command}")  # argparse only accepts known ones


def _dispatch_schedule(args: argparse.Namespace) -> int:
    # deferred: each command loads only its own module (start-up)
    from axpipe.commands import schedule

    if args.action == "add":
        kind = next(name for name in ("cron", "daily", "weekly", "at") if getattr(args, name) is not None)
        return schedule.add_task(kind=kind, expression=getattr(args, kind), tz=args.tz, recipe=args.recipe,
                                 overrides=args.overrides, title=args.title, catch_up=args.catch_up,
                                 max_run_duration=args.max_run_duration, grace=args.grace, task_id=args.task_id)
    if args.action == "list":
        return schedule.list_tasks(as_json=args.json)
    if args.action == "show":
        return schedule.show_task(task_id=args.task_id, as_json=args.json)
    if args.action == "runs":
        return schedule.task_runs(task_id=args.task_id, as_json=args.json, limit=args.limit)
    return schedule.control(action=args.action, task_id=args.task_id)  # argparse only accepts known ones


def expose_own_scripts() -> None:
    """Put the folder of axpipe's own interpreter at the *end* of ``PATH``.

    Tools installed with axpipe (``pip install 'axpipe[ruff]'`` puts ruff next to it) are
    then found by checks, agents and plan validation when axpipe runs from a venv that is
    not activated, or from pipx; the user's own tools still come first.
    """
    import os

    scripts = os.path.dirname(sys.executable)
    path = os.environ.get("PATH", os.defpath)  # without PATH, programs are looked up in os.defpath
    if scripts and scripts not in path.split(os.pathsep):
        os.environ["PATH"] = f"{path}{os.pathsep}{scripts}" if path else scripts


def keep_name_bytes(stream: object) -> None:
    """Let ``stream`` write a file name that is not UTF-8 as its own bytes, as ls and git do.
    Such names reach axpipe as surrogate escapes; a strict stream (a UTF-8 locale, or
    PYTHONIOENCODING=utf-8) would end the command with UnicodeEncodeError instead, and
    stderr (backslashreplace) would print ``\\udce9``, which names no file on disk."""
    if not hasattr(stream, "reconfigure"):
        return
    errors = getattr(stream, "errors", None)
    if errors == "strict":
        stream.reconfigure(errors="surrogateescape")
    elif errors == "backslashreplace":  # stderr: an error message must never fail to print
        import codecs  # loaded at every start already (the encodings need it)

        codecs.register_error(_NAME_BYTES, _name_bytes_or_escape)
        stream.reconfigure(errors=_NAME_BYTES)


_NAME_BYTES = "axpipe-name-bytes"


def _name_bytes_or_escape(error: UnicodeError) -> tuple[str | bytes, int]:
    """Error handler: a surrogate escape (a name's byte) is written as that byte, as
    ``surrogateescape`` does; anything else that cannot be encoded is still escaped."""
    import codecs

    if isinstance(error, UnicodeEncodeError):
        chunk = error.object[error.start:error.end]
        if all("\udc80" <= char <= "\udcff" for char in chunk):
            return bytes(ord(char) - 0xDC00 for char in chunk), error.end
    return codecs.backslashreplace_errors(error)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``axpipe`` console script; returns the exit code."""
    expose_own_scripts()
    keep_name_bytes(sys.stdout)
    keep_name_bytes(sys.stderr)  # error messages name the same files
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] == "run":
        if argv is None:  # the process is axpipe's own: see axpipe.run.collector
            collector.pause(arguments[1:])
        # deferred: Hydra loads only for `run`
        from axpipe.run import app as hydra_app

        return guarded(lambda: _refused_or(lambda: hydra_app.main(arguments[1:]), "run", None))
    parser = build_parser(command=arguments[0] if arguments else "")
    try:
        args = parser.parse_args(arguments)
    except SystemExit as stop:  # --help, --version, usage errors (exit 2)
        return int(stop.code or 0) if isinstance(stop.code, int) or stop.code is None else 2
    return guarded(lambda: _refused_or(lambda: _dispatch(args), args.command, getattr(args, "action", None)))


def _refused_or(run: Callable[[], int], command: str, action: str | None) -> int:
    """``run()``, unless a read-only unit (``AXPIPE_ROLE``) asks for a command that changes state."""
    if "AXPIPE_ROLE" in os.environ:  # only inside a unit: nothing more to import otherwise
        from axpipe.unit.read_only import refuse_in_read_only_unit

        refuse_in_read_only_unit(command, action)
    return run()


if __name__ == "__main__":
    sys.exit(main())
