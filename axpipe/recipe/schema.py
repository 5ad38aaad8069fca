"""The typed shape of a recipe (DESIGN §2 and §13), with defaults and allowed ranges.

Each section is a dataclass; each field carries a one-line ``doc`` and, where the design
bounds it, ``min``/``max`` or ``choices`` in its metadata. :mod:`axpipe.recipe.typed` turns a
composed recipe into these objects and reports every problem at once. Durations are
stored as seconds (``float``); the ``Duration`` marker tells the validator to parse them.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, NewType

from axpipe.records import record

Duration = NewType("Duration", float)
"""Seconds, written in a recipe as ``30s``, ``5m``, ``1h30m`` or an integer."""

Command = NewType("Command", object)
"""A shell string or a list of arguments (``["pytest", "-q"]``)."""

MINUTE = 60.0
HOUR = 3600.0


def spec(default: Any = None, *, doc: str, **bounds: Any) -> Any:
    """A dataclass field with its documentation and validation bounds in the metadata."""
    metadata = {"doc": doc, **bounds}
    if isinstance(default, (list, dict)):
        factory = default.copy
        return field(default_factory=factory, metadata=metadata)
    if isinstance(default, type):
        return field(default_factory=default, metadata=metadata)
    return field(default=default, metadata=metadata)


REQUIRED = object()
"""Marks a field that has no default and must be given when its section is."""


@record
class Acceptance:
    """An acceptance criterion (``goal.acceptance.<id>``): what done means, and its check."""

    tag: str = spec("closes", doc="closes (a command decides), found (seen on the app) or process (for people)",
                    choices=("closes", "found", "process"))
    text: str = spec("", doc="the criterion in words")
    check: str | None = spec(None, doc="id of the check that proves this criterion")


@record
class Source:
    """A document the goal is built from (``goal.sources[]``)."""

    role: str = spec("", doc="what the source is to the goal (legacy, requirement, ...)")
    reference: str = spec("", doc="where it is: a path, a URL without credentials, a ref")


@record
class CheckSpec:
    """An executable check (``goal.checks[]``): its frozen command and the criteria it proves."""

    id: str = spec(REQUIRED, doc="unique id, used by `axpipe verify <id>`")
    kind: str = spec("command", doc="check kind: a plugin in axpipe.checks")
    acceptance: list[str] = spec([], doc="acceptance ids this check proves")
    command: Command | None = spec(None, doc="the frozen command, a string or a list")
    params: dict[str, Any] = spec({}, doc="kind-specific parameters (may also be given inline)")
    purpose: str = spec("", doc="what the check asserts")
    environment: str = spec("", doc="what it needs to run")
    timeout: Duration = spec(10 * MINUTE, doc="kill the check after this long", min=1.0, max=72 * HOUR)
    held_out: bool = spec(False, doc="never shown to the agent")


@record
class Budget:
    """The goal's budgets (``goal.budget``)."""

    tokens: int | None = spec(None, doc="token budget, as reported by the agent plugin", min=1)
    cost: float | None = spec(None, doc="cost budget in USD, as the agent reports it (a turn that reports no "
                              "cost spends it: docs/agents.md)", min=0.0)
    time: Duration | None = spec(None, doc="wall-clock budget", min=1.0)
    steps: int = spec(20000, doc="step cap: ticks and iterations; reaching it pauses the goal", min=1, max=20000)


@record
class Goal:
    """The ``goal:`` section: objective, acceptance criteria, checks and budgets."""

    objective: str = spec(REQUIRED, doc="what done means, in one sentence")
    id: str | None = spec(None, doc="stable goal id (default: the recipe name and its variables' values)")
    assure: bool = spec(True, doc="require receipts for completion")
    acceptance: dict[str, Acceptance] = spec({}, doc="acceptance criteria by id")
    sources: list[Source] = spec([], doc="documents the goal is built from")
    source_paths: list[str] = spec(["."], doc="paths whose content the fingerprint covers")
    checks: list[CheckSpec] = spec([], doc="executable checks")
    budget: Budget = spec(Budget, doc="token, time and step budgets")
    no_progress_limit: int = spec(3, doc="ticks without new passing evidence before pausing", min=1, max=1000)
    protect: list[str] | None = spec(None, doc="globs of files the agent may not edit: its edits there are "
                                     "reverted (default: the project's tests, docs/guards.md)")
    allow_test_edits: bool = spec(False, doc="let the agent edit the project's tests (turns `protect` off)")
    task_file: str | None = spec(None, doc="the goal's task file, a project path (default with `roles:`: "
                                           ".axpipe/tasks/<goal>.md; docs/roles.md)")


