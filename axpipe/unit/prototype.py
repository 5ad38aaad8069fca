"""The prototype unit (DESIGN §14): read-only, before the first implementer unit.

When the recipe declares ``roles.prototype``, the goal's first pass runs it once, after the
plan is frozen and before the first implementer unit. It may write only under
``.axpipe/artifacts/<goal>/`` and the task file's ``Prototype`` section: any other file
changed, created or deleted, another section written, the file left unparseable, a refused
``axpipe`` command or a failed turn is a hard stop (quarantine, the goal blocked, exit 3),
exactly as for QA and judges (:class:`axpipe.unit.verdict_units.ReadOnly`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from axpipe import templates
from axpipe.goal import goals
from axpipe.goal.turn import invoke
from axpipe.interfaces import AgentStatus
from axpipe.store import goals as goal_sql
from axpipe.store import units as unit_sql
from axpipe.unit import told, units
from axpipe.unit.planner import finished
from axpipe.unit.quarantine import hard_stop
from axpipe.unit.verdict_units import ReadOnly

if TYPE_CHECKING:
    from axpipe.run.phases import PhaseResult, RunContext

DONE = "prototype:"  # how a prototype unit's row ends its reason: the goal had its prototype


def needed(context: RunContext) -> bool:
    """Does the goal still need its prototype unit?"""
    driver = context.driver
    recipe = context.recipe
    if driver is None or recipe.roles is None or recipe.roles.prototype is None:
        return False
    if driver.goal.status != "active":
        return False
    return not any((row["reason"] or "").startswith(DONE) and row["status"] == "passed"
                   for row in unit_sql.list_units(driver.store, driver.goal.id))


def run(context: RunContext) -> PhaseResult | None:
    """Run the prototype unit when the goal needs one; a result when it ended in a hard stop."""
    from axpipe.run.phases import PhaseResult, phase_result

    if not needed(context):
        return None
    driver = context.driver
    spec = context.recipe.roles.prototype if context.recipe.roles is not None else None
    assert spec is not None
    located = driver.task_location()
    unit = units.begin(driver)
    driver.unit = unit
    with ReadOnly(context, unit) as read_only:
        prompt = templates.render_file("prototype.md.j2",
                                       **told.context(driver, "prototype", located[1] if located else None))
        env = {"AXPIPE_ROLE": "prototype", "AXPIPE_ARTIFACTS_DIR": str(units.artifacts_dir(context.root,
                                                                                           driver.goal.id))}
        if located:
            env["AXPIPE_TASK_FILE"] = str(located[0])
        turn = invoke(spec, root=context.root, prompt=prompt, iteration=unit.number,
                      folder=goals.goal_dir(context.root, driver.goal.id) / "prototype", events=context.events,
                      phase="work", goal_id=driver.goal.id, path="roles.prototype", extra_env=env,
                      on_output=context.on_output)
        finished(context, spec, "prototype", unit.number, turn, [])
        if turn.outcome.status is not AgentStatus.DONE:
            return phase_result(hard_stop(
                driver, unit, kind="agent", reason=f"the prototype's turn {turn.outcome.status.value}: "
                                                   f"{turn.outcome.summary}",
                external_change="a person reads the prototype's output and prompt, fixes what made it fail, and "
                                "resumes the goal", evidence=[str(turn.prompt_file)]))
        stopped = read_only.check("the prototype", "prototype")  # its files, then its part of the task file
        if stopped is not None:
            return stopped
    # its tokens and time are the goal's as any unit's (a hard stop above counts them itself)
    goal_sql.add_usage(driver.store, driver.goal.id, tokens=turn.tokens, seconds=unit.elapsed())
    units.end(driver, unit, "passed", f"{DONE} {turn.outcome.summary}")
    driver.unit = None
    return PhaseResult("passed", f"prototype unit {unit.number}: {turn.outcome.summary}")
