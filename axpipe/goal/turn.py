"""One agent turn: render the prompt, run the agent, and see what it changed and reported.

The prompt is the recipe's ``work.prompt`` (jinja2) followed by axpipe's turn context: the
checks and their status, recovery guidance after turns without progress, the wrap-up note
when a budget is spent. Held-out checks never appear in it. The agent runs with the pinned
environment (DESIGN §13); what it changed is found by comparing the working tree before
and after, and those files join the goal's fingerprint scope.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe import git, process, templates
from axpipe.deliver import agents as deliver_agents
from axpipe.errors import ConfigError, PluginError, Problem
from axpipe.evidence import bytecode
from axpipe.goal import pacing
from axpipe.goal.goals import Goal, goal_dir
from axpipe.interfaces import AgentOutcome, AgentRequest, AgentStatus
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.process import command_text
from axpipe.recipe import schema
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as sql
from axpipe.workspace import STATE_DIR, git_prefix, git_top

RECOVERY_GUIDANCE = (
    "The last {count} turns produced no new passing evidence. Stop repeating the same approach: "
    "re-read the failing checks' output below, find the root cause, and make one focused change "
    "that a check can confirm. If you are blocked on something outside this workspace, report it "
    "in AXPIPE_BLOCKED_FILE with the evidence ids instead of retrying."
)
WRAP_UP = (
    "The goal's {budget} is spent. This is your last turn: leave the workspace in a clean, "
    "working state, keep what is done, and do not start new work."
)
STEPS_WARNING = (
    "This goal has used {used} of its {cap} steps (ticks and repair iterations). At {cap} it pauses until a "
    "person raises goal.budget.steps: finish what is in progress and leave the workspace working."
)
BLOCKED_FIELDS = ("kind", "reason", "external_change", "evidence", "no_independent_work")


@record
class Turn:
    """What one agent turn did."""

    outcome: AgentOutcome
    tokens: int = 0
    edited: list[str] = field(default_factory=list)
    blocked: dict[str, Any] | None = None
    blocked_problem: str | None = None
    prompt_file: Path | None = None
    cut: bool = False  # stopped at the goal's time budget's deadline (Invocation.cut)
    cost: float | None = 0.0  # USD the turn reported; None: the agent ran and reported no cost
    refs_moved: list[dict[str, str | None]] = field(default_factory=list)  # HEAD or refs the agent moved


def visible_checks(goal: Goal) -> list[dict[str, Any]]:
    return [check for check in goal.checks if not check.get("held_out")]


def prompt_context(goal: Goal, states: list[Any], *, variables: dict[str, Any], iteration: int,
                   guidance: str | None, wrap_up: str | None, steps_warning: str | None = None) -> dict[str, Any]:
    """What a work prompt template sees. Nothing here comes from a held-out check."""
    held_out = {check["id"] for check in goal.checks if check.get("held_out")}
    status = {state.id: state for state in states if not state.held_out}
    acceptance = {key: {"tag": item["tag"], "text": item["text"],
                        "check": item["check"] if item.get("check") not in held_out else None}
                  for key, item in goal.plan["acceptance"].items()}
    checks = []
    for check in visible_checks(goal):
        state = status.get(check["id"])
        command = check.get("command")
        checks.append({"id": check["id"], "kind": check["kind"], "purpose": check.get("purpose", ""),
                       "command": command_text(command) if command is not None else "",
                       "status": state.status if state else "missing", "reason": state.reason if state else "",
                       "receipt": state.receipt if state else None})
    return {"goal": {"id": goal.id, "objective": goal.objective, "acceptance": acceptance},
            "checks": checks, "vars": variables, "iteration": iteration,
            "recovery_guidance": guidance, "wrap_up": wrap_up, "steps_warning": steps_warning}


def render_prompt(recipe: schema.Recipe, context: dict[str, Any], failures: list[dict[str, Any]]) -> str:
    body = ""
    if recipe.work is not None and recipe.work.prompt:
        body = templates.render(recipe.work.prompt, context, name="work.prompt")
    return templates.render_file("turn.md.j2", body=body, failures=failures, **context)


Snapshot = tuple[str | None, dict[str, str]]


def snapshot_files(root: Path) -> tuple[str | None, dict[str, str]]:
    """HEAD and a digest of every dirty or untracked path under ``root`` (outside git: of
    every file)."""
    top = git_top(root)
    if top is not None:
        head = git.output(root, "rev-parse", "-q", "--verify", "HEAD")
        # `git status` prints paths from the top of the work tree, also in a subfolder
        prefix = os.fsencode(git_prefix(root, top))
        listing = git.run(root, "status", "--porcelain=v1", "-z", "-uall", "--no-renames", "--", ".").stdout
        paths = [git.decode(entry[3:].removeprefix(prefix)) for entry in listing.split(b"\0") if len(entry) > 3]
    else:
        head = None
        paths = [os.path.relpath(os.path.join(folder, name), root)
                 for folder, _, names in os.walk(root) for name in names]
    state: dict[str, str] = {}
    for relative in paths:
        if relative == STATE_DIR or relative.startswith(STATE_DIR + "/"):
            continue
        path = root / relative
        try:
            state[relative] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "not-a-file"
        except OSError:
            state[relative] = "deleted"
    if top is not None:
        state.update(_clean_files(root, state))
    return head, state


_CLEAN = "clean:"


def _clean_files(root: Path, dirty: dict[str, str]) -> dict[str, str]:
    """Every tracked file git calls clean, as ``clean:<blob>:<stat>``. git trusts a file whose
    size and times match its index entry to the second, so a same-size edit that keeps its
    modification time, made in the second the entry was written, looks clean to it; the
    change time in nanoseconds still moves on any write (:func:`changed_files` reads the
    content of a file whose stat moved)."""
    listing = git.run(root, "ls-files", "-s", "-z", "--", ".").stdout
    found: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        relative = git.decode(name)
        if not name or relative in dirty or relative == STATE_DIR or relative.startswith(STATE_DIR + "/"):
            continue
        try:
            stat = os.lstat(root / relative)
        except OSError:
            continue  # gone without git seeing it yet: the next status says so
        blob = meta.split()[1].decode() if len(meta.split()) > 1 else ""
        found[relative] = f"{_CLEAN}{blob}:{stat.st_ctime_ns}:{stat.st_mtime_ns}:{stat.st_size}:{stat.st_ino}"
    return found


def _same_blob(root: Path, relative: str, value: str) -> bool:
    """Does the file hold the blob a ``clean:`` entry recorded (git's own object id of it)?"""
    blob = value[len(_CLEAN):].split(":", 1)[0]
    try:
        data = (root / relative).read_bytes()
    except OSError:
        return False
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob


def refs(root: Path) -> dict[str, str]:
    """HEAD and every ref (branches, tags, remote-tracking refs, the stash) with its object,
    or nothing outside git. A coding CLI's deny rules for `git commit` / `git push` can be
    passed with another spelling (docs/agents.md): what moved is read here, not trusted."""
    if git_top(root) is None:
        return {}
    listing = git.text(root, "for-each-ref", "--format=%(refname) %(objectname)").stdout.splitlines()
    found = dict(line.rsplit(" ", 1) for line in listing if " " in line)
    head = git.text(root, "rev-parse", "-q", "--verify", "HEAD").stdout.strip()
    return {"HEAD": head, **found} if head else found


def moved_refs(before: dict[str, str], after: dict[str, str]) -> list[dict[str, str | None]]:
    """Each ref whose object changed, appeared or went: ``{ref, before, after}``."""
    return [{"ref": name, "before": before.get(name), "after": after.get(name)}
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]


def changed_files(root: Path, before: Snapshot, after: Snapshot) -> list[str]:
    changed = {path for path in set(before[1]) | set(after[1]) if before[1].get(path) != after[1].get(path)
               and not _rewritten_unchanged(root, before[1].get(path), after[1].get(path), path)}
    if before[0] and after[0] and before[0] != after[0]:
        committed = git.run(root, "diff", "--name-only", "--relative", "--no-renames", "-z", before[0], after[0])
        changed.update(git.names(committed.stdout))
    return sorted(changed)


def _rewritten_unchanged(root: Path, before: str | None, after: str | None, path: str) -> bool:
    """A file git calls clean before and after whose stat moved: changed only if its content
    is no longer the blob it was (a rewrite with the same bytes is no edit). A file that
    appears or disappears from the clean list is a change git itself saw."""
    return before is not None and after is not None and before.startswith(_CLEAN) and after.startswith(_CLEAN) \
        and before.split(":", 2)[1] == after.split(":", 2)[1] and _same_blob(root, path, before)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"__invalid__": True}


