"""The garbage collector is paused for `axpipe run`'s start-up only, and only when the
process is axpipe's own (see axpipe.run.collector)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import BATCH_RECIPE, hello_library, write_recipe

from axpipe.run import collector

# Runs `axpipe run ARGS` the way the console script does (main() reading sys.argv) or the
# way a caller does (main(ARGS)), and records the collector's state while Hydra composes
# each job, when the pipeline starts, and once the command is over.
PROBE = """
import gc, json, sys
from axpipe.recipe import resolve as job
from axpipe.run import pipeline
from axpipe.cli import main

seen = {}
real_compose, real_run = job.compose, pipeline.run_pipeline

def compose(*args, **kwargs):
    seen["composing"] = gc.isenabled()
    seen.setdefault("jobs", []).append(gc.isenabled())
    return real_compose(*args, **kwargs)

def run_pipeline(*args, **kwargs):
    seen["pipeline"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count()
    return real_run(*args, **kwargs)

job.compose, pipeline.run_pipeline = compose, run_pipeline
mode, record, arguments = sys.argv[1], sys.argv[2], ["run", *sys.argv[3:]]
sys.argv = ["axpipe", *arguments]
code = main() if mode == "console" else main(arguments)
seen["exit"] = code
seen["after"] = gc.isenabled()
open(record, "w").write(json.dumps(seen))
"""


@pytest.fixture
def hello(repo: Path) -> Path:
    return hello_library(repo)


def probe(repo: Path, mode: str, tmp_path: Path, *arguments: str) -> dict[str, object]:
    record = tmp_path / f"{mode}.json"
    completed = subprocess.run([sys.executable, "-c", PROBE, mode, str(record), *(arguments or ["recipe=hello"])],
                               cwd=repo, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(record.read_text())


def test_the_console_script_composes_without_the_collector_and_runs_the_pipeline_with_it(
        hello: Path, tmp_path: Path) -> None:
    seen = probe(hello, "console", tmp_path)
    assert seen["exit"] == 0
    assert seen["composing"] is False
    assert seen["pipeline"] is True
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 10_000  # start-up's objects were frozen
    assert seen["after"] is True


def test_a_caller_of_main_keeps_its_collector_as_it_was(hello: Path, tmp_path: Path) -> None:
    seen = probe(hello, "caller", tmp_path)
    assert seen == {"composing": True, "jobs": [True], "pipeline": True, "frozen": 0, "exit": 0, "after": True}


def test_a_multirun_composes_every_job_with_the_collector_on(hello: Path, tmp_path: Path) -> None:
    """Hydra expands the whole sweep before its first job: paused, its garbage would pile up."""
    write_recipe(hello / "recipes", "batch", BATCH_RECIPE)
    seen = probe(hello, "console", tmp_path, "-m", "recipe=batch", "batch=invoices,payments,refunds")
    assert (seen["exit"], seen["jobs"], seen["frozen"], seen["after"]) == (0, [True, True, True], 0, True)


def test_a_refused_run_turns_the_collector_back_on(hello: Path, tmp_path: Path) -> None:
    seen = probe(hello, "console", tmp_path, "recipe=hello", "goal.budget.time=forever")
    assert (seen["exit"], seen["jobs"], "pipeline" in seen, seen["after"]) == (2, [False], False, True)


@pytest.fixture
def restore_collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    collector._paused = False
    gc.unfreeze()
    if was_enabled:
        gc.enable()


@pytest.mark.usefixtures("restore_collector")
def test_resume_freezes_and_turns_back_on_only_what_pause_turned_off() -> None:
    gc.enable()
    collector.resume()  # nothing paused: nothing frozen
    assert gc.isenabled() and gc.get_freeze_count() == 0
    collector.pause(["recipe=hello"])
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc.unfreeze()
    collector.resume()  # a second resume (a multirun's next job) changes nothing
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("restore_collector")
def test_pause_leaves_a_collector_someone_else_turned_off_to_them() -> None:
    gc.disable()
    collector.pause(["recipe=hello"])
    collector.resume()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


@pytest.mark.usefixtures("restore_collector")
@pytest.mark.parametrize("arguments", [["-m", "recipe=a,b"], ["--multirun", "recipe=a"],
                                       ["recipe=a", "hydra.mode=MULTIRUN"], ["recipe=a", "+hydra.mode=MULTIRUN"]])
def test_a_sweep_is_not_paused(arguments: list[str]) -> None:
    gc.enable()
    collector.pause(arguments)
    assert gc.isenabled()
    collector.resume()
    assert gc.get_freeze_count() == 0