@record
class Pacing:
    """``agent.pacing``: how often units of this agent may start, across every run, loop and
    backend that shares the store (docs/agents.md)."""

    requests_per_minute: float | None = spec(None, doc="units started per minute at most (spaced evenly)",
                                             min=0.001, max=10000.0)
    tokens_per_minute: int | None = spec(None, doc="tokens the agent's turns may use per minute, as they report "
                                         "them (a turn that used more delays the next)", min=1)
    key: str | None = spec(None, doc="what shares the pace (default: the agent kind and model)")


@record
class AgentSpec:
    """The ``agent:`` section (and a repair's ``agent``): the program that edits code."""

    kind: str = spec("command", doc="agent plugin in axpipe.agents")
    model: str | None = spec(None, doc="the model the agent uses, if it has one")
    autonomous: bool = spec(True, doc="false: the agent's first permission prompt stops the tick")
    timeout: Duration = spec(60 * MINUTE, doc="kill the agent after this long", min=1.0, max=72 * HOUR)
    params: dict[str, Any] = spec({}, doc="kind-specific parameters (may also be given inline)")
    pacing: Pacing = spec(Pacing, doc="requests and tokens per minute across runs sharing the store")


@record
class Work:
    """The ``work:`` section: the prompt the agent is given."""

    prompt: str = spec("", doc="jinja2 template sent to the agent")


@record
class Loop:
    """The ``loop:`` section: ticks at an interval until the goal settles."""

    interval: Duration = spec(REQUIRED, doc="time between ticks", min=30.0, max=24 * HOUR,
                              testing_min=0.01)  # only with AXPIPE_TESTING_FAST=1 (docs/loops.md)
    prompt: str | None = spec(None, doc="sent to the goal's agent each tick, before the work prompt")
    command: Command | None = spec(None, doc="run each tick instead of the agent's turn")
    max_runs: int = spec(500, doc="stop after this many ticks", min=1, max=500)


@record
class SuccessSpec:
    """A repair's declared success condition (``repair.success``)."""

    kind: str = spec("exit", doc="exit (code 0), oracle (a required line), or another check kind")
    params: dict[str, Any] = spec({}, doc="the condition's parameters, e.g. oracle's line (may be inline)")


@record
class Repair:
    """The ``repair:`` section: a replx target, its budget and its success condition."""

    target: str = spec(REQUIRED, doc="a command, or a prose end state")
    budget: int = spec(4, doc="iterations", min=1, max=32, strict_int=True)
    success: SuccessSpec = spec(SuccessSpec, doc="the declared success condition")
    phases: dict[str, str] = spec({}, doc="lint/build/test commands of a combined target",
                                  keys=("lint", "build", "test"))
    guards: list[str] | None = spec(None, doc="guards to apply (default: all installed)")
    protect: list[str] | None = spec(None, doc="globs of files a fix may not edit: its edits there are reverted "
                                     "before any guard runs (default: the project's tests, docs/guards.md)")
    allow_test_edits: bool = spec(False, doc="let fixes edit the project's tests (turns `protect` off)")
    agent: AgentSpec | None = spec(None, doc="the agent making the fixes (default: the recipe's agent)")
    prose: bool = spec(False, doc="the target is a prose end state even if it starts like a command")


@record
class Gate:
    """The ``gate:`` section: the project's lint, typecheck and test commands, narrowed to the change."""

    command: Command | None = spec(None, doc="one gate command")
    phases: dict[str, str] = spec({}, doc="lint/typecheck/test commands", keys=("lint", "typecheck", "test"))
    narrow: bool = spec(True, doc="count findings only on changed lines")
    baseline: str | None = spec(None, doc="revision to narrow against (default: the commit the unit "
                                                 "started from; without a goal, HEAD when the run started)")
    timeout: Duration = spec(30 * MINUTE, doc="kill a gate command after this long", min=1.0, max=72 * HOUR)


@record
class ReviewerSpec:
    """One reviewer of the ``reviewers:`` list."""

    name: str = spec(REQUIRED, doc="folder name of this reviewer's output")
    kind: str = spec("command", doc="reviewer plugin in axpipe.reviewers")
    command: Command | None = spec(None, doc="the review CLI")
    model: str | None = spec(None, doc="model the reviewer uses")
    judge: bool = spec(False, doc="acts as judge (must not share the agent's model)")
    qa: bool = spec(False, doc="acts as QA: its output ends with `qa: PASS|FAIL|CANNOT_VERIFY`")
    params: dict[str, Any] = spec({}, doc="kind-specific parameters (may also be given inline)")


@record
class ReviewRole:
    """``roles.qa`` / ``roles.judge``: a reviewer acting as QA or judge (the same as a
    ``reviewers`` entry with ``qa: true`` / ``judge: true``, named after its role)."""

    kind: str = spec("command", doc="reviewer plugin in axpipe.reviewers")
    command: Command | None = spec(None, doc="the review CLI")
    model: str | None = spec(None, doc="model the reviewer uses (never the implementer's)")
    params: dict[str, Any] = spec({}, doc="kind-specific parameters (may also be given inline)")