def _blocked_request(store: Store, goal: Goal, data: Any) -> tuple[dict[str, Any] | None, str | None]:
    if data is None:
        return None, None
    if not isinstance(data, dict) or data.get("__invalid__"):
        return None, "the blocked file is not a JSON object"
    missing = [name for name in BLOCKED_FIELDS if name not in data]
    if missing:
        return None, f"a block needs {', '.join(BLOCKED_FIELDS)}; missing: {', '.join(missing)}"
    for name in ("kind", "reason", "external_change"):
        if not isinstance(data[name], str) or not data[name].strip():
            return None, f"'{name}' must be a non-empty string"
    evidence = data["evidence"]
    if not isinstance(evidence, list) or not evidence or not all(isinstance(item, str) for item in evidence):
        return None, "'evidence' must be a non-empty list of receipt ids"
    unknown = [item for item in evidence if (sql.get_receipt(store, item) or {}).get("goal_id") != goal.id]
    if unknown:
        return None, f"evidence ids that are not receipts of this goal: {', '.join(unknown)}"
    if data["no_independent_work"] is not True:
        return None, "'no_independent_work' must be true: a goal is blocked only when no independent work remains"
    return {name: data[name] for name in BLOCKED_FIELDS}, None


def load_agent(spec: schema.AgentSpec, path: str = "agent") -> tuple[Any, Any]:
    """The agent plugin of ``spec`` and its typed params; a config error naming ``path``."""
    try:
        agent = registry.load("axpipe.agents", spec.kind)
    except PluginError as error:
        raise ConfigError([Problem(f"{path}.kind", error.message)]) from error
    params = spec.params
    if isinstance(params, dict):  # not yet typed (validation types it; direct callers may not)
        params, problems = validation.load_plugin_params(agent, params, path, None)
        if problems:
            raise ConfigError(problems)
    return agent, params


