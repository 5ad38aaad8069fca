"""The one process runner every check, gate, agent and repair goes through.

Two modes share one result type:

* **plain** (:func:`run` with ``interactive=False``): ``subprocess`` with a pipe. Used for
  checks and gates, where a pty would cost time and change the output.
* **interactive** (``interactive=True``): pexpect with a pty, for agents and anything that
  needs a terminal, prompt detection or scripted answers.

Both run the command in its own process group, so a timeout kills every process the command
started; both keep only a bounded tail of the output (and count every byte), so a command
that prints 50 MB does not fill memory; both can stream output to a live display.
"""

from __future__ import annotations

import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.errors import EnvironmentNotReady, ExecutableNotFound
from axpipe.records import record

CommandSpec = str | Sequence[str]
OutputCallback = Callable[[bytes], None]

DEFAULT_TAIL_BYTES = 64 * 1024
_KILL_GRACE_SECONDS = 2.0
_READ_SIZE = 65536
_PROMPT_WINDOW = 8192
# After the command exits, what it started may still hold the output pipe (and write to it):
# read for this long at most, then end its process group.
_AFTER_EXIT_SECONDS = 0.05
# Reading what is left once the group is killed: a writer that left the group (setsid) must
# not keep the run going.
_DRAIN_SECONDS = 0.5

# Process groups started here and still running: what an interrupt, an idle timeout or a
# cancelled scheduled run must take down with it.
_LIVE_GROUPS: set[int] = set()


def terminate_all(sig: int = signal.SIGTERM) -> int:
    """Signal every process group this process started and that is still running."""
    groups = list(_LIVE_GROUPS)
    for group in groups:
        _kill_group(group, sig)
    return len(groups)


@record
class ProcessResult:
    """What happened to one command: how it ended, how long it took, the tail of its output."""

    command: str
    exit_code: int | None
    signal: int | None = None
    timed_out: bool = False
    timeout: float | None = None
    duration: float = 0.0
    tail: bytes = b""
    total_bytes: int = 0
    prompt: str | None = None
    answered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Exited by itself with code 0."""
        return self.exit_code == 0 and not self.timed_out and self.prompt is None

    @property
    def output(self) -> str:
        """The kept tail of the output as text; bytes that are not UTF-8 are replaced."""
        return self.tail.decode("utf-8", errors="replace")

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self.tail)

    def describe(self) -> str:
        """One phrase for messages: ``exit code 1``, ``timed out after 5 s``, ..."""
        if self.timed_out:
            return f"timed out after {_seconds(self.timeout or 0)} s"
        if self.prompt is not None:
            return f"stopped at a prompt: {self.prompt!r}"
        if self.signal is not None:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        if self.exit_code == 127:
            return "exit code 127 (command not found)"
        return f"exit code {self.exit_code}"


class WorkdirNotFound(EnvironmentNotReady):
    """A command's working folder is missing, not a folder, or cannot be entered (exit 5):
    refused before anything is started."""

    def __init__(self, command: str, workdir: Path, problem: str) -> None:
        self.workdir = workdir
        super().__init__(f"cannot run `{command}`: its working folder '{workdir}' {problem}")


class OutputTail:
    """Keeps the last ``limit`` bytes fed to it and counts all of them (``limit=0``: counts only)."""

    def __init__(self, limit: int = DEFAULT_TAIL_BYTES) -> None:
        if limit < 0:
            raise ValueError(f"tail_bytes must be 0 or more, not {limit}")
        self.limit = limit
        self.total = 0
        self._chunks: deque[bytes] = deque()
        self._size = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if not self.limit:
            return
        self._chunks.append(data)
        self._size += len(data)
        while self._size - len(self._chunks[0]) >= self.limit:
            self._size -= len(self._chunks.popleft())

    def value(self) -> bytes:
        joined = b"".join(self._chunks)
        return joined[-self.limit:] if self.limit else b""


class LineScanner:
    """Feeds complete lines of a byte stream to a callback, whatever the chunk boundaries.

    Used by checks that must see every line of a long output (an oracle line early in a
    50 MB log), not only the tail. A line longer than ``max_line`` bytes is not buffered
    and not handed on in pieces: a piece is not the line (``^smoke: PASS$`` would match the
    end of one, and a pattern cut in two would match neither). It is counted in
    ``overlong`` (with the ``longest`` length seen) so that a check can refuse to decide.
    """

    def __init__(self, on_line: Callable[[str], None], max_line: int = 1024 * 1024) -> None:
        self._on_line = on_line
        self._pending = b""
        self._max_line = max_line
        self._skipping = 0  # bytes of the over-long line being dropped, 0 when none
        self.overlong = 0
        self.longest = 0

    def feed(self, data: bytes) -> None:
        data = self._pending + data
        *lines, self._pending = data.split(b"\n")
        for line in lines:
            if self._skipping:
                self._overlong(self._skipping + len(line))
            elif len(line) > self._max_line:
                self._overlong(len(line))
            else:
                self._emit(line)
        if self._skipping or len(self._pending) > self._max_line:
            self._skipping += len(self._pending)
            self._pending = b""

    def close(self) -> None:
        if self._skipping:
            self._overlong(self._skipping)
        elif self._pending:
            self._emit(self._pending)
        self._pending = b""

    def _overlong(self, length: int) -> None:
        self.overlong += 1
        self.longest = max(self.longest, length)
        self._skipping = 0

    def _emit(self, line: bytes) -> None:
        self._on_line(line.rstrip(b"\r").decode("utf-8", errors="replace"))


def command_text(command: CommandSpec) -> str:
    """The command as a person would type it."""
    if isinstance(command, str):
        return command
    return shlex.join(list(command))


def to_argv(command: CommandSpec) -> list[str]:
    """A shell string runs through ``/bin/sh -c``; a list runs as it is."""
    if isinstance(command, str):
        return ["/bin/sh", "-c", command]
    argv = list(command)
    if not argv:
        raise ValueError("empty command")
    return argv


def _workdir_problem(cwd: Path | None) -> str | None:
    """Why the command could not start in ``cwd``, or None when it can."""
    if cwd is None:
        return None
    if not cwd.exists():
        return "does not exist"
    if not cwd.is_dir():
        return "is not a folder"
    if not os.access(cwd, os.X_OK):
        return "cannot be entered (permission denied)"
    return None


def _resolve_program(argv: list[str], cwd: Path | None, env: Mapping[str, str]) -> str:
    """The program's absolute path. A relative one (``./fix.sh``) is relative to ``cwd``,
    never to axpipe's own current folder: pexpect would resolve it against the latter."""
    program = argv[0]
    if os.sep in program:
        candidate = Path(program) if os.path.isabs(program) else (cwd or Path()).absolute() / program
        if _is_program(candidate):
            return str(candidate)
        raise ExecutableNotFound(program)
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise ExecutableNotFound(program)
    return found