@record
class Roles:
    """The ``roles:`` section (DESIGN §14): who does each unit of a goal's work."""

    planner: AgentSpec | None = spec(None, doc="writes the task file's Plan, Scope and Acceptance criteria "
                                               "when it has no criteria")
    prototype: AgentSpec | None = spec(None, doc="read-only: writes .axpipe/artifacts/<task>/ and the "
                                                 "Prototype section, before the first implementer unit")
    implementer: AgentSpec | None = spec(None, doc="edits code inside scope (the same as `agent:`)")
    qa: ReviewRole | None = spec(None, doc="QA after the gate (the same as a reviewer with `qa: true`)")
    judge: ReviewRole | None = spec(None, doc="judge after QA (the same as a reviewer with `judge: true`)")


@record
class Rules:
    """The ``rules:`` section: the standing rules every agent instruction file carries."""

    standing: str | None = spec(None, doc="the standing rules' Markdown file, a project path")
    targets: list[str] | None = spec(None, doc="agent instruction files to keep in sync (default by agent preset)")


@record
class Receipts:
    """The ``receipts:`` section: the verifier that checks review receipts."""

    verifier: str = spec("cli-review", doc="receipt verifier in axpipe.receipt_verifiers")
    root: str = spec(".axpipe/review", doc="folder holding round-<n>/ folders")
    test_dir: str = spec("tests", doc="folder regression tests must live in")
    reviewers: list[str] | None = spec(None, doc="required reviewers (default: all of the final round)")
    python: str | None = spec(None, doc="interpreter for Python regression tests (default: the project's .venv or "
                                        "venv, else python3 on PATH)")


@record
class ScheduleSpec:
    """One durable task of the ``schedule:`` list."""

    id: str = spec(REQUIRED, doc="stable id; registering again updates the task")
    title: str = spec("", doc="shown by `schedule list`")
    at: str | None = spec(None, doc="one-shot ISO date-time")
    daily: str | None = spec(None, doc="HH:MM")
    weekly: str | None = spec(None, doc="DAY@HH:MM, e.g. MON@09:00")
    cron: str | None = spec(None, doc="5-field cron expression")
    tz: str | None = spec(None, doc="IANA time zone, e.g. Europe/Lisbon")
    recipe: str = spec(REQUIRED, doc="recipe to run")
    overrides: list[str] = spec([], doc="overrides for that recipe")
    catch_up: str = spec("run_once", doc="what to do with missed occurrences", choices=("run_once", "skip"))
    grace: Duration = spec(5 * MINUTE, doc="how late an occurrence may still run as usual", min=0.0, max=24 * HOUR)
    max_run_duration: Duration = spec(HOUR, doc="cancel a run after this long", min=1.0, max=72 * HOUR)


@record
class Limits:
    """The ``limits:`` section: bounces, unit timeout and fingerprint limits."""

    bounces: int = spec(2, doc="failed QA plus rejected reviews before the goal waits for a person", min=1, max=100)
    unit_timeout: Duration = spec(60 * MINUTE, doc="longest a unit of work may take", min=1.0, max=72 * HOUR)
    fingerprint_entries: int = spec(20000, doc="most files a fingerprint covers", min=1, max=20000)
    fingerprint_bytes: int = spec(128 * 1024 * 1024, doc="most content bytes a fingerprint reads",
                                  min=1, max=128 * 1024 * 1024)


@record
class Workspace:
    """The ``workspace:`` section: where the run works."""

    sample: str | None = spec(None, doc="run in a git copy of this sample project shipped with axpipe")
    persist: bool = spec(False, doc="keep the sample copy in .axpipe/workspaces/<sample> and reuse it")


@record
class Coverage:
    """The ``coverage:`` section: accepted and remaining batches of a batched migration."""

    inventory: str = spec(REQUIRED, doc="YAML file in the workspace listing every batch")
    key: str = spec("batches", doc="the mapping (or list) of batches in that file")
    variable: str = spec(REQUIRED, doc="the recipe variable naming the batch (e.g. batch)")


@record
class App:
    """The ``app:`` section: the application ``[found]`` criteria are checked on in a browser."""

    command: Command = spec(REQUIRED, doc="starts the app in the workspace, in its own process group")
    url: str = spec(REQUIRED, doc="where the app answers (http://localhost:PORT/ or http://127.0.0.1:PORT/)")
    ready: str | None = spec(None, doc="a URL that answers once the app is up (default: url)")
    ready_timeout: Duration = spec(30.0, doc="give up when the app has not answered by then", min=1.0, max=10 * MINUTE)


