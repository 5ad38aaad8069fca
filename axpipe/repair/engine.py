"""replx: repair until a declared condition holds (DESIGN §6).

A repair runs its target once per iteration, judges the declared success condition, and
otherwise hands the failure to an agent for one fix. Each fix is judged by the guards
(:mod:`axpipe.guard.run`): a fix that deletes or skips a test, loosens an assertion,
swallows the error or hardcodes the expected value is reverted (that iteration's edit
only), counts as an attempt, and the agent is told which guard fired.

Iteration *i* runs the target once; a fix is verified by the next iteration's run and the
last fix by one final run that is not an iteration, so an agent that fixes at its first
call resolves in 2/4 (1/1 with budget 1). The budget is a guard: an integer from 1 to 32,
never clamped. The condition is declared before iteration 1 and never redefined.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe import git, templates, workspace
from axpipe.change import revert
from axpipe.errors import ConfigError, ExitCode, InputError, PluginError
from axpipe.evidence import bytecode
from axpipe.goal import fingerprint
from axpipe.goal.plan import agent_program_problem
from axpipe.goal.turn import Invocation, invoke, load_agent, read_json
from axpipe.guard import protect
from axpipe.guard.run import Unavailable, find_cheating, select_guards
from axpipe.interfaces import AgentStatus, CheckOutcome, CheckRequest, CheckStatus, GuardContext
from axpipe.names import printable
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.plugin.check_run import run_check
from axpipe.recipe import schema
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.run.events import EventLog

BUDGET_MIN, BUDGET_MAX, DEFAULT_BUDGET = 1, 32, 4
CONDITION_ALIASES = {"exit": "command"}
PHASE_ORDER = ("lint", "build", "test")
_STRONG_FAILURE = re.compile(r"\b\w*(?:Error|Exception)\b:|\b[A-Z]{1,3}\d{3,4}\b|\bassert")
_WEAK_FAILURE = re.compile(r"(?i)error|fail|not found|warning")
# Refusals said the same way by `axpipe repair`, a recipe's validation (axpipe.recipe.rules) and prepare.
EMPTY_TARGET = "nothing actionable: the target is empty"
NOT_A_REPOSITORY = "repair needs a git repository: the guards judge each iteration's diff"
_NAMED_FILE = re.compile(r"(?:^|[\s\"'(])(/?(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,6})(?::(\d+))?")


class RepairInputError(InputError):
    """A repair refused before iteration 1; carries the input-error report."""

    def __init__(self, message: str, report: RepairReport) -> None:
        super().__init__(message)
        self.report = report


def _reason(error: InputError) -> str:
    """An input error as the reason of a repair's input-error report."""
    return error.listing if isinstance(error, ConfigError) else error.message


def parse_budget(value: object) -> int:
    """The budget guard: an integer from 1 to 32, else an input error naming the guard."""
    text = str(value).strip() if not isinstance(value, int) or isinstance(value, bool) else value
    if isinstance(text, int):
        number: int | None = text
    else:
        number = int(text) if re.fullmatch(r"[+-]?\d+", text) else None
    if number is None or not BUDGET_MIN <= number <= BUDGET_MAX:
        raise InputError(f"budget must be an integer from {BUDGET_MIN} to {BUDGET_MAX}, got {value}")
    return number


@record
class Iteration:
    """One iteration: the run, what failed, and the fix (or its rejection)."""

    n: int
    command: str
    exit_code: int | None
    oracle_line: str | None
    result: str
    diagnosis: str = ""
    fix: str = ""
    guard: str | None = None
    phase: str | None = None
    evidence: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "command": self.command, "exit_code": self.exit_code, "oracle_line": self.oracle_line,
                "diagnosis": self.diagnosis, "fix": self.fix, "guard": self.guard, "phase": self.phase,
                "result": self.result, "evidence": self.evidence}


