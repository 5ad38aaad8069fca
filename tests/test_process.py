"""The process runner, plain and interactive, with real processes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from axpipe import process
from axpipe.errors import ExecutableNotFound, ExitCode

PY = sys.executable


def test_plain_run_captures_exit_code_and_output(tmp_path: Path) -> None:
    result = process.run([PY, "-c", "import sys; print('hello'); sys.exit(3)"], cwd=tmp_path)
    assert result.exit_code == 3
    assert result.output == "hello\n"
    assert not result.ok
    assert result.describe() == "exit code 3"


def test_shell_string_runs_through_sh_in_cwd_with_env(tmp_path: Path) -> None:
    result = process.run('echo "$AXPIPE_TEST_VALUE" && pwd', cwd=tmp_path, env={"AXPIPE_TEST_VALUE": "42"})
    assert result.ok
    assert result.output.splitlines() == ["42", str(tmp_path)]


def test_stderr_is_merged_into_the_output() -> None:
    result = process.run([PY, "-c", "import sys; sys.stderr.write('oops\\n')"])
    assert result.output == "oops\n"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = process.run(f"sleep 30 & echo $! > {marker}; sleep 30", timeout=0.5)
    assert time.monotonic() - started < 5
    assert result.timed_out
    assert result.describe() == "timed out after 0.5 s"
    assert not result.ok
    grandchild = int(marker.read_text())
    _assert_gone(grandchild)


def test_integer_timeout_is_reported_in_whole_seconds() -> None:
    result = process.run("sleep 10", timeout=1)
    assert result.describe() == "timed out after 1 s"


def test_background_process_holding_the_pipe_does_not_hang_the_run(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    started = time.monotonic()
    result = process.run(f"sleep 30 & echo $! > {marker}; echo done")
    assert time.monotonic() - started < 5
    assert result.ok and result.output == "done\n"
    _assert_gone(int(marker.read_text()))


def _assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A killed process that is not our child may linger as a zombie until init reaps it.
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "State:\tZ" in status.read_text():
            return
        time.sleep(0.05)
    pytest.fail(f"process {pid} is still running")


def test_big_output_keeps_a_bounded_tail_and_counts_every_byte() -> None:
    size = 50 * 1024 * 1024
    result = process.run([PY, "-c", f"import sys; sys.stdout.buffer.write(b'a' * {size} + b'END')"],
                         tail_bytes=1024)
    assert result.total_bytes == size + 3
    assert len(result.tail) == 1024
    assert result.tail.endswith(b"aaEND")
    assert result.truncated


def test_streaming_callback_sees_every_byte() -> None:
    seen = bytearray()
    result = process.run([PY, "-c", "print('x' * 100000)"], on_output=seen.extend, tail_bytes=10)
    assert len(seen) == result.total_bytes == 100001


def test_non_utf8_output_is_kept_as_bytes_and_decoded_with_replacement() -> None:
    result = process.run([PY, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe end')"])
    assert result.tail == b"ok \xff\xfe end"
    assert result.output == "ok \ufffd\ufffd end"


def test_a_signal_is_reported_as_such() -> None:
    result = process.run(["sh", "-c", "kill -TERM $$"])
    assert result.exit_code is None
    assert result.signal == 15
    assert result.describe() == "killed by SIGTERM"


def test_missing_executable_is_a_clear_environment_error() -> None:
    with pytest.raises(ExecutableNotFound) as raised:
        process.run(["definitely-not-a-program-axpipe"])
    assert raised.value.exit_code == ExitCode.ENVIRONMENT
    assert "definitely-not-a-program-axpipe" in raised.value.message
    assert "not on PATH" in raised.value.message


def test_missing_relative_executable_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ExecutableNotFound):
        process.run(["./nope.sh"], cwd=tmp_path)


def test_missing_program_inside_a_shell_string_exits_127() -> None:
    result = process.run("definitely-not-a-program-axpipe --flag")
    assert result.exit_code == 127
    assert result.describe() == "exit code 127 (command not found)"


def test_stdin_is_fed_to_the_command() -> None:
    result = process.run([PY, "-c", "import sys; print(sys.stdin.read().upper())"], stdin=b"abc")
    assert result.output == "ABC\n"


def test_line_scanner_sees_lines_across_chunk_boundaries() -> None:
    lines: list[str] = []
    scanner = process.LineScanner(lines.append)
    for chunk in (b"sm", b"oke: PA", b"SS 14\r\nnext", b" line"):
        scanner.feed(chunk)
    scanner.close()
    assert lines == ["smoke: PASS 14", "next line"]


def test_line_scanner_counts_overlong_lines_instead_of_handing_on_pieces() -> None:
    lines: list[str] = []
    scanner = process.LineScanner(lines.append, max_line=8)
    for chunk in (b"short\n0123456", b"789abcdef-PASS", b"\nafter\n", b"123456789012"):
        scanner.feed(chunk)
    scanner.close()
    assert lines == ["short", "after"]
    assert (scanner.overlong, scanner.longest) == (2, 21)  # "0123456789abcdef-PASS" and "123456789012"


def test_output_tail_keeps_the_last_bytes() -> None:
    tail = process.OutputTail(5)
    for chunk in (b"abc", b"defg", b"h"):
        tail.feed(chunk)
    assert tail.value() == b"defgh"
    assert tail.total == 8


# -- interactive -------------------------------------------------------------------------


def test_interactive_answers_a_prompt() -> None:
    script = "answer = input('Apply the change? [y/N] '); print('answer was', answer)"
    result = process.run([PY, "-c", script], interactive=True, answers=[(r"\[y/N\]", "y")])
    assert result.ok
    assert result.answered == ["y"]
    assert "answer was y" in result.output


def test_interactive_stops_at_a_permission_prompt() -> None:
    script = "print('working'); input('Allow editing invoices.py? [y/N] '); print('edited')"
    result = process.run([PY, "-c", script], interactive=True, stop_on=[r"\[y/N\]"], timeout=20)
    assert result.prompt == "Allow editing invoices.py? [y/N]"
    assert "edited" not in result.output
    assert not result.ok
    assert result.describe().startswith("stopped at a prompt")


def test_interactive_runs_with_a_terminal() -> None:
    result = process.run([PY, "-c", "import sys; print(sys.stdout.isatty())"], interactive=True)
    assert result.output.strip() == "True"


def test_interactive_timeout_kills_the_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    result = process.run(f"sleep 30 & echo $! > {marker}; sleep 30", interactive=True, timeout=0.5)
    assert result.timed_out
    _assert_gone(int(marker.read_text()))


def test_interactive_big_output_keeps_a_bounded_tail() -> None:
    size = 20 * 1024 * 1024
    result = process.run([PY, "-c", f"import sys; sys.stdout.buffer.write(b'b' * {size})"],
                         interactive=True, tail_bytes=4096)
    assert result.total_bytes == size
    assert len(result.tail) == 4096


def test_interactive_exit_code_and_signal() -> None:
    assert process.run(["sh", "-c", "exit 4"], interactive=True).exit_code == 4
    killed = process.run(["sh", "-c", "kill -KILL $$"], interactive=True)
    assert killed.signal == 9 and killed.describe() == "killed by SIGKILL"


def test_answers_need_interactive_mode() -> None:
    with pytest.raises(ValueError):
        process.run(["true"], answers=[("x", "y")])
