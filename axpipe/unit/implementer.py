"""What an implementer unit's turn must leave (DESIGN §14), judged right after the turn.

- **The task file**: the implementer wrote only its ``Implementation notes`` there (a
  person's journalled edits during the unit excepted), left the file parseable and touched no
  other task's file; otherwise a hard stop (:mod:`axpipe.task.guard`, kind ``task-file``).
- **No change this round**: a turn that changed nothing goes on to QA when the goal already
  holds work (files it edited before, or commits since its baseline); on a goal without any
  work it parks the goal with ``implement: no change inside scope`` (blocked, exit 3).
"""

from __future__ import annotations

from axpipe.errors import ExitCode
from axpipe.goal import goals
from axpipe.goal.turn import Turn
from axpipe.run.phases import Step
from axpipe.store import goals as sql
from axpipe.task.guard import TaskGuard, kept_version
from axpipe.unit import units
from axpipe.unit.quarantine import hard_stop
from axpipe.unit.units import Driving

NO_CHANGE = "implement: no change inside scope"


def task_contract(driver: Driving, task_guard: TaskGuard, turn: Turn) -> Step | None:
    """A hard stop or a park when the implementer's turn broke the task file contract or did
    no work on a goal without any; None otherwise."""
    unit = units.current(driver)
    if unit is None:
        return None
    problem = task_guard.problem("implementer")
    if problem is not None:
        step = hard_stop(driver, unit, kind="task-file", reason=problem,
                         external_change="a person looks at the quarantined change, puts the task file right "
                                         "(`axpipe task show`), and resumes the goal")
        note = task_guard.put_back(kept_version(units.artifacts_dir(driver.root, unit.goal_id), unit.number))
        return Step(step.status, f"{step.summary}; {note}", stop=step.stop)
    if turn.edited or sql.edited_files(driver.store, driver.goal.id) or \
            units.head(driver.root) != driver.goal.baseline:
        return None
    sql.add_usage(driver.store, driver.goal.id, seconds=driver.tick_elapsed(), steps=1)
    goals.set_status(driver.store, driver.goal, "blocked", NO_CHANGE, driver.events,
                     blocked={"kind": "no-change", "reason": NO_CHANGE, "evidence": [str(turn.prompt_file)],
                              "external_change": "a person looks at why the implementer changed nothing (its "
                                                 "prompt, the scope, the plan) and resumes the goal",
                              "no_independent_work": True})
    units.end(driver, unit, "blocked", NO_CHANGE)
    return Step("failed", NO_CHANGE, stop=ExitCode.BLOCKED)