@record
class RepairReport:
    """The repair's outcome: the Markdown of DESIGN §6 and the JSON of §13."""

    target: str
    target_kind: str  # command | end state
    command: str
    condition: str
    budget: int | str  # the refused value, as given, in an input-error report
    status: str = "unresolved"  # resolved | unresolved | input-error
    iterations_used: int = 0
    iterations: list[Iteration] = field(default_factory=list)
    final_diff: str = "none"
    not_validated: list[str] = field(default_factory=list)
    reason: str | None = None
    last_failure: str | None = None
    applied: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    next_step: str | None = None
    derived_command: bool = False

    @property
    def exit_code(self) -> ExitCode:
        return {"resolved": ExitCode.OK, "input-error": ExitCode.INPUT_ERROR}.get(self.status, ExitCode.BUDGET_LIMITED)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "condition": self.condition, "budget": self.budget, "status": self.status,
                "iterations_used": self.iterations_used,
                "iterations": [iteration.to_json() for iteration in self.iterations],
                "final_diff": self.final_diff, "not_validated": self.not_validated,
                "command": self.command, "target_kind": self.target_kind, "derived_command": self.derived_command,
                "reason": self.reason, "last_failure": self.last_failure, "applied": self.applied,
                "discarded": self.discarded, "next_step": self.next_step}

    def markdown(self) -> str:
        return templates.render_file("replx-report.md.j2", report=self)


@record
class Condition:
    """The declared success condition: a check kind and its params."""

    kind: str
    plugin: Any
    params: Any
    description: str


def resolve_condition(spec: schema.SuccessSpec, *, path: str = "repair.success") -> Condition:
    """The check kind behind a success condition, typed; an input error when it cannot be verified."""
    name = CONDITION_ALIASES.get(spec.kind, spec.kind)
    try:
        plugin = registry.load("axpipe.checks", name)
    except PluginError as error:
        raise InputError(f"{path}.kind: {error.message}") from error
    params = spec.params
    if isinstance(params, dict):
        params, problems = validation.load_plugin_params(plugin, params, path, None)
        if problems:
            raise InputError("the success condition cannot be verified: "
                             + "; ".join(problem.render() for problem in problems))
    if not getattr(plugin, "needs_command", True):
        raise InputError(runs_no_target(name))
    try:
        described = plugin_calls.call(plugin, "describe", params, returns=str)
    except plugin_calls.PluginFault as fault:
        raise InputError(f"{path}.kind: {fault.message}") from fault
    return Condition(spec.kind, plugin, params, described)


def runs_no_target(kind: str) -> str:
    """The refusal of a success condition whose check kind never runs the target."""
    return f"the success condition cannot be verified: check kind '{kind}' does not run the target"


def looks_like_a_command(target: str, root: Path) -> bool:
    """A target is a command when its first word is a program on PATH or a file in the project."""
    try:
        words = shlex.split(target)
    except ValueError:
        return False
    words = [word for word in words if not re.fullmatch(r"[A-Za-z_]\w*=.*", word)]
    if not words:
        return False
    first = words[0]
    if "/" in first:
        return (root / first).is_file() or Path(first).is_file()
    return shutil.which(first) is not None or (root / first).is_file()


@record
class Declaration:
    """What a repair declares from its input alone (:func:`declare`): its report so far,
    the condition, and the guards that will judge its fixes."""

    report: RepairReport
    condition: Condition
    guards: Any  # axpipe.guard.run.Selection

    def refuse(self, message: str) -> RepairInputError:
        """The input error ``message``, with the report saying nothing ran."""
        return _refusal(self.report, message)


def _refusal(report: RepairReport, message: str) -> RepairInputError:
    report.status, report.reason = "input-error", message
    report.not_validated = ["nothing was run: the repair was refused before iteration 1"]
    return RepairInputError(message, report)


def declare(root: Path, spec: schema.Repair, agent: schema.AgentSpec | None, *, path: str = "repair",
            agent_source: str | None = None, guards_source: str | None = None) -> Declaration:
    """The refusals a repair's input alone decides: an empty target, no git repository, a
    condition that cannot be verified, no agent or one whose command cannot start, a named
    guard that does not load. Reads the workspace and writes nothing, so ``axpipe repair``
    makes it before it takes the checkout (exit 2 leaves no ``.axpipe/`` behind, DESIGN §11).
    ``agent_source`` and ``guards_source``: where the agent's command and the guards were
    given, for the messages (default ``<path>.agent.command``, ``<path>.guards``)."""
    target = spec.target.strip() if isinstance(spec.target, str) else ""
    report = RepairReport(target=target, target_kind="command", command=target, condition="",
                          budget=spec.budget if isinstance(spec.budget, int) else 0)
    if not target:
        raise _refusal(report, EMPTY_TARGET)
    if not workspace.is_git_repository(root):
        raise _refusal(report, NOT_A_REPOSITORY)
    try:
        condition = resolve_condition(spec.success, path=f"{path}.success")
    except InputError as error:
        raise _refusal(report, _reason(error)) from error
    report.condition = condition.description
    if agent is None:
        raise _refusal(report, "a repair needs an agent to make its fixes (--agent, --agent-command, or `agent:`)")
    problem = _agent_problem(agent, root, path=path, source=agent_source or f"{path}.agent.command")
    if problem:
        raise _refusal(report, problem)
    try:  # the guards judge iteration 1's fix: an unknown or broken named one stops the repair before it
        selection = select_guards(spec.guards)
    except PluginError as error:
        raise _refusal(report, f"{guards_source or f'{path}.guards'}: {error.message}") from error
    return Declaration(report, condition, selection)


