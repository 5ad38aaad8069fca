"""QA and judge units in the review phase, and the read-only contract of that phase (DESIGN §8).

Reviewers declared with ``qa: true`` are QA units; with ``judge: true``, judges. They are
reviewer plugins (any review CLI, a preset, a script), run after the review round, once per
unit of work, QA first: judges are asked only when every QA unit said ``qa: PASS``. Each
runs in the workspace with its prompt (the plugin's custom ``prompt``, else axpipe's QA or
judge prompt), and its standard output is kept as the unit's trace in
``.axpipe/artifacts/<goal>/trace/unit-<n>-<role>-<name>.(txt|jsonl)``. The verdict is read
from the trace's last event only (:mod:`axpipe.unit.trace_verdicts`) and only when the CLI
exited 0; the settle phase turns the verdicts into progress, a bounce or a block
(:mod:`axpipe.unit.bounces`).

Read-only: the review phase, QA and judges included, may write only under
``.axpipe/artifacts/<goal>/`` (and the review receipts folder, where the round itself
writes). Any other file changed, created or deleted is a hard stop.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe import git, process, templates, workspace
from axpipe.errors import AxpipeError, ConfigError, ExecutableNotFound
from axpipe.goal import completion
from axpipe.interfaces import ReviewInvocation, ReviewRequest
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.recipe import schema
from axpipe.recipe import typed as validation
from axpipe.review import revisions
from axpipe.review.runner import check_programs
from axpipe.run.phases import PhaseResult, RunContext, Step, phase_result
from axpipe.task import guard as task_guards
from axpipe.unit import told, trace_verdicts, units
from axpipe.unit.quarantine import hard_stop, timed_out
from axpipe.unit.read_only import Refusals
from axpipe.unit.scope import changed_between_trees

DIFF_LIMIT = 1024 * 1024


def review(context: RunContext, round_and_receipts: Callable[[RunContext], PhaseResult]) -> PhaseResult:
    """The review phase: the round and receipts, then QA and judges, under the read-only contract."""
    driver = context.driver
    unit = units.current(driver)
    if unit is None:
        return round_and_receipts(context)  # no unit of work: nothing to quarantine or to count
    if unit.overdue():
        return timed_out(driver, unit, "review")
    if not context.recipe.reviewers and context.recipe.receipts is None:
        return round_and_receipts(context)  # nothing will run: no snapshots of the tree to compare
    with ReadOnly(context, unit) as guard:
        try:
            result = round_and_receipts(context)
        except AxpipeError as error:  # a missing review program, a bad prompt: the unit ends here
            units.end(driver, unit, "error", error.message)
            raise
        stopped = guard.check("the review round") or (timed_out(driver, unit, "settle") if unit.overdue() else None)
        if stopped is not None:
            return stopped
        if result.stop is not None:
            units.end(driver, unit, result.status, result.summary)
            return result
        if result.status == "skipped":
            return result
        try:
            return _verdicts(context, unit, guard, result)
        except AxpipeError as error:
            units.end(driver, unit, "error", error.message)
            raise


def _verdicts(context: RunContext, unit: units.Unit, guard: ReadOnly, result: PhaseResult) -> PhaseResult:
    """Run the QA units, then (when every QA passed) the judges."""
    driver = context.driver
    said = [result.summary] if result.status != "not-declared" else []
    for role in ("qa", "judge"):
        specs = [spec for spec in context.recipe.reviewers if spec is not None and getattr(spec, role)]
        if role == "judge" and specs and any(v["verdict"] != "PASS" for v in unit.verdicts if v["role"] == "qa"):
            said.append("judges not asked: QA did not pass")
            break
        for spec in specs:
            verdict = run_unit(context, unit, spec, role)
            unit.verdicts.append(verdict)
            context.events.emit("unit.verdict", phase="review", unit=unit.number, **verdict)
            said.append(f"{spec.name}: " + (f"{role}: {verdict['verdict']}" if verdict["verdict"] else "no verdict"))
            stopped = guard.check(f"{role} {spec.name}", role) or (timed_out(driver, unit, "settle") if unit.overdue()
                                                              else None)
            if stopped is not None:
                return stopped
    if result.status == "not-declared" and not unit.verdicts:
        return result
    good = all(v["verdict"] in ("PASS", "CONFIRMED") for v in unit.verdicts)
    return PhaseResult("passed" if good else "failed", "; ".join(said))


class ReadOnly:
    """Snapshot of the tree before a read-only phase; :meth:`check` stops the unit if it changed,
    or if one of its programs ran an axpipe command that changes state (refused there:
    :mod:`axpipe.unit.read_only`). A context manager: the refusals are collected while it is open."""

    def __init__(self, context: RunContext, unit: units.Unit) -> None:
        self.context, self.unit = context, unit
        self.refusals = Refusals()
        # the unit's start rules: a phase that edits .gitignore cannot hide a write behind it
        self.before = unit.snapshot(context.root) if unit.start_tree is not None else None
        # A diff of two snapshot trees names paths from the top of the work tree; in a
        # monorepo the project (context.root) is a folder below it.
        self.top = workspace.git_top(context.root) or context.root
        self.prefix = workspace.git_prefix(context.root, self.top)
        receipts = context.recipe.receipts
        self.allowed = [units.artifacts_dir(context.root, unit.goal_id)]
        if receipts is not None:
            self.allowed.append((context.root / receipts.root).resolve())
        # The goal's task file: each read-only role may write its own section there (QA, Verdict,
        # Prototype), which the task guard judges per role (DESIGN §14).
        located = context.driver.task_location() if hasattr(context.driver, "task_location") else None
        self.task: tuple[Path, str] | None = located
        self.task_guard = task_guards.start(context.root, *located) if located else None
        if located is not None:
            self.allowed.append(located[0].resolve())

    def changed(self) -> list[str]:
        if self.before is None:
            return []
        paths = changed_between_trees(self.context.root, self.before, self.unit.snapshot(self.context.root))
        # Named from the project folder, as the artifacts folder in the message is; a file
        # outside it keeps its `../` and still counts.
        return sorted(workspace.from_top(path, self.prefix) for path in paths if not self._allowed(path))

    def _allowed(self, path: str) -> bool:
        absolute = (self.top / path).resolve()
        return any(absolute == folder or folder in absolute.parents for folder in self.allowed)

    def __enter__(self) -> ReadOnly:
        return self

    def __exit__(self, *_: object) -> None:
        self.refusals.close()

    def check(self, who: str, role: str | None = None) -> PhaseResult | None:
        stopped = self._check_files(who)
        if stopped is not None or self.task_guard is None or self.task is None:
            return stopped
        problem = self.task_guard.problem(role or "reviewer")
        if problem is not None:
            step = hard_stop(self.context.driver, self.unit, kind="task-file", reason=problem,
                             external_change="a person looks at the quarantined change and resumes the goal")
            note = self.task_guard.put_back(task_guards.kept_version(
                units.artifacts_dir(self.context.root, self.unit.goal_id), self.unit.number))
            return phase_result(Step(step.status, f"{step.summary}; {note}", stop=step.stop))
        self.task_guard = task_guards.start(self.context.root, *self.task)  # the next role starts from here
        return None

    def _check_files(self, who: str) -> PhaseResult | None:
        refused = self.refusals.take()
        if refused:
            shown = ", ".join(f"`{command}`" for command in dict.fromkeys(refused))
            return phase_result(hard_stop(
                self.context.driver, self.unit, kind="read-only",
                reason=f"{who} ran {shown}, which changes axpipe's state: a read-only unit may not (refused, exit 2)",
                external_change="a person checks why a read-only phase tried to change axpipe's state (its prompt, "
                                "its permissions), whether it changed anything else, and resumes the goal",
                details={"refused": refused}))
        changed = self.changed()
        if not changed:
            return None
        shown = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
        artifacts = units.artifacts_dir(self.context.root, self.unit.goal_id)
        return phase_result(hard_stop(
            self.context.driver, self.unit, kind="read-only",
            reason=f"{who} wrote outside {artifacts.relative_to(self.context.root)}/: {shown}",
            external_change="a person checks why a read-only phase changed the project (its prompt, its "
                            "permissions) and resumes the goal", details={"written": changed}))


def _diff(root: Path, baseline: str | None) -> tuple[str, list[str]]:
    """The change from ``baseline`` to the working tree and the paths it touches, named from
    ``root`` where QA and judges run (in a monorepo, changes outside the project's folder
    follow as ``../`` paths: see :func:`axpipe.review.revisions.views`)."""
    if baseline is None:
        return "(no baseline)", []
    patch, names = "", list[str]()
    for view in revisions.views(root):  # literal_pathspecs=False: the views' pathspecs use magic (`:/`)
        # quote_names: the patch is read by a person (a judge), with git's own quoting
        patch += git.run(root, "diff", "--no-color", "--no-ext-diff", "-M", *view.options, baseline, "--",
                         *view.pathspecs, literal_pathspecs=False, quote_names=True).stdout.decode(
                             "utf-8", errors="replace")
        listed = git.run(root, "diff", "--name-only", "-z", "-M", *view.options, baseline, "--", *view.pathspecs,
                         literal_pathspecs=False, quote_names=True).stdout
        names.extend(view.up + name for name in git.names(listed))
    if len(patch) > DIFF_LIMIT:
        patch = patch[:DIFF_LIMIT] + f"\n[... the diff is cut at {DIFF_LIMIT} bytes; read the files themselves]\n"
    return patch, names


def _criteria(context: RunContext) -> list[dict[str, Any]]:
    driver = context.driver
    states = {state.id: state for state in completion.evaluate(driver.store, context.root, driver.goal,
                                                                 driver.session_id).checks if not state.held_out}
    held_out = {check["id"] for check in driver.goal.checks if check.get("held_out")}
    criteria = []
    for key, item in driver.goal.plan["acceptance"].items():
        check = item.get("check") if item.get("check") not in held_out else None
        criteria.append({"id": key, "tag": item["tag"], "text": item["text"], "check": check,
                         "status": states[check].status if check in states else ""})
    return criteria


def run_unit(context: RunContext, unit: units.Unit, spec: schema.ReviewerSpec, role: str) -> dict[str, Any]:
    """Run one QA or judge reviewer; return ``{role, name, verdict, trace, reason}``."""
    plugin = registry.load("axpipe.reviewers", spec.kind)
    params = spec.params
    if isinstance(params, dict):
        params, problems = validation.load_plugin_params(plugin, params, f"reviewers.{spec.name}", None)
        if problems:
            raise ConfigError(problems)
    folder = units.artifacts_dir(context.root, unit.goal_id) / "trace"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"unit-{unit.number}-{role}-{spec.name}"
    prompt_file = folder / f"{stem}.prompt.md"
    diff, files = _diff(context.root, context.driver.goal.baseline)
    task_location = getattr(context.driver, "task_location", None)
    located = task_location() if task_location is not None else None
    variables = {"goal": {"id": unit.goal_id, "objective": context.driver.goal.objective}, "unit": unit.number,
                 "artifacts": str(units.artifacts_dir(context.root, unit.goal_id)), "criteria": _criteria(context),
                 "baseline": context.driver.goal.baseline or "(none)", "diff": diff, "files": files,
                 "verdict_format": "\n".join(f"{role}: {value}" for value in trace_verdicts.VALUES[role]),
                 "qa": [v for v in unit.verdicts if v["role"] == "qa"], "reviewer": spec.name, "model": spec.model,
                 **told.context(context.driver, role, located[1] if located else None)}  # DESIGN §15
    custom = getattr(params, "prompt", None)
    prompt = (templates.render(custom, variables, name=f"reviewers.{spec.name}.prompt") if custom
              else templates.render_file(f"{role}.md.j2", **variables))
    prompt_file.write_text(prompt, encoding="utf-8")
    invocation = plugin_calls.call(plugin, "invocation", ReviewRequest(
        name=spec.name, command=spec.command, model=spec.model, params=params,  # type: ignore[arg-type]
        prompt=prompt, prompt_file=prompt_file, workspace=context.root), returns=ReviewInvocation)
    check_programs(context.root, [(spec.name, invocation)])
    jsonl = plugin_calls.call(plugin, "output_format", params, returns=str) == "jsonl"
    trace = folder / f"{stem}.{'jsonl' if jsonl else 'txt'}"
    stderr = folder / f"{stem}.stderr.txt"
    env = {**invocation.env, "AXPIPE_PROMPT_FILE": str(prompt_file), "AXPIPE_REVIEWER": spec.name,
           "AXPIPE_ROLE": role, "AXPIPE_UNIT": str(unit.number), "AXPIPE_GOAL_ID": unit.goal_id,
           "AXPIPE_ARTIFACTS_DIR": variables["artifacts"], "AXPIPE_REVIEW_STDERR": str(stderr),
           **({"AXPIPE_TASK_FILE": str(located[0])} if located else {})}
    context.events.emit("unit.review_started", phase="review", unit=unit.number, role=role, reviewer=spec.name)
    command = invocation.command
    wrapped = (["/bin/sh", "-c", 'exec 2>>"$AXPIPE_REVIEW_STDERR"\n' + command] if isinstance(command, str) else
               ["/bin/sh", "-c", 'exec 2>>"$AXPIPE_REVIEW_STDERR"\nexec "$@"', "axpipe-" + role, *command])
    with trace.open("wb") as sink:

        def keep(chunk: bytes) -> None:
            sink.write(chunk)

        try:
            result = process.run(wrapped, cwd=context.root, env=env, stdin=invocation.stdin, on_output=keep,
                                 timeout=min(invocation.timeout, unit.remaining()), tail_bytes=4096)
        except ExecutableNotFound as error:  # /bin/sh itself: nothing the recipe can fix
            return {"role": role, "name": spec.name, "verdict": None, "trace": str(trace), "reason": error.message}
    relative = os.path.relpath(trace, context.root)
    if not result.ok:
        return {"role": role, "name": spec.name, "verdict": None, "trace": relative,
                "reason": f"the {role} CLI did not finish cleanly ({result.describe()}): its last words are no verdict"}
    verdict = trace_verdicts.read(trace.read_text(encoding="utf-8", errors="replace"), role=role, jsonl=jsonl)
    return {"role": role, "name": spec.name, "verdict": verdict.value, "trace": relative,
            "reason": verdict.line if verdict.value else verdict.problem}
