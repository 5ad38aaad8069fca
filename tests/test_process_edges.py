"""The process runner at its edges: a working folder that is not there, a relative program,
a background writer that outlives the command, a tail of zero bytes. Real processes, and
the real CLI for a repair whose agent is a relative program."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import git, run_cli, write_recipe
from test_process import _assert_gone

from axpipe import process
from axpipe.errors import ExecutableNotFound, ExitCode

PY = sys.executable
MODES = [pytest.param(False, id="plain"), pytest.param(True, id="interactive")]

# Runs process.run in a fresh interpreter and reports, from every process that reaches the
# end of the script, its pid and what happened. A forked copy of the caller (the defect this
# guards against) would report a second time, from another pid.
_CALLER = """
import json, os, sys
from axpipe import process
{setup}
try:
    result = process.run(sys.argv[1:], cwd={cwd!r}, interactive={interactive}, timeout=20)
    outcome = {{"result": result.ok, "output": result.output}}
except Exception as error:
    outcome = {{"error": type(error).__name__, "message": str(error),
               "exit_code": int(getattr(error, "exit_code", -1))}}
print(json.dumps({{"pid": os.getpid(), **outcome}}), flush=True)
"""


def _call(tmp_path: Path, cwd: Path, interactive: bool, *command: str, setup: str = "") -> list[dict[str, object]]:
    completed = subprocess.run([PY, "-c", _CALLER.format(setup=setup, cwd=str(cwd), interactive=interactive),
                                *command], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.replace("\r", "").splitlines() if line.startswith("{")]


@pytest.mark.parametrize("interactive", MODES)
def test_a_missing_working_folder_is_refused_before_anything_starts(tmp_path: Path, interactive: bool) -> None:
    missing = tmp_path / "gone"
    marker = tmp_path / "ran"
    reports = _call(tmp_path, missing, interactive, "sh", "-c", f"touch {marker}")
    assert len(reports) == 1, reports  # the caller alone: no forked copy of it ran on
    assert reports[0]["error"] == "WorkdirNotFound"
    assert reports[0]["exit_code"] == ExitCode.ENVIRONMENT
    assert reports[0]["message"] == (f"cannot run `sh -c 'touch {marker}'`: "
                                     f"its working folder '{missing}' does not exist")
    assert not marker.exists()


@pytest.mark.parametrize("interactive", MODES)
def test_a_working_folder_that_is_a_file_is_refused(tmp_path: Path, interactive: bool) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(process.WorkdirNotFound) as raised:
        process.run(["true"], cwd=file, interactive=interactive)
    assert raised.value.exit_code == ExitCode.ENVIRONMENT
    assert raised.value.message == f"cannot run `true`: its working folder '{file}' is not a folder"


def test_a_working_folder_removed_after_the_check_does_not_fork_the_caller(tmp_path: Path) -> None:
    # The folder passes run()'s check and is gone when the child enters it (simulated by
    # letting the first check pass): ptyprocess's own chdir would unwind into a copy of the
    # caller inside the pty; entering it in preexec_fn fails the spawn instead.
    setup = """
checked = []
real = process._workdir_problem
def first_passes(cwd):
    checked.append(cwd)
    return None if len(checked) == 1 else real(cwd)