def _agent_problem(agent: schema.AgentSpec, root: Path, *, path: str, source: str) -> str | None:
    try:
        _, params = load_agent(agent, f"{path}.agent")
    except InputError as error:
        return _reason(error)
    problem = agent_program_problem(params, root)
    return f"{source}: {problem}" if problem else None


class Repair:
    """One repair target driven to its condition (or its budget)."""

    def __init__(self, root: Path, spec: schema.Repair, agent: schema.AgentSpec | None, *, events: EventLog,
                 folder: Path, on_output: Callable[[bytes], None] | None = None, path: str = "repair",
                 agent_source: str | None = None,
                 account: Callable[[int, int, float | None], str | None] | None = None) -> None:
        self.root = root
        self.spec = spec
        self.agent = agent
        self.events = events
        self.folder = folder
        self.on_output = on_output
        self.path = path
        # Where the agent's command was given, for refusals: `--agent-command` on the command line.
        self.agent_source = agent_source or f"{path}.agent.command"
        self.diagnoses: list[str] = []
        # Snapshots, diffs and reverts cover the whole work tree: in a monorepo the agent
        # may edit outside the project's folder, and its edit must be judged and undone whole.
        self.tree = workspace.git_top(root) or root
        self.prefix = workspace.git_prefix(root, self.tree)  # the project's folder in the tree
        self.told: list[str] = []  # guard findings the agent must hear about next turn
        self.judges: list[str] = []  # the guards that judge each fix (set by prepare)
        self.unavailable: list[Unavailable] = []  # installed guards that could not load
        # In a goal's work phase: counts (tokens, steps, cost) into the goal's budget and says which
        # budget is spent (GoalDriver.account); the repair stops before its next fix when one is.
        self.account = account
        self.tokens = 0
        self.goal_spent: str | None = None

    # -- before iteration 1 -----------------------------------------------------------

    def prepare(self, declared: Declaration | None = None) -> RepairReport:
        """Declare target, command and condition; raise RepairInputError when nothing can start.

        ``declared``: the :func:`declare` already made before the run took the checkout (by
        ``axpipe repair``, so that its input errors write nothing); made here otherwise."""
        if declared is None:
            declared = declare(self.root, self.spec, self.agent, path=self.path, agent_source=self.agent_source)
        report, target = declared.report, declared.report.target
        self.condition = declared.condition
        refuse = declared.refuse
        if getattr(self.condition.plugin, "needs_fingerprint", False):
            taken = fingerprint.compute(self.root, ["."], use_cache=False)
            if taken.digest is None:  # it compares the workspace: without a fingerprint it never can
                raise refuse(f"the success condition cannot be verified: the workspace has no fresh fingerprint "
                             f"({'; '.join(taken.reasons[:3])})")
        # Judge every iteration with the guards that loaded now; an installed guard that could
        # not load was not asked for by name: it judges nothing, and the report says so.
        self.judges = list(declared.guards.guards)
        self.unavailable = declared.guards.unavailable
        for item in self.unavailable:
            self.events.emit("repair.guard_unavailable", phase="work", guard=item.name,
                             distribution=item.distribution, error=item.error, warning=item.describe())
        if self.spec.prose or not looks_like_a_command(target, self.root):
            report.target_kind = "end state"
            command, edited = self._derive(target)
            if edited is not None:
                raise refuse(f"the agent edited {edited} while deriving the verifying command for the end state "
                             f"{target!r}: deriving only writes the command to AXPIPE_COMMAND_FILE, every fix "
                             "is made in an iteration the guards judge; the edit was reverted")
            if command is None:
                raise refuse("the agent could not derive a verifying command for the end state "
                             f"{target!r}: it must write one shell command to AXPIPE_COMMAND_FILE")
            report.command, report.derived_command = command, True
        self.report = report
        return report

    def _derive(self, end_state: str) -> tuple[str | None, str | None]:
        """The verifying command the agent derives for ``end_state`` (None when it wrote no
        usable one), and what it edited meanwhile (None when nothing). An edit made here
        would be judged by no guard and kept by a refused repair, so it is reverted."""
        assert self.agent is not None
        prompt = templates.render_file("repair-derive.md.j2", end_state=end_state)
        point = revert.mark(self.root, keep_rules=False)
        run = invoke(self.agent, root=self.root, prompt=prompt, iteration=0, folder=self.folder / "agent",
                     events=self.events, phase="repair", extra_files=("command",), on_output=self.on_output,
                     path=f"{self.path}.agent")
        self._used(run)
        edited, touched = _diff(self.tree, point, self.prefix)
        if (_git(self.tree, "rev-parse", "-q", "--verify", "HEAD") or None) != point.head:
            edited = "a commit" if edited == "none" else f"{edited} (and committed)"
        if edited != "none":
            _revert(self.tree, point)
            bytecode.forget(self.tree, touched)
            return None, edited
        data = read_json(run.files["command"])
        text = data.get("command") if isinstance(data, dict) else None
        if not isinstance(text, str):
            raw = run.files["command"].read_text(encoding="utf-8").strip() if run.files["command"].exists() else ""
            text = raw.splitlines()[0].strip() if raw else None
        if not text or not looks_like_a_command(text, self.root):
            return None, None
        return text, None

    def _used(self, run: Invocation | None = None, *, steps: int = 0) -> None:
        """Count an agent call's tokens or an iteration into the goal's budget, when there is one."""
        tokens = run.tokens if run is not None else 0
        self.tokens += tokens
        if self.account is not None:  # cost None: the agent ran and reported no cost
            self.goal_spent = self.account(tokens, steps, run.cost if run is not None else 0.0) or self.goal_spent

    # -- the iterations ---------------------------------------------------------------

    def run(self) -> RepairReport:
        """Iterate until the condition holds or the budget is spent."""
        report = self.report
        budget = int(report.budget)
        self.events.emit("repair.started", phase="work", target=report.target, command=report.command,
                         condition=report.condition, budget=report.budget, target_kind=report.target_kind,
                         derived=report.derived_command)
        self.start = revert.mark(self.root, keep_rules=False)  # what the final diff is taken against
        mode = "lint" if "lint" in self.spec.phases else None
        last: tuple[CheckOutcome, str, str | None] | None = None
        for number in range(1, budget + 1):
            outcome, command, phase, mode, holds = self._run_once(mode)
            self._used(steps=1)  # an iteration is a step of the goal (DESIGN §4)
            iteration = Iteration(number, command, outcome.exit_code, outcome.matched_line,
                                  self._result(outcome), phase=phase)
            report.iterations.append(iteration)
            if holds:
                iteration.diagnosis, iteration.fix = "the success condition holds", "none needed"
                self._emit(iteration)
                return self._finish("resolved", number, None)
            last = (outcome, command, phase)
            if self.goal_spent is not None:  # no fix past the goal's budget: its driver decides what follows
                iteration.diagnosis = f"observed failure: {self._observed(outcome)}"
                iteration.fix = f"not attempted: the goal's {self.goal_spent} is spent"
                self._emit(iteration)
                return self._finish("unresolved", number, last)
            self._fix(iteration, outcome, command)
            self._emit(iteration)
        outcome, command, _, _, holds = self._run_once(mode, final=True)
        self.events.emit("repair.final_run", phase="work", command=command, passed=holds,
                         result=self._result(outcome))
        if holds:
            return self._finish("resolved", budget, None)
        last = (outcome, command, None)
        return self._finish("unresolved", budget, last)

    def _run_once(self, mode: str | None, *, final: bool = False) -> tuple[CheckOutcome, str, str | None, str | None,
                                                                              bool]:
        """One run: the target under its condition, narrowed by phases when declared.

        Phases (DESIGN §6): run the whole until lint is clean once, then only build and test
        until they pass, then lint once more and the original condition before success.
        Returns (outcome, command run, failing phase, next mode, condition holds).
        """
        phases = self.spec.phases
        if mode is None or final:
            outcome = self._evaluate(self.report.command, self.condition)
            return outcome, self.report.command, None, mode, outcome.passed
        if mode == "lint":
            whole = self._evaluate(self.report.command, self.condition)
            if whole.passed:
                return whole, self.report.command, None, mode, True
            lint = self._evaluate(phases["lint"], None)
            if not lint.passed:
                return lint, phases["lint"], "lint", "lint", False
            mode = "build-test"
        for name in ("build", "test"):
            if name in phases:
                outcome = self._evaluate(phases[name], None)
                if not outcome.passed:
                    return outcome, phases[name], name, "build-test", False
        if "lint" in phases:
            lint = self._evaluate(phases["lint"], None)
            if not lint.passed:
                return lint, phases["lint"], "lint", "lint", False
        whole = self._evaluate(self.report.command, self.condition)
        return whole, self.report.command, None, "lint" if "lint" in phases else None, whole.passed

    def _evaluate(self, command: str, condition: Condition | None) -> CheckOutcome:
        plugin = condition.plugin if condition is not None else registry.load("axpipe.checks", "command")
        params = condition.params if condition is not None else None

        reasons: list[str] = []

        def current() -> str | None:
            # None, never a placeholder: two "no fresh evidence" prints would compare equal
            # and make anything look idempotent.
            taken = fingerprint.compute(self.root, ["."], use_cache=False)
            reasons[:] = taken.reasons
            return taken.digest

        result = run_check(plugin, CheckRequest(
            check_id="repair", command=command, params=params, cwd=self.root, timeout=30 * 60,
            on_output=self.on_output, fingerprint=current))
        if result.status is CheckStatus.ERROR and reasons:
            result.summary += f" ({'; '.join(reasons[:3])})"
        return result

    @staticmethod
    def _result(outcome: CheckOutcome) -> str:
        result = f"exit code {outcome.exit_code}" if outcome.exit_code is not None else outcome.summary
        if outcome.matched_line:
            result += f"; line `{outcome.matched_line}`"
        if outcome.exit_code is not None and outcome.summary and outcome.summary != f"exit code {outcome.exit_code}":
            result += f" ({outcome.summary})"
        return result

    def _fix(self, iteration: Iteration, outcome: CheckOutcome, command: str) -> None:
        assert self.agent is not None
        named = self._named_files(outcome.output_tail)
        failure = {"command": command, "exit_code": outcome.exit_code, "output_tail": outcome.output_tail[-8000:],
                   "iteration": iteration.n, "phase": iteration.phase, "files": named, "summary": outcome.summary}
        failure_file = self.folder / "agent" / f"{iteration.n:04d}-failure.json"
        failure_file.parent.mkdir(parents=True, exist_ok=True)
        failure_file.write_text(json.dumps(failure, indent=2), encoding="utf-8")
        prompt = templates.render_file("repair-prompt.md.j2", report=self.report, failure=failure,
                                       diagnoses=self.diagnoses, guards=self.told, phase=iteration.phase)
        self.told = []
        point = revert.mark(self.root, keep_rules=False)
        staged = protect.staged(self.tree)  # the index's entries, for a protected file the agent staged
        run = invoke(self.agent, root=self.root, prompt=prompt, iteration=iteration.n, folder=self.folder / "agent",
                     events=self.events, phase="repair", extra_files=("notes",),
                     extra_env={"AXPIPE_FAILURE_FILE": str(failure_file)}, on_output=self.on_output,
                     path=f"{self.path}.agent")
        self._used(run)
        notes = read_json(run.files["notes"])
        observed = self._observed(outcome)
        if isinstance(notes, dict) and isinstance(notes.get("diagnosis"), str) and notes["diagnosis"].strip():
            iteration.diagnosis = f"the agent: {notes['diagnosis'].strip()}"
        else:
            iteration.diagnosis = f"observed failure: {observed}"
        self.diagnoses.append(f"iteration {iteration.n}: {iteration.diagnosis}")
        diff, touched = _diff(self.tree, point, self.prefix)
        try:
            self._judge(iteration, outcome, command, run, diff, point, named, touched, staged)
        finally:
            # Kept or reverted, these files changed within seconds of the last run: their
            # cached bytecode may still match them (axpipe.evidence.bytecode).
            bytecode.forget(self.tree, touched)

    def _judge(self, iteration: Iteration, outcome: CheckOutcome, command: str, run: Invocation, diff: str,
               point: revert.Point, named: list[str], touched: list[str] | None = None,
               staged: dict[str, bytes] | None = None) -> None:
        """Keep the agent's fix, or revert it when a guard fires; record which. Edits to
        protected files (axpipe.guard.protect) are undone first, whatever else the fix did."""
        if run.outcome.status is not AgentStatus.DONE and diff == "none":
            iteration.fix = f"no change: the agent {run.outcome.status.value} ({run.outcome.summary})"
            return
        protected = self._protected(touched or [])
        evidence = [f"{path}: {protect.GUARD}: the fix edited a protected file ({self.path}.protect); the edit "
                    "was reverted" for path in protected]
        if protected:
            if (_git(self.tree, "rev-parse", "-q", "--verify", "HEAD") or None) != point.head:
                _revert(self.tree, point)  # committed: only a whole revert takes it back
                self._rejected(iteration, protect.GUARD, evidence, diff)
                return
            protect.restore(self.tree, point, [self.prefix + path for path in protected], staged)
            self.events.emit("repair.protected_path", phase="work", iteration=iteration.n, paths=protected)
            kept, _ = _diff(self.tree, point, self.prefix)
            if kept == "none":
                self._rejected(iteration, protect.GUARD, evidence, diff)
                return
            diff = kept
        findings = find_cheating(self.root, point.tree, GuardContext(
            failure_output=outcome.output_tail[-8000:], command=command,
            commands=[self.report.command, *self.spec.phases.values()], workdir=self.prefix,
            test_files=[self.prefix + path for path in named if "test" in Path(path).name]), guards=self.judges,
            runner="auto")  # the runner the condition runs says which tests still run (axpipe.guard.runner_tests)
        if findings:
            _revert(self.tree, point)
            first = findings[0]
            described = [finding.describe() for finding in findings]
            self._rejected(iteration, first.guard, [*evidence, *described], diff, shown=first.describe())
            return
        iteration.fix = diff if diff != "none" else "no change"
        if protected:
            iteration.guard, iteration.evidence = protect.GUARD, evidence
            iteration.fix += f"; the edits to protected files were reverted ({', '.join(protected)})"
            self.report.discarded.append(f"iteration {iteration.n}: {', '.join(protected)} ({protect.GUARD})")
            self.told = evidence
        if diff != "none":
            label = f" ({iteration.phase} only)" if iteration.phase == "lint" else ""
            self.report.applied.append(f"iteration {iteration.n}{label}: {diff}")

    def _rejected(self, iteration: Iteration, guard: str, evidence: list[str], diff: str, *,
                  shown: str | None = None) -> None:
        """The iteration's whole edit was reverted because of ``guard``."""
        iteration.guard = guard
        iteration.evidence = evidence
        iteration.fix = f"rejected by the {guard} guard ({shown or evidence[0]}); the edit ({diff}) was reverted"
        self.report.discarded.append(f"iteration {iteration.n}: {diff} ({guard})")
        self.told = evidence

    def _protected(self, touched: list[str]) -> list[str]:
        """The changed paths (from the project's folder) the recipe protects."""
        globs = protect.patterns(self.spec.protect, self.spec.allow_test_edits)
        return protect.matching([workspace.from_top(path, self.prefix) for path in touched], globs)

    def _named_files(self, output: str) -> list[str]:
        found: list[str] = []
        for match in _NAMED_FILE.finditer(output):
            candidate = match.group(1)
            path = Path(candidate)
            if path.is_absolute():
                try:
                    candidate = str(path.resolve().relative_to(self.root.resolve()))
                except ValueError:
                    continue
            if (self.root / candidate).is_file() and candidate not in found:
                found.append(candidate)
        return found[:20]

    @staticmethod
    def _observed(outcome: CheckOutcome) -> str:
        """The most telling line of the failure: an exception or rule code over a summary."""
        lines = [line.strip() for line in outcome.output_tail.splitlines() if line.strip()]
        for pattern in (_STRONG_FAILURE, _WEAK_FAILURE):
            for line in reversed(lines):
                if pattern.search(line):
                    return line[:300]
        return outcome.summary

    def _emit(self, iteration: Iteration) -> None:
        fields = iteration.to_json()
        fields["repair_phase"] = fields.pop("phase")  # `phase` is the lifecycle phase in every event
        self.events.emit("repair.iteration", phase="work", **fields)

    def _finish(self, status: str, used: int, last: tuple[CheckOutcome, str, str | None] | None) -> RepairReport:
        report = self.report
        report.status, report.iterations_used = status, used
        report.final_diff = _diff(self.tree, self.start, self.prefix)[0]
        report.not_validated = self._not_validated()
        if last is not None:
            outcome, command, _ = last
            report.last_failure = f"`{command}`: {self._result(outcome)}: {self._observed(outcome)}"
            rejected = sum(1 for iteration in report.iterations if iteration.guard)
            if self.goal_spent is not None:
                report.next_step = (f"the goal's {self.goal_spent} is spent: the repair stopped at iteration {used} "
                                    f"of {report.budget}; raise the goal's budget to go on")
            elif rejected:
                # The condition guard's findings are about what the condition runs, not the tests.
                guards = {iteration.guard for iteration in report.iterations if iteration.guard}
                condition = guards & {"redefined-condition", "silenced-linter"}
                left_alone = ("the tests" if not condition else "the tests or the success condition"
                              if guards - condition else
                              "what the success condition runs (its scripts, runner or linter configuration)")
                report.next_step = (f"{rejected} fix(es) were rejected by guards: fix the code under test, not "
                                    f"{left_alone}; give the agent the guard evidence above, or raise the budget")
            else:
                report.next_step = (f"run `{report.command}` and read the last failure; raise the budget "
                                    f"(up to {BUDGET_MAX}) or try another agent")
        self.events.emit("repair.finished", phase="work", status=status, iterations_used=used,
                         budget=report.budget, final_diff=report.final_diff)
        return report

    def _not_validated(self) -> list[str]:
        report = self.report
        items = [f"nothing beyond the success condition ({report.condition}) of `{report.command}` was checked"]
        if report.derived_command:
            items.append("the verifying command was derived by the agent from the end state: check it says what "
                         "you meant")
        if report.status != "resolved":
            items.append("the condition does not hold: the target is not repaired")
        if self.spec.guards is not None:
            items.append(f"only these guards judged the fixes: {', '.join(self.spec.guards)}")
        # The condition was checked by running the target, so the status stands; what a guard
        # that could not load would have caught was not looked for.
        items.extend(f"{item.error}, so it judged none of the fixes (only {', '.join(self.judges)} did)"
                     for item in self.unavailable)
        return items


