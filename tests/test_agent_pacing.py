"""Pacing: units of one agent spaced across processes sharing the store (DESIGN §18).

Real processes run agent units as a run's work phase does (``tests/agents/paced_units.py``
calls :func:`axpipe.goal.turn.invoke`) against one project store; the pacing minute is
shortened with ``AXPIPE_PACING_MINUTE`` so "2 a minute" means 1 s apart here. The spacing
is read from the events the processes wrote."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from goalkit import FIX, Project

from axpipe.workspace import ensure_state_dir

SCRIPT = Path(__file__).parent / "agents" / "paced_units.py"
MINUTE = 2.0  # seconds a pacing minute lasts in these tests


def start(root: Path, events: Path, *, count: int, rpm: float = 0, tpm: int = 0,
          tokens: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(SCRIPT), str(root), str(events), str(count), str(rpm), str(tpm),
                             str(tokens)], text=True, env={**os.environ, "AXPIPE_PACING_MINUTE": str(MINUTE)})


def events_of(path: Path, kind: str) -> list[dict[str, object]]:
    return [event for line in path.read_text().splitlines() if (event := json.loads(line))["type"] == kind]


def starts(*paths: Path) -> list[float]:
    return sorted(datetime.fromisoformat(str(event["ts"]).replace("Z", "+00:00")).timestamp()
                  for path in paths for event in events_of(path, "agent.started"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    ensure_state_dir(folder)
    return folder


def test_two_runs_in_parallel_start_their_units_spaced_by_requests_per_minute(root: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    processes = [start(root, first, count=2, rpm=2), start(root, second, count=2, rpm=2)]
    assert [process.wait(timeout=60) for process in processes] == [0, 0]
    times = starts(first, second)
    assert len(times) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps) >= MINUTE / 2, gaps  # 2 a minute: half a minute apart, whichever run started them
    waits = events_of(first, "agent.pacing") + events_of(second, "agent.pacing")
    assert len(waits) >= 3 and all(event["key"] == "command" for event in waits)


def test_tokens_per_minute_delays_the_unit_after_a_heavy_one(root: Path, tmp_path: Path) -> None:
    """Each unit reports 3 minutes' worth of tokens: the next waits until all but a minute of
    them are paid back (2 minutes), however many requests a minute would allow."""
    log = tmp_path / "units.jsonl"
    assert start(root, log, count=2, tpm=1000, tokens=3000).wait(timeout=60) == 0
    first, second = starts(log)
    assert second - first >= 2 * MINUTE - 0.05
    assert events_of(log, "agent.pacing")[0]["wait"] > MINUTE


def test_an_unpaced_agent_never_waits(root: Path, tmp_path: Path) -> None:
    log = tmp_path / "units.jsonl"
    assert start(root, log, count=2).wait(timeout=60) == 0
    assert events_of(log, "agent.pacing") == []


def test_a_goals_turns_are_paced_by_the_recipes_agent_pacing(repo: Path, tmp_path: Path) -> None:
    """The recipe's `agent.pacing` reaches a goal's units: the second turn (a later
    `goal resume`) waits for its slot, and says so."""
    project = Project(repo, tmp_path)
    project.recipe(turns=[{"say": "looking"}, FIX], agent_extra="  pacing: {requests_per_minute: 1}\n")
    project.env["AXPIPE_PACING_MINUTE"] = "3"
    assert project.run().exit_code == 6
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    paced = [event for event in project.events(resumed) if event["type"] == "agent.pacing"]
    assert len(paced) == 1 and paced[0]["key"] == "command" and 0 < paced[0]["wait"] <= 3
    started = next(event for event in project.events(resumed) if event["type"] == "agent.started")
    assert started["paced"] >= paced[0]["wait"]  # the seconds the unit waited, shown on its start