@record
class Invocation:
    """One run of an agent plugin, with what it reported through its files."""

    outcome: AgentOutcome
    tokens: int
    prompt_file: Path
    files: dict[str, Path]
    cut: bool = False  # the turn did not end by itself before its ``deadline``: it was stopped there
    cost: float | None = 0.0  # USD; None: the agent ran and reported no cost (see :func:`reported_usage`)


def invoke(spec: schema.AgentSpec, *, root: Path, prompt: str, iteration: int, folder: Path,
           events: EventLog, phase: str, goal_id: str = "", extra_files: tuple[str, ...] = (),
           extra_env: dict[str, str] | None = None, on_output: Callable[[bytes], None] | None = None,
           path: str = "agent", deadline: float | None = None, delivering: bool = False) -> Invocation:
    """Run an agent once with ``prompt`` in ``root``, with the pinned environment (DESIGN §13).

    ``extra_files`` names more report files the agent may write, each passed as
    ``AXPIPE_<NAME>_FILE`` (``blocked``, ``failure``, ``notes``, ``command``).
    ``delivering``: the recipe has ``deliver:`` (:mod:`axpipe.deliver.agents`).
    ``deadline``: seconds the turn may take at most (what is left of the goal's time budget).
    The plugin is given it as its timeout; a plugin that does not keep to it has its
    processes' groups ended at the deadline and its own code interrupted a grace later.
    """
    agent, params = load_agent(spec, path)
    if delivering:  # only the runner commits: a preset's own flags keep its CLI from committing and pushing
        params = deliver_agents.without_commits(agent, params)
    folder.mkdir(parents=True, exist_ok=True)
    prompt_file = folder / f"{iteration:04d}-prompt.md"
    files = {name: folder / f"{iteration:04d}-{name}.json" for name in ("usage", *extra_files)}
    for stale in files.values():
        stale.unlink(missing_ok=True)
    prompt_file.write_text(prompt, encoding="utf-8")
    env = {"AXPIPE_PROMPT_FILE": str(prompt_file), "AXPIPE_GOAL_ID": goal_id, "AXPIPE_ITERATION": str(iteration),
           **{f"AXPIPE_{name.upper()}_FILE": str(file) for name, file in files.items()}, **(extra_env or {})}
    def announce(waited: float) -> dict[str, Any]:
        return events.emit("agent.started", phase=phase, agent=spec.kind, iteration=iteration,
                           prompt_file=str(prompt_file), **({"paced": round(waited, 3)} if waited >= 0.001 else {}))

    waiting = time.monotonic()
    pacing.start_unit(spec, root, events, announce, phase=phase, on_output=on_output)
    if deadline is not None:  # the wait for a pacing slot came out of the time budget too
        deadline -= time.monotonic() - waiting
    timeout = spec.timeout if deadline is None else max(0.1, min(spec.timeout, deadline))
    request = AgentRequest(prompt=prompt, prompt_file=prompt_file, cwd=root, env=env, timeout=timeout,
                           autonomous=spec.autonomous, params=params, model=spec.model, on_output=on_output)
    started = time.monotonic()
    with _ending_at(deadline):
        try:
            outcome = plugin_calls.call(
                agent, "run", request, returns=AgentOutcome,
                limit=None if deadline is None else timeout + plugin_calls.UNIT_GRACE_SECONDS,
                limit_reason="the goal's time budget ran out during the turn")
        except plugin_calls.PluginFault as fault:  # raised, called sys.exit, returned junk, or ran past the unit
            outcome = AgentOutcome(status=AgentStatus.TIMED_OUT if fault.timed_out else AgentStatus.FAILED,
                                   summary=fault.message)
    # stopped by the deadline, not by the agent's own (shorter) timeout nor ending by itself earlier
    cut = (deadline is not None and deadline <= spec.timeout and outcome.status is not AgentStatus.DONE
           and time.monotonic() - started >= timeout)
    tokens, cost, problem = reported_usage(outcome, read_json(files["usage"]))
    pacing.charge(spec, root, tokens)
    if problem is not None:
        events.emit("agent.usage_ignored", phase=phase, reason=problem)
    return Invocation(outcome, tokens, prompt_file, files, cut, cost)


