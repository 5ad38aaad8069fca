"""What every unit is told (DESIGN §15), as the agent reads it: the prompt blocks, snapshotted."""

from __future__ import annotations

from typing import Any

from syrupy.assertion import SnapshotAssertion

from axpipe import templates


def told(**changes: Any) -> dict[str, Any]:
    said = {
        "role": "implementer", "goal_id": "T-002", "objective": "Do not add the same URL twice",
        "may_write": ["code inside the scope patterns below", "the task file's `Implementation notes` section"],
        "scope": ["src/lib/bookmarks.ts", "src/lib/bookmarks.test.ts"], "source_paths": ["src"],
        "criteria": [{"id": "C1", "tag": "closes", "text": "a duplicate URL is refused", "check": "criterion-1",
                      "command": "npm test -- bookmarks"},
                     {"id": "C2", "tag": "found", "text": "the list shows one entry", "check": None, "command": None}],
        "limits": {"unit_timeout": "1h", "budget_left": "1500 of 2000 tokens; 18 of 20 steps", "bounces_left": 1,
                   "bounces": 2},
        "verdicts": [], "task_file": "tasks/T-002.md", "standing_rules": ".axpipe/STANDING-RULES.md",
        "criterion_form": "N. **[closes]** text: `command`", "artifacts": ".axpipe/artifacts/T-002",
    }
    return {**said, **changes}


def test_an_implementer_is_told_its_scope_paths_criteria_limits_and_rules(snapshot: SnapshotAssertion) -> None:
    assert templates.render_file("told.md.j2", told=told()) == snapshot


def test_after_a_bounce_the_implementer_reads_what_each_reviewer_said(snapshot: SnapshotAssertion) -> None:
    verdicts = [{"role": "qa", "name": "tester", "verdict": "PASS", "reason": "qa: PASS",
                 "said": "All green.\nqa: PASS"},
                {"role": "judge", "name": "judge", "verdict": None, "reason": "the judge CLI did not finish cleanly",
                 "said": ""}]
    assert templates.render_file("told.md.j2", told=told(verdicts=verdicts, scope=None)) == snapshot


def test_the_planner_is_told_the_criterion_form(snapshot: SnapshotAssertion) -> None:
    said = told(role="planner", may_write=["the task file's `Plan`, `Scope`, `Acceptance criteria` sections only; "
                                           "no other file"], criteria=[])
    assert templates.render_file("planner.md.j2", told=said) == snapshot