def _git(root: Path, *args: str) -> str:
    return git.decode(_git_bytes(root, *args)).strip()


def _git_names(root: Path, *args: str) -> list[str]:
    """The names a ``-z`` listing prints, each exactly (no strip: a name may end in a space)."""
    return git.names(_git_bytes(root, *args))


def _git_bytes(root: Path, *args: str) -> bytes:
    # Bytes, decoded with git.decode, never text=True: a file name that is not UTF-8 keeps
    # its bytes (axpipe.names) instead of ending the repair with UnicodeDecodeError.
    return git.run(root, *args).stdout


def _diff(root: Path, point: revert.Point, prefix: str = "") -> tuple[str, list[str]]:
    """Files and line counts changed from ``point``'s snapshot to the working tree (under the
    point's ignore rules: axpipe's own output is no change), and the changed paths. ``root``
    is the top of the work tree and the paths are from it; the description names them from
    the project's folder ``prefix``, as scope and reviews do."""
    base = point.tree
    if base is None:  # git could not snapshot the tree: nothing about the edit can be judged
        raise InputError(f"cannot take a snapshot of the work tree at {root}: the agent's edit cannot be judged")
    now = point.snapshot(root)
    if now == base:
        return "none", []
    # -z: each path as it is; without it git quotes every name that is not ASCII
    # ("caf\351.py"), which names no file (bytecode.forget) and follows no scheme of ours.
    parts, paths = [], []
    ours = set(revert.own_outputs(root))  # axpipe's stdout or stderr written into the tree: no edit
    for entry in _git_names(root, "diff", "--numstat", "-z", "--no-renames", base, now):
        added, removed, path = entry.split("\t", 2)
        if path in ours:
            continue
        shown = printable(workspace.from_top(path, prefix))  # text for people: a byte as \xe9
        parts.append(f"{shown} (+{added} -{removed})" if added != "-" else f"{shown} (binary)")
        paths.append(path)
    return ", ".join(parts) or "none", paths


def _revert(top: Path, point: revert.Point) -> None:
    """Undo exactly one edit: HEAD, the index and the files the agent changed since ``point``,
    and nothing else (:func:`axpipe.change.revert.restore`)."""
    revert.restore(top, point, point.snapshot(top))