def _is_program(path: str | Path) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _spawn_failed(error: Exception, command: CommandSpec, program: str, cwd: Path | None) -> Exception:
    """The error to raise when starting failed although the checks before passed: the folder
    or the program went away in between. Anything else is raised as it is."""
    problem = _workdir_problem(cwd)
    if problem is not None:
        assert cwd is not None
        return WorkdirNotFound(command_text(command), cwd, problem)
    if not _is_program(program):
        return ExecutableNotFound(program)
    return error


def _environment(env: Mapping[str, str] | None, inherit: bool) -> dict[str, str]:
    merged = dict(os.environ) if inherit else {}
    if env:
        merged.update(env)
    return merged


def run(command: CommandSpec, *, cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
        inherit_env: bool = True, timeout: float | None = None, tail_bytes: int = DEFAULT_TAIL_BYTES,
        on_output: OutputCallback | None = None, stdin: bytes | None = None,
        interactive: bool = False, answers: Sequence[tuple[str, str]] = (),
        stop_on: Sequence[str] = ()) -> ProcessResult:
    """Run ``command`` to completion and return how it ended.

    ``env`` is added to the inherited environment (or replaces it with
    ``inherit_env=False``). ``timeout`` kills the whole process group. In interactive mode,
    ``answers`` are ``(regex, reply)`` pairs: when the output matches, the reply is typed;
    a match of a ``stop_on`` regex stops the process and is reported as ``prompt``.
    A program given with a folder (``./fix.sh``) is relative to ``cwd``. ``tail_bytes=0``
    keeps no output (``total_bytes`` still counts it).
    Raises :class:`~axpipe.errors.ExecutableNotFound` when the program does not exist and
    :class:`WorkdirNotFound` when ``cwd`` is not a folder that can be entered (both exit 5,
    before anything is started).
    """
    argv = to_argv(command)
    environment = _environment(env, inherit_env)
    workdir = Path(cwd) if cwd is not None else None
    problem = _workdir_problem(workdir)
    if problem is not None:
        assert workdir is not None
        raise WorkdirNotFound(command_text(command), workdir, problem)
    argv[0] = _resolve_program(argv, workdir, environment)
    if interactive:
        return _run_interactive(command, argv, workdir, environment, timeout, tail_bytes,
                                on_output, answers, stop_on)
    if answers or stop_on:
        raise ValueError("answers and stop_on need interactive=True")
    return _run_plain(command, argv, workdir, environment, timeout, tail_bytes, on_output, stdin)


