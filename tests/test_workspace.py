"""Project root, axpipe.yaml, the run lock and recipe descriptions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from axpipe.errors import ExitCode, InputError, LockHeld
from axpipe.recipe.libraries import read_description
from axpipe.run.lock import RunLock
from axpipe.workspace import _simple_project_file, find_root, output_path


def test_root_is_the_nearest_folder_with_git_or_axpipe_yaml(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    inner = tmp_path / "outer" / "pkg" / "sub"
    inner.mkdir(parents=True)
    assert find_root(inner) == tmp_path / "outer"
    (tmp_path / "outer" / "pkg" / "axpipe.yaml").write_text("")
    assert find_root(inner) == tmp_path / "outer" / "pkg"


@pytest.mark.parametrize("text", [
    "recipe_paths: [recipes]\n", "recipe_paths: [a, b/c]\n# note\n", "recipe_paths:\n  - a\n  - ./b\n",
    "recipe_paths: []\n", "", "# nothing\n", "recipe_paths: [~]\n", "recipe_paths: [1, x]\n",
    "recipe_paths:\n  - yes\n", "recipe_paths: ['quoted']\n", "recipe_paths: [a]\nother: 1\n",
    "recipe_paths: a\n", "recipe_paths:\n  - a\n    - b\n",
])
def test_the_fast_project_file_reader_agrees_with_yaml_or_declines(text: str) -> None:
    fast = _simple_project_file(text)
    if fast is not None:
        assert fast == (yaml.safe_load(text) or {})


@pytest.mark.parametrize(("text", "description"), [
    ("name: a\ndescription: Plain text here\n", "Plain text here"),
    ('description: "Quoted: with colon"\n', "Quoted: with colon"),
    ("description: 'single'\n", "single"),
    ("description: >\n  folded\n  text\n", "folded text"),
    ("description: |\n  block\n", "block"),
    ("name: a\n", ""),
    ("description: text # comment\n", "text"),
    ("description: first\nother:\n  description: second\n", "first"),
    ("description: [not, a, string]\n", ""),
    ("description: first line\n  continued\nname: x\n", "first line continued"),
])
def test_descriptions_are_read_like_yaml_reads_them(tmp_path: Path, text: str, description: str) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(text)
    assert read_description(path) == description


def test_an_output_path_is_checked_before_it_is_written(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder").mkdir()
    assert output_path(str(tmp_path / "new" / "deeper" / "e.jsonl"), "--event-log") == \
        tmp_path / "new" / "deeper" / "e.jsonl"  # missing parents are created when written
    assert output_path(str(tmp_path / "a-file"), "--event-log") == tmp_path / "a-file"
    assert output_path(str(tmp_path / "a-folder"), "--report-dir", folder=True) == tmp_path / "a-folder"
    refused = [
        (str(tmp_path / "a-folder"), False, "--event-log: {0}/a-folder is a folder; give a file path"),
        (str(tmp_path / "a-file"), True, "--event-log: {0}/a-file is a file; give a folder"),
        (str(tmp_path / "a-file" / "e.jsonl"), False,
         "--event-log: {0}/a-file/e.jsonl would be under {0}/a-file, which is a file"),
        (str(tmp_path / "a-file" / "x" / "y"), True,
         "--event-log: {0}/a-file/x/y would be under {0}/a-file, which is a file"),
    ]
    for value, folder, message in refused:
        with pytest.raises(InputError) as raised:
            output_path(value, "--event-log", folder=folder)
        assert raised.value.message == message.format(tmp_path)
        assert raised.value.exit_code == ExitCode.INPUT_ERROR
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a-file", "a-folder"]  # nothing created


def test_an_existing_output_file_needs_to_be_writable_not_its_folder(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # As a user who may append to /var/log/axpipe.log but not create files in /var/log
    # (the suite may run as root, for whom os.access always says yes).
    log = tmp_path / "locked-folder" / "axpipe.log"
    log.parent.mkdir()
    log.write_text("")
    writable = {log}
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) in writable)
    assert output_path(str(log), "--event-log") == log
    writable.clear()
    with pytest.raises(InputError, match=r"--event-log: .*axpipe\.log: cannot write it"):
        output_path(str(log), "--event-log")


def test_the_run_lock_refuses_a_second_holder_and_names_the_first(tmp_path: Path) -> None:
    with RunLock(tmp_path, "first"):
        with pytest.raises(LockHeld) as raised:
            RunLock(tmp_path, "second").acquire()
        assert raised.value.exit_code == ExitCode.LOCKED
        assert raised.value.holder_pid == os.getpid()
        assert f"pid {os.getpid()}" in raised.value.message
    with RunLock(tmp_path, "third"):  # released on exit
        pass


def test_the_lock_dies_with_its_holder(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; sys.path[:0] = sys.argv[2:]\n"
        "from pathlib import Path; from axpipe.run.lock import RunLock\n"
        "RunLock(Path(sys.argv[1]), 'holder').acquire(); print('held', flush=True); time.sleep(60)"),
        str(tmp_path), *sys.path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as raised:
            RunLock(tmp_path, "me").acquire()
        assert raised.value.holder_pid == holder.pid
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        deadline = time.monotonic() + 5
        while True:
            try:
                RunLock(tmp_path, "me").acquire()
                break
            except LockHeld:
                assert time.monotonic() < deadline, "the kernel did not release a dead holder's lock"
                time.sleep(0.05)
    finally:
        holder.kill()
        holder.wait()
