"""A project with real evidence of every kind the report shows, made through the CLI: a
repair whose first fix a guard reverted, a gate with blamed and pre-existing findings, a
complete goal whose receipt then went stale, a goal whose check fails, a review round and a
scheduled task with a skipped run."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from goalkit import FIX, UNIT_CHECK, Project
from helpers import RESOURCES, git, write_recipe
from test_repair import CHEAT, agent_command

from axpipe.schedule import sweep
from axpipe.store import Store

SECRET = "python3 -c 'import calc; assert calc.add(20, 22) == 42'"  # never shown: a held-out check's command
REVIEW = f"""name: team-review
reviewers:
  - name: alpha
    command: ["{sys.executable}", "{RESOURCES / 'reviewers' / 'reviewer.py'}", "findings", "F1"]
  - name: beta
    command: ["{sys.executable}", "{RESOURCES / 'reviewers' / 'reviewer.py'}", "no-findings"]
"""
FAILING = """name: doubles
goal:
  objective: "double() triples"
  acceptance:
    AC1: {tag: closes, text: "double(2) is 6", check: triple}
  checks:
    - {id: triple, acceptance: [AC1], command: "python3 -c 'import calc, sys; sys.exit(calc.double(2) != 6)'"}
"""


def build(root: Path, scratch: Path) -> Project:
    """Fill ``root`` (an empty git repository) with the evidence; every step is checked."""
    project = Project(root, scratch)
    write_recipe(root / "recipes", "team-review", REVIEW)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "review recipe")
    review = project.cli("review", "round", "--recipe", "team-review")
    assert review.exit_code == 0, review.stdout + review.stderr
    repair = project.cli("repair", "python3 -m unittest -q", "--agent-command", agent_command(scratch, [CHEAT, FIX]))
    assert repair.exit_code == 0, repair.stdout + repair.stderr
    git(root, "checkout", "--", "calc.py", "test_calc.py")  # the bug again, for the goal
    (root / "calc.py").write_text("import os\n" + (root / "calc.py").read_text())  # a new lint finding
    gate = project.cli("gate", "--baseline", "HEAD", "--lint", "ruff check --no-cache --output-format concise .",
                       "--test", "python3 -m unittest -q")
    assert gate.exit_code == 1, gate.stdout + gate.stderr
    git(root, "checkout", "--", "calc.py")
    held_out = f"    - id: hidden\n      acceptance: [AC1]\n      held_out: true\n      command: {json.dumps(SECRET)}\n"
    project.recipe(turns=[FIX], checks=UNIT_CHECK + held_out, outside=True)  # a held-out check lives outside
    ran = project.run()
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert f"  report: axpipe report  ({root / '.axpipe' / 'report' / 'index.html'})\n" in ran.stdout  # linked
    write_recipe(root / "recipes", "doubles", FAILING)
    failing = project.run("doubles")
    assert failing.exit_code not in (0, 2), failing.stdout + failing.stderr
    with (root / "calc.py").open("a") as handle:
        handle.write("\n# edited after the goal completed\n")
    added = project.cli("schedule", "add", "--daily", "03:00", "--tz", "UTC", "--recipe", "calc", "--id",
                        "nightly", "--catch-up", "skip", "--title", "nightly calc")
    assert added.exit_code == 0, added.stderr
    with Store(root / ".axpipe" / "state.db") as store:
        later = datetime.now(UTC) + timedelta(days=2)
        assert sweep.sweep(store, backend="report-test", now=later).runs  # missed: skipped, with the reason
    return project
