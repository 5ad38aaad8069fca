"""The task file's parser (DESIGN §14): exact round-trip, sections, ownership, criteria."""

from __future__ import annotations

from pathlib import Path

import pytest

from axpipe.task import criteria, guard, journal, ownership, taskfile

TEXT = """---
id: T-002   # a comment the parser keeps
status: open
bounces: 1
---
# T-002: invoices keep their totals

Some words before the first section.

## Goal

Totals match.

## Plan

1. read the parser
```md
## Not a section (inside a fence)
```
### Review
Looks right. -- Ana
### Steps
a, b

## Acceptance criteria

1. **[closes]** totals match: `pytest -q tests/test_totals.py`
2. [found] the page shows the total
3. **[process]** a person signs off:

## Custom section
kept\r
"""


def test_every_byte_is_kept_and_each_part_is_a_slice_of_the_file() -> None:
    task = taskfile.parse(TEXT)
    assert task.front_text + task.title_text + "".join(task.section_texts.values()) == TEXT
    assert task.id == "T-002" and task.front["bounces"] == 1
    assert task.title == "invoices keep their totals"
    assert list(task.sections) == ["Goal", "Plan", "Acceptance criteria", "Custom section"]
    assert "## Not a section" in task.sections["Plan"]
    parts = task.parts()
    assert parts["Plan / Review"] == "### Review\nLooks right. -- Ana"
    assert "### Steps\na, b" in parts["Plan"] and "Looks right" not in parts["Plan"]


def test_writing_one_section_leaves_every_other_byte() -> None:
    task = taskfile.parse(TEXT)
    text = task.with_section("Goal", "Totals match, to the cent.\n")
    assert text.replace("Totals match, to the cent.\n", "\nTotals match.\n\n", 1) == TEXT
    again = taskfile.parse(task.with_section("Verdict", "judge: CONFIRMED"))
    assert again.sections["Verdict"] == "\njudge: CONFIRMED\n"
    assert again.text.startswith(TEXT)
    assert taskfile.parse(task.with_front(bounces=0)).text == TEXT.replace("bounces: 1", "bounces: 0")


@pytest.mark.parametrize(("text", "message"), [
    ("# no front matter\n", "no front matter"),
    ("---\nid: [unclosed\n---\n", "the front matter is not valid YAML"),
    ("---\nid: T\n", "no closing '---'"),
    ("---\nstatus: open\n---\n", "a mapping with an `id`"),
    ("---\nid: T\nbounces: -1\n---\n", "`bounces`: -1 is not a count"),
    ("---\nid: T\n---\n## Plan\na\n## Plan\nb\n", "section '## Plan' appears twice (lines 1 and 3"),
])
def test_a_file_that_does_not_parse_says_why(text: str, message: str) -> None:
    with pytest.raises(taskfile.TaskFileError) as raised:
        taskfile.parse(text, "tasks/T.md")
    assert message in raised.value.message
    assert "tasks/T.md" in raised.value.message


def test_criteria_are_read_and_lookalikes_refused() -> None:
    task = taskfile.parse(TEXT)
    found, problems = criteria.parse(task.sections["Acceptance criteria"])
    assert [(item.number, item.tag, item.text, item.command) for item in found] == [
        (1, "closes", "totals match", "pytest -q tests/test_totals.py"),
        (2, "found", "the page shows the total", None),
        (3, "process", "a person signs off", None)]
    assert [item.check_id for item in found] == ["criterion-1", None, None]
    assert problems == []
    _, problems = criteria.parse("- **[closes]** a bullet: `pytest`\n1a. [found] sub-numbered\n"
                                 "4. [closes] no command\n4. [found] again\n")
    assert problems == [
        "criterion '- **[closes]** a bullet: `pytest`': not read as a criterion, number it N.: "
        "N. **[closes]** text: `command`",
        "criterion '1a. [found] sub-numbered': not read as a criterion, number it N.: N. **[closes]** text: `command`",
        "criterion 4 ('4. [closes] no command'): a [closes] criterion needs its command: "
        "N. **[closes]** text: `command`",
        "criterion '4. [found] again': number 4 is used twice; number each criterion once"]


def test_a_role_may_change_only_its_sections() -> None:
    before = taskfile.parse(TEXT)
    notes = taskfile.parse(before.with_section("Implementation notes", "did it"))
    assert ownership.unit_writes(before, notes) == ["Implementation notes"]
    assert ownership.outside("implementer", ["Implementation notes"]) == []
    review = taskfile.parse(TEXT.replace("Looks right.", "Looks wrong."))
    assert ownership.unit_writes(before, review) == ["Plan / Review"]
    assert ownership.outside("planner", ["Plan / Review"]) == ["Plan / Review"]
    front = taskfile.parse(TEXT.replace("bounces: 1", "bounces: 0"))
    assert ownership.outside("implementer", ownership.unit_writes(before, front)) == ["front matter"]


def test_a_persons_journalled_edit_during_a_unit_is_not_the_units(tmp_path: Path) -> None:
    path = tmp_path / "T-002.md"
    path.write_text(TEXT)
    (tmp_path / "T-003.md").write_text(TEXT.replace("T-002", "T-003"))
    watch = guard.start(tmp_path, path, "T-002.md")
    task = taskfile.read(path)
    journal.apply(tmp_path, path, task, task.with_front(status="approved"), kind="approve", text="ship it")
    assert watch.problem("implementer") is None
    path.write_text(path.read_text().replace("Totals match.", "Totals roughly match."))  # not journalled
    assert watch.problem("implementer") == ("task file T-002.md: the implementer unit wrote section 'Goal', which "
                                            "its role does not own (the implementer role writes Implementation notes)")
    path.write_text(path.read_text().replace("Totals roughly match.", "Totals match."))
    (tmp_path / "T-003.md").write_text("changed")
    assert watch.problem("qa") == ("task file: the qa unit edited another task's file: T-003.md (it works on "
                                   "T-002.md only)")


def test_held_out_checks_are_never_named_to_the_unit(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from axpipe.unit import told

    goal = SimpleNamespace(id="g", plan={"acceptance": {
        "AC1": {"tag": "closes", "text": "visible", "check": "unit"},
        "AC2": {"tag": "closes", "text": "hidden parity", "check": "secret"}}},
        checks=[{"id": "unit", "command": "pytest -q"}, {"id": "secret", "held_out": True}])
    said = told.criteria(SimpleNamespace(goal=goal))  # type: ignore[arg-type]
    assert said == [{"id": "AC1", "tag": "closes", "text": "visible", "check": "unit", "command": "pytest -q"},
                    {"id": "AC2", "tag": "closes", "text": "hidden parity", "check": None, "command": None}]