def reported_usage(outcome: AgentOutcome, file: Any) -> tuple[int, float | None, str | None]:
    """Tokens and cost (USD) of one turn, and why the usage file was ignored (or None).

    What the agent's plugin read from the program's own output wins (the presets, DESIGN
    §18); otherwise the usage file: ``{"tokens": N}`` with an optional ``"cost": USD``
    (DESIGN §13). A turn whose program ran and said nothing about cost has cost None: a
    cost budget counts it as spent, never as free. A program that never started cost nothing."""
    problem = None
    tokens, cost = 0, None
    if isinstance(file, dict) and isinstance(file.get("tokens"), int) and file["tokens"] >= 0 \
            and _money(file.get("cost", 0)) is not None:
        tokens, cost = file["tokens"], _money(file["cost"]) if "cost" in file else None
    elif file is not None:
        problem = 'the usage file is not {"tokens": N} or {"tokens": N, "cost": USD}'
    if outcome.usage is not None:
        tokens, cost = outcome.usage.tokens, outcome.usage.cost if outcome.usage.cost is not None else cost
    if outcome.status is AgentStatus.ERROR and outcome.exit_code is None:
        cost = 0.0 if cost is None else cost
    return tokens, cost, problem


def _money(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


@contextmanager
def _ending_at(deadline: float | None) -> Iterator[None]:
    """End every process group this process started once ``deadline`` seconds have passed (a
    plugin that ignores its timeout; the command agent keeps to it by itself)."""
    if deadline is None:
        yield
        return
    timer = threading.Timer(max(0.1, deadline), process.terminate_all)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def agent_turn(store: Store, root: Path, recipe: schema.Recipe, goal: Goal, *, iteration: int, prompt: str,
               events: EventLog, on_output: Callable[[bytes], None] | None = None,
               extra_env: dict[str, str] | None = None, agent_spec: schema.AgentSpec | None = None,
               deadline: float | None = None) -> Turn:
    """Run the recipe's agent once with ``prompt`` and account for what it did; ``deadline``
    as :func:`invoke` takes it."""
    spec = agent_spec or recipe.agent
    assert spec is not None
    before, refs_before = snapshot_files(root), refs(root)
    run = invoke(spec, root=root, prompt=prompt, iteration=iteration, folder=goal_dir(root, goal.id) / "turns",
                 events=events, phase="work", goal_id=goal.id, extra_files=("blocked",),
                 extra_env={"AXPIPE_ROLE": "implementer", **(extra_env or {})}, on_output=on_output,
                 deadline=deadline, delivering=recipe.deliver is not None)
    edited = changed_files(root, before, snapshot_files(root))
    bytecode.forget(root, edited)  # a same-second, same-size edit would leave a cache that still matches
    sql.record_edits(store, goal.id, edited)
    blocked, blocked_problem = _blocked_request(store, goal, read_json(run.files["blocked"]))
    outcome = run.outcome
    usage = outcome.usage
    events.emit("agent.finished", phase="work", agent=spec.kind, role="implementer", iteration=iteration,
                status=outcome.status.value,
                summary=outcome.summary, exit_code=outcome.exit_code, duration=round(outcome.duration, 4),
                tokens=run.tokens, tokens_in=usage.tokens_in if usage else None,
                tokens_out=usage.tokens_out if usage else None, cost=run.cost, resets=outcome.resets,
                resets_at=outcome.resets_at, edited=edited, prompt=outcome.prompt,
                output_tail=outcome.output_tail[-2000:])
    moved = moved_refs(refs_before, refs(root))
    if moved:  # told, for the delivery contract (DESIGN §16) and a person: only the runner should commit or push
        events.emit("agent.refs_moved", phase="work", agent=spec.kind, iteration=iteration, refs=moved)
    if blocked_problem:
        events.emit("goal.block_refused", phase="work", reason=blocked_problem)
    return Turn(outcome, run.tokens, edited, blocked, blocked_problem, run.prompt_file, run.cut, run.cost, moved)


def stopped(outcome: AgentOutcome) -> bool:
    return outcome.status is AgentStatus.STOPPED
