"""The garbage collector is paused for `axpipe run`'s start-up only, and only when the
process is axpipe's own (see axpipe.collector)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import hello_library

from axpipe import collector

# Runs `axpipe run recipe=hello` the way the console script does (main() reading
# sys.argv) or the way a caller does (main(ARGS)), and records the collector's state while
# Hydra composes and when the pipeline starts.
PROBE = """
import gc, json, sys
from axpipe import job, pipeline
from axpipe.cli import main

seen = {}
real_compose, real_run = job.compose, pipeline.run_pipeline

def compose(*args, **kwargs):
    seen["composing"] = gc.isenabled()
    return real_compose(*args, **kwargs)

def run_pipeline(*args, **kwargs):
    seen["pipeline"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count()
    return real_run(*args, **kwargs)

job.compose, pipeline.run_pipeline = compose, run_pipeline
mode, record = sys.argv[1], sys.argv[2]
sys.argv = ["axpipe", "run", "recipe=hello"]
code = main() if mode == "console" else main(["run", "recipe=hello"])
seen["exit"] = code
seen["after"] = gc.isenabled()
open(record, "w").write(json.dumps(seen))
"""


@pytest.fixture
def hello(repo: Path) -> Path:
    return hello_library(repo)


def probe(repo: Path, mode: str, tmp_path: Path) -> dict[str, object]:
    record = tmp_path / f"{mode}.json"
    completed = subprocess.run([sys.executable, "-c", PROBE, mode, str(record)], cwd=repo,
                               capture_output=True, text=True, timeout=120)
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
    assert seen == {"composing": True, "pipeline": True, "frozen": 0, "exit": 0, "after": True}


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
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    gc.unfreeze()
    collector.resume()  # a second resume (a multirun's next job) changes nothing
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("restore_collector")
def test_pause_leaves_a_collector_someone_else_turned_off_to_them() -> None:
    gc.disable()
    collector.pause()
    collector.resume()
    assert not gc.isenabled() and gc.get_freeze_count() == 0