process._workdir_problem = first_passes
"""
    missing = tmp_path / "gone"
    reports = _call(tmp_path, missing, True, "true", setup=setup)
    assert len(reports) == 1, reports
    assert reports[0]["error"] == "WorkdirNotFound"
    assert str(missing) in str(reports[0]["message"])


@pytest.mark.parametrize("interactive", MODES)
def test_a_relative_program_is_found_in_cwd_from_any_current_folder(tmp_path: Path, interactive: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    script = root / "fix.sh"
    script.write_text('#!/bin/sh\necho "ran $1 in $(pwd)"\n')
    script.chmod(0o755)
    monkeypatch.chdir(root / "sub")  # where axpipe was started: not where the program is
    result = process.run(["./fix.sh", "arg"], cwd=root, interactive=interactive, timeout=20)
    assert result.ok, result.output
    assert result.output.replace("\r", "") == f"ran arg in {root}\n"
    assert result.command == "./fix.sh arg"


@pytest.mark.parametrize("interactive", MODES)
def test_a_missing_relative_program_is_executable_not_found(tmp_path: Path, interactive: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Present in the current folder, absent from cwd: cwd is what counts.
    (tmp_path / "sub").mkdir()
    decoy = tmp_path / "fix.sh"
    decoy.write_text("#!/bin/sh\necho decoy\n")
    decoy.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ExecutableNotFound) as raised:
        process.run(["./fix.sh"], cwd=tmp_path / "sub", interactive=interactive)
    assert raised.value.program == "./fix.sh"


def test_a_repair_agent_given_as_a_relative_program_works_from_a_subfolder(tmp_path: Path) -> None:
    repo = tmp_path / "ws"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "README").write_text("a subfolder\n")
    fix = repo / "fix.sh"
    fix.write_text("#!/bin/sh\ntouch fixed\n")
    fix.chmod(0o755)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    recipes = tmp_path / "recipes"
    write_recipe(recipes, "relfix", """
name: relfix
repair:
  target: "test -f fixed"
  budget: 2
  agent:
    kind: command
    command: ["./fix.sh", "{prompt_file}"]
""")
    result = run_cli("run", "recipe=relfix", cwd=repo / "sub", env={"AXPIPE_RECIPE_PATH": str(recipes)})
    assert result.exit_code == ExitCode.OK, result.stdout + result.stderr
    assert "repair resolved in 2/2 iterations" in result.stdout
    assert (repo / "fixed").is_file()
    assert "ExceptionPexpect" not in result.stdout


# Writes as fast as it can for 15 s, then stops by itself: before the fix, a background
# writer kept the runner reading until the deadline (forever without one); one that never
# stopped would have hung the test instead of failing it.
WRITER = shlex.join([PY, "-c", "import sys, time\nend = time.monotonic() + 15\n"
                                "while time.monotonic() < end: sys.stdout.write('y\\n' * 4096)"])


def test_a_background_writer_does_not_keep_the_run_going(tmp_path: Path) -> None:
    # The command exits at once; what it started keeps writing to the pipe. The runner takes
    # what is there, ends the group and reports the command's own exit.
    marker = tmp_path / "pid"
    result = process.run(f"{WRITER} & echo $! > {marker}; exit 0", timeout=10)
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.duration < 5  # 10 s, and gigabytes read, before the fix
    _assert_gone(int(marker.read_text()))


def test_a_command_that_never_stops_writing_still_times_out() -> None:
    # The deadline is checked on every pass now; before, only when a read found the pipe
    # empty (which, with a writer slower than the reader, still happened soon after it).
    result = process.run(WRITER, timeout=0.5, tail_bytes=16)
    assert result.timed_out
    assert result.describe() == "timed out after 0.5 s"
    assert result.duration < 5
    assert result.tail == b"y\n" * 8


def test_output_written_before_the_exit_is_all_kept() -> None:
    size = 5 * 1024 * 1024
    result = process.run([PY, "-c", f"import sys; sys.stdout.buffer.write(b'x' * {size} + b'END')"],
                         tail_bytes=8)
    assert result.ok
    assert result.total_bytes == size + 3
    assert result.tail == b"xxxxxEND"


@pytest.mark.parametrize("interactive", MODES)
def test_a_tail_of_zero_bytes_keeps_nothing_and_counts_everything(interactive: bool) -> None:
    result = process.run(["printf", "hello"], tail_bytes=0, interactive=interactive)
    assert result.ok
    assert result.tail == b""
    assert result.total_bytes == 5
    assert result.truncated


def test_a_negative_tail_is_refused_before_anything_starts(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match="tail_bytes must be 0 or more, not -1"):
        process.run(f"touch {marker}", tail_bytes=-1)
    assert not marker.exists()