@record
class Deliver:
    """The ``deliver:`` section: the runner commits each unit, checks the branch, pushes, opens a pull request."""

    branch: str = spec("axpipe/{task}", doc="the task branch; {task} is the task's name")
    base: str | None = spec(None, doc="branch the task branch is made from and compared with (default: the "
                                      "branch checked out when the goal's first unit starts)")
    subject: str = spec("{task}: {summary}", doc="commit subject template: {task}, {summary}, {unit}")
    subject_pattern: str | None = spec(None, doc="regex every commit subject on the branch must match "
                                                 "(default: ^<task>: )")
    author: str | None = spec(None, doc="commit author, `Name <email>` (default: git's config)")
    remote: str = spec("origin", doc="the git remote the branch is pushed to")
    pr: str | None = spec(None, doc="plugin in axpipe.deliverers that opens the pull request (github, gitlab)")
    params: dict[str, Any] = spec({}, doc="the deliverer's parameters (may also be given inline)")
    timeout: Duration = spec(5 * MINUTE, doc="kill a push or pull-request command after this long",
                             min=1.0, max=HOUR)


@record
class Recipe:
    """A whole recipe, as composed by Hydra (DESIGN §2)."""

    name: str = spec(REQUIRED, doc="the recipe's name")
    description: str = spec("", doc="one line shown by `recipes list`")
    probe: Command | None = spec(None, doc="command proving the environment is up; failure exits 5")
    probe_timeout: Duration = spec(MINUTE, doc="kill the probe after this long", min=1.0, max=HOUR)
    goal: Goal | None = spec(None, doc="the goal and its acceptance checks")
    agent: AgentSpec | None = spec(None, doc="the program that does the work (the implementer role)")
    roles: Roles | None = spec(None, doc="planner, prototype, implementer, qa and judge agents (docs/roles.md)")
    rules: Rules | None = spec(None, doc="standing rules told to every agent")
    work: Work | None = spec(None, doc="the work prompt")
    loop: Loop | None = spec(None, doc="repeat work until the goal settles")
    repair: Repair | list[Repair] | None = spec(None, doc="a replx repair target, or a list of them (run in order)")
    gate: Gate | None = spec(None, doc="the gate, narrowed to the change")
    scope: list[str] | None = spec(None, doc="paths and globs the work may change")
    reviewers: list[ReviewerSpec] = spec([], doc="review round set-up")
    receipts: Receipts | None = spec(None, doc="the receipt verifier to apply")
    schedule: list[ScheduleSpec] = spec([], doc="tasks to register")
    limits: Limits = spec(Limits, doc="bounces, unit timeout, fingerprint limits")
    workspace: Workspace = spec(Workspace, doc="where the run works (default: this checkout)")
    coverage: Coverage | None = spec(None, doc="report accepted and remaining batches after each run")
    app: App | None = spec(None, doc="the app `browser` checks start and open ([found] criteria)")
    deliver: Deliver | None = spec(None, doc="commit each unit on a task branch, then push and open a pull request")


def is_schema_path(dotted: str) -> bool:
    """Whether ``dotted`` (``goal.budget.time``) names a value of the recipe schema.

    Mapping keys under a ``dict[str, X]`` field (acceptance ids, params) match any name;
    list indices match any number (``goal.checks.0.timeout``).
    """
    import dataclasses
    import types
    import typing

    current: Any = Recipe
    for token in dotted.split("."):
        if current is Any:
            return True
        origin = typing.get_origin(current)
        if origin in (typing.Union, types.UnionType):
            options = [option for option in typing.get_args(current) if option is not type(None)]
            # `repair` is a mapping or a list: a named key goes to the mapping, a number to the list.
            shaped = [option for option in options
                      if (typing.get_origin(option) is list) == token.isdigit()] or options
            current = shaped[0]
            origin = typing.get_origin(current)
        if origin is dict:
            current = typing.get_args(current)[1]
            continue
        if origin is list:
            if not token.isdigit():
                return False
            current = typing.get_args(current)[0]
            continue
        if not dataclasses.is_dataclass(current):
            return False
        hints = typing.get_type_hints(current)
        if token not in hints:
            return False
        current = hints[token]
    return True


def all_paths() -> list[str]:
    """Every dotted path of the recipe schema's named fields (for "did you mean" hints)."""
    import dataclasses
    import types
    import typing

    found: list[str] = []

    def walk(cls: Any, prefix: str) -> None:
        for name, hint in typing.get_type_hints(cls).items():
            path = f"{prefix}{name}"
            found.append(path)
            options = [hint]
            if typing.get_origin(hint) in (typing.Union, types.UnionType):
                options = [option for option in typing.get_args(hint) if option is not type(None)]
            for option in options:
                if dataclasses.is_dataclass(option):
                    walk(option, path + ".")

    walk(Recipe, "")
    return found