class _Tracked:
    """Registers a child's process group while it runs; kills it if we leave by an exception
    (Ctrl-C included): the child lives in its own session and would not get the signal."""

    def __init__(self, pgid: int, reap: Callable[[], object]) -> None:
        self.pgid = pgid
        self.reap = reap

    def __enter__(self) -> None:
        _LIVE_GROUPS.add(self.pgid)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        _LIVE_GROUPS.discard(self.pgid)
        if exc_type is not None:
            _kill_group(self.pgid, signal.SIGKILL)
            try:
                self.reap()
            except Exception:  # the child is gone either way
                pass


def _run_plain(command: CommandSpec, argv: list[str], cwd: Path | None, env: dict[str, str],
               timeout: float | None, tail_bytes: int, on_output: OutputCallback | None,
               stdin: bytes | None) -> ProcessResult:
    started = time.monotonic()
    tail = OutputTail(tail_bytes)
    try:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError as error:
        raise _spawn_failed(error, command, argv[0], cwd) from error
    if stdin is not None:
        assert process.stdin is not None
        try:
            process.stdin.write(stdin)
        except BrokenPipeError:
            pass
        process.stdin.close()
    assert process.stdout is not None
    fd = process.stdout.fileno()
    deadline = started + timeout if timeout is not None else None
    timed_out = False
    exit_fd = _exit_watch(process.pid)
    with _Tracked(process.pid, process.wait), selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ, "output")
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ, "exit")
        # When the command ended: something it started may still hold the pipe open, or keep
        # writing to it. Both checks below run on every pass, however much output is coming.
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and exit_fd is None and _has_exited(process.pid):
                exited_at = now  # no pidfd: poll for the exit
            if exited_at is not None and now - exited_at >= _AFTER_EXIT_SECONDS:
                # Take what is already there, then end the group so EOF comes.
                _kill_group(process.pid, signal.SIGKILL)
                _drain(fd, tail, on_output)
                break
            if deadline is not None and now >= deadline:
                timed_out = True
                _terminate_group(process.pid)
                _drain(fd, tail, on_output)
                break
            wait = None if deadline is None else deadline - now
            if exited_at is not None or exit_fd is None:
                until = exited_at + _AFTER_EXIT_SECONDS - now if exited_at is not None else _AFTER_EXIT_SECONDS
                wait = until if wait is None else min(wait, until)
            chunk = None
            for key, _ in selector.select(wait):
                if key.data == "exit":
                    exited_at = time.monotonic()
                    selector.unregister(key.fileobj)
                else:
                    chunk = os.read(fd, _READ_SIZE)
            if chunk == b"":
                break
            if chunk:
                tail.feed(chunk)
                if on_output is not None:
                    on_output(chunk)
    if exit_fd is not None:
        os.close(exit_fd)
    process.stdout.close()
    returncode = process.wait()
    return _result(command, returncode, timed_out, timeout, started, tail)


def _exit_watch(pid: int) -> int | None:
    """A pidfd that becomes readable when ``pid`` exits (Linux 5.3+), else None (we poll)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    """Whether the child has ended, without reaping it.

    The unreaped child keeps its pid (and so its process group id) from being reused, which
    makes a later ``killpg`` of that group safe.
    """
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _drain(fd: int, tail: OutputTail, on_output: OutputCallback | None) -> None:
    """Read what is left in the pipe, for :data:`_DRAIN_SECONDS` at most."""
    give_up = time.monotonic() + _DRAIN_SECONDS
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while selector.select(max(0.0, give_up - time.monotonic())):
            chunk = os.read(fd, _READ_SIZE)
            if not chunk:
                return
            tail.feed(chunk)
            if on_output is not None:
                on_output(chunk)


def _terminate_group(pid: int) -> None:
    """SIGTERM the group, give it a moment, then SIGKILL whatever is left."""
    _kill_group(pid, signal.SIGTERM)
    give_up = time.monotonic() + _KILL_GRACE_SECONDS
    while time.monotonic() < give_up and not _has_exited(pid):
        time.sleep(0.02)
    _kill_group(pid, signal.SIGKILL)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _result(command: CommandSpec, returncode: int | None, timed_out: bool, timeout: float | None,
            started: float, tail: OutputTail, prompt: str | None = None,
            answered: list[str] | None = None) -> ProcessResult:
    exit_code: int | None = returncode
    sig: int | None = None
    if returncode is not None and returncode < 0:
        exit_code, sig = None, -returncode
    return ProcessResult(
        command=command_text(command), exit_code=exit_code, signal=sig, timed_out=timed_out,
        timeout=timeout, duration=time.monotonic() - started, tail=tail.value(),
        total_bytes=tail.total, prompt=prompt, answered=answered or [],
    )


def _chdir(cwd: Path | None) -> Callable[[], None] | None:
    if cwd is None:
        return None
    folder = str(cwd)
    return lambda: os.chdir(folder)


class _StreamSink:
    """The file-like object pexpect copies everything it reads into."""

    def __init__(self, tail: OutputTail, on_output: OutputCallback | None) -> None:
        self._tail = tail
        self._on_output = on_output

    def write(self, data: bytes) -> None:
        self._tail.feed(data)
        if self._on_output is not None:
            self._on_output(data)

    def flush(self) -> None:
        pass


def _run_interactive(command: CommandSpec, argv: list[str], cwd: Path | None, env: dict[str, str],
                     timeout: float | None, tail_bytes: int, on_output: OutputCallback | None,
                     answers: Sequence[tuple[str, str]], stop_on: Sequence[str]) -> ProcessResult:
    import pexpect

    started = time.monotonic()
    tail = OutputTail(tail_bytes)
    # The child enters cwd in preexec_fn, not through pexpect's cwd: ptyprocess calls
    # os.chdir(cwd) in the forked child outside its error handling, so a folder removed since
    # run() checked it would unwind into a copy of axpipe running inside the pty.
    try:
        child: Any = pexpect.spawn(argv[0], argv[1:], env=env, preexec_fn=_chdir(cwd),
                                   timeout=None, maxread=_READ_SIZE, echo=False, dimensions=(50, 200))
    except (OSError, pexpect.ExceptionPexpect) as error:
        raise _spawn_failed(error, command, argv[0], cwd) from error
    # pexpect sleeps 0.1 s on close by default; that alone would cost 100 ms per agent call.
    child.ptyproc.delayafterclose = 0
    child.delayafterclose = 0
    child.delaybeforesend = None
    child.logfile_read = _StreamSink(tail, on_output)
    answer_patterns = [(re.compile(pattern.encode()), reply) for pattern, reply in answers]
    stop_patterns = [re.compile(pattern.encode()) for pattern in stop_on]
    deadline = started + timeout if timeout is not None else None
    answered: list[str] = []
    with _Tracked(child.pid, lambda: child.close(force=True)):
        timed_out, prompt = _interact(child, deadline, answer_patterns, stop_patterns, answered)
    # The pty reached EOF or we killed the group: wait for the child itself (within the
    # deadline) so close() never has to signal it and sleep between signals.
    while child.isalive():
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            _kill_group(child.pid, signal.SIGKILL)
            child.wait()
            break
        time.sleep(0.002)
    child.close()
    returncode: int | None
    if child.signalstatus is not None:
        returncode = -child.signalstatus
    else:
        returncode = child.exitstatus
    return _result(command, returncode, timed_out, timeout, started, tail, prompt, answered)


def _interact(child: Any, deadline: float | None, answer_patterns: list[tuple[re.Pattern[bytes], str]],
              stop_patterns: list[re.Pattern[bytes]], answered: list[str]) -> tuple[bool, str | None]:
    """Read the child's output, answering and stopping at prompts; (timed out, prompt).

    Prompts are matched on a short sliding window of recent output, so memory stays bounded
    however much the child prints (pexpect's own expect() keeps it all).
    """
    import pexpect

    window = b""
    timed_out = False
    prompt: str | None = None
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            timed_out = True
            _terminate_group(child.pid)
            break
        try:
            data = child.read_nonblocking(_READ_SIZE, timeout=remaining)
        except pexpect.TIMEOUT:
            continue
        except pexpect.EOF:
            break
        window = (window + data)[-_PROMPT_WINDOW:]
        reply = next((reply for pattern, reply in answer_patterns if pattern.search(window)), None)
        if reply is not None:
            child.sendline(reply)
            answered.append(reply)
            window = b""
            continue
        stop = next((pattern for pattern in stop_patterns if pattern.search(window)), None)
        if stop is not None:
            prompt = _prompt_line(window, stop)
            _kill_group(child.pid, signal.SIGKILL)
            break
    return timed_out, prompt


def _prompt_line(window: bytes, pattern: re.Pattern[bytes]) -> str:
    match = pattern.search(window)
    assert match is not None
    line_start = window.rfind(b"\n", 0, match.start()) + 1
    line_end = window.find(b"\n", match.end())
    line = window[line_start: line_end if line_end != -1 else len(window)]
    return line.strip().decode("utf-8", errors="replace")


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# Whether a process lives: below the store (which closes rows whose process is gone) and the
# runtime (which ends trees of processes), so both use it from here.
PROC = Path("/proc")


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = proc_stat(pid)
    return stat is None or stat[0] != "Z"


def proc_stat(pid: int) -> tuple[str, int] | None:
    """``(state, parent pid)`` from ``/proc/<pid>/stat``, or None when unreadable."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces and parentheses.
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], int(fields[1])
