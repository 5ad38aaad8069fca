"""Running a gate phase's command, in the workspace or at the baseline, and keeping every attempt.

Each attempt's complete output goes to ``<phase>-<where>.log`` beside the report (cut at
16 MiB) and its JUnit XML, wherever the command wrote it, is copied to
``<phase>-<where>-junit.xml``: the baseline's worktree is removed, the evidence stays.
``{junit_xml}`` in a command is replaced by that path (also ``AXPIPE_JUNIT_XML``); a
pytest command naming its own ``--junitxml=PATH`` is read from there. A file left at
either path by an earlier run is deleted first, so it is never read as this run's.

The baseline's attempt runs in the same folder of the worktree as the workspace's runs in
the work tree: the project's folder, a subfolder of both in a monorepo (``prefix``), and
without git's repository-local environment variables (:func:`worktrees.outside_environment`):
in a pre-commit hook they point at the user's checkout and index, not the worktree's. In
the workspace, a lint or type check keeps the environment it was given, as the command would
have it if the hook ran it itself (a ``git diff --cached`` there sees the index being
committed). A test suite (the ``test`` phase, or one gate ``command``) runs without
``GIT_INDEX_FILE``: a test that makes a repository of its own and runs ``git add`` there
would otherwise write into the user's commit (:func:`worktrees.repository_environment`).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from axpipe import process
from axpipe.errors import ExecutableNotFound
from axpipe.evidence import env as evidence_env
from axpipe.gate.report import BLAMED, Attempt, Item, PhaseReport
from axpipe.gate.worktrees import Throwaway, WorktreeError, outside_environment, repository_environment
from axpipe.process import CommandSpec, ProcessResult, command_text
from axpipe.records import record

# Phases that run a test suite rather than read the change (lint and type checks do)
_SUITES = ("test", "command")

PHASE_ORDER = ("lint", "typecheck", "test", "command")
JUNIT_PLACEHOLDER = "{junit_xml}"
DEFAULT_TIMEOUT = 30 * 60.0
_LOG_LIMIT = 16 * 1024 * 1024


@record
class GateSettings:
    """What to run: ``phases`` (lint/typecheck/test → command) and/or one ``command``."""

    phases: dict[str, str] = field(default_factory=dict)
    command: CommandSpec | None = None
    narrow: bool = True
    timeout: float = DEFAULT_TIMEOUT

    def commands(self) -> list[tuple[str, CommandSpec]]:
        listed: list[tuple[str, CommandSpec]] = [(name, self.phases[name]) for name in PHASE_ORDER
                                                 if name in self.phases]
        if self.command is not None:
            listed.append(("command", self.command))
        return listed


def declared_junit(command: CommandSpec) -> str | None:
    """The JUnit path a pytest-style command names (``--junitxml=PATH``, ``--junit-xml PATH``)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:
        return None
    for index, word in enumerate(words):
        for flag in ("--junitxml", "--junit-xml"):
            if word.startswith(flag + "="):
                return word.split("=", 1)[1]
            if word == flag and index + 1 < len(words):
                return words[index + 1]
    return None


class Runner:
    """Runs one gate's commands, here and (on demand) in the baseline worktree."""

    def __init__(self, root: Path, settings: GateSettings, folder: Path, tree: Throwaway,
                 remaining: Callable[[], float] | None, on_output: Callable[[bytes], None] | None,
                 prefix: str = "") -> None:
        self.root, self.settings, self.folder, self.tree = root, settings, folder, tree
        self.remaining, self.on_output = remaining, on_output
        self.prefix = prefix  # the project's folder in its work tree (workspace.git_prefix)

    def cwd(self, where: str) -> Path:
        """Where an attempt runs: the project's root, or its folder in the baseline's worktree
        (checked out on first use); a :class:`WorktreeError` when that cannot be had."""
        if where == "workspace":
            return self.root
        folder = self.tree.path() / self.prefix
        if not folder.is_dir():  # the project's folder is newer than the baseline
            raise WorktreeError(f"the project's folder {self.prefix.rstrip('/')} does not exist at the baseline "
                                f"{self.tree.revision[:12]}")
        return folder

    def junit(self, name: str, where: str) -> Path:
        """Where an attempt's JUnit XML is kept (``{junit_xml}`` names it)."""
        return self.folder / f"{name}-{where}-junit.xml"

    def substituted(self, command: CommandSpec, name: str, where: str) -> CommandSpec:
        """``command`` with ``{junit_xml}`` replaced by the attempt's own path."""
        ours = self.junit(name, where)
        if isinstance(command, str):
            return command.replace(JUNIT_PLACEHOLDER, shlex.quote(str(ours)))
        return [part.replace(JUNIT_PLACEHOLDER, str(ours)) for part in command]

    def run(self, name: str, command: CommandSpec, where: str, *,
            environment: Callable[[dict[str, str]], dict[str, str]] | None = None,
            ) -> tuple[Attempt, ProcessResult | None]:
        """Run ``command`` here (``where`` is ``workspace``) or at the baseline; ``environment``
        makes the run's environment from the one it would have had (the baseline's isolation)."""
        try:
            cwd = self.cwd(where)
        except WorktreeError as error:
            return Attempt(where, command_text(command), error.message, None, 0.0, "-", ""), None
        ours = self.junit(name, where)
        command = self.substituted(command, name, where)
        named = declared_junit(command)
        theirs = (cwd / named) if named and not os.path.isabs(named) else Path(named) if named else None
        for stale in (ours, theirs):
            if stale is not None and stale.is_file():
                stale.unlink()  # never read a previous run's results as this run's
        log_path = self.folder / f"{name}-{where}.log"
        env = {"AXPIPE_JUNIT_XML": str(ours), "AXPIPE_GATE_PHASE": name, "AXPIPE_GATE_WHERE": where}
        timeout = self.settings.timeout if self.remaining is None else min(self.settings.timeout, self.remaining())
        with log_path.open("wb") as log:
            written = [0]

            def tee(chunk: bytes) -> None:
                if written[0] < _LOG_LIMIT:
                    log.write(chunk[:_LOG_LIMIT - written[0]])
                    written[0] += len(chunk)
                if self.on_output is not None:
                    self.on_output(chunk)

            if where == "baseline":  # another checkout: the user's GIT_DIR and the hook's index are not its own
                env = {**outside_environment(), **env}
            elif name in _SUITES:  # its tests' own repositories must not write into the commit being made
                env = {**repository_environment(), **env}
            else:  # a lint or type check reads the change as the hook's git sees it
                env = {**os.environ, **env}
            env = evidence_env.environment(cwd, env)  # no bytecode or cache left in either checkout
            if environment is not None:
                env = environment(env)
            try:
                result = process.run(command, cwd=cwd, env=env, inherit_env=False, timeout=timeout, on_output=tee)
            except ExecutableNotFound as error:
                return Attempt(where, command_text(command), error.message, None, 0.0, str(log_path), ""), None
        report_file = ours if ours.is_file() else theirs if theirs is not None and theirs.is_file() else None
        kept = None
        if report_file is not None:
            if report_file != ours:
                shutil.copyfile(report_file, ours)  # the worktree goes away; the evidence stays
            kept = str(ours)
        attempt = Attempt(where, result.command, result.describe(), result.exit_code, round(result.duration, 3),
                          str(log_path), result.output[-8000:], kept)
        return attempt, result

    def output(self, attempt: Attempt) -> str:
        try:
            return Path(attempt.log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return attempt.output_tail


def missing(result: ProcessResult | None) -> bool:
    return result is None or (result.exit_code == 127 and "not found" in result.output)


def abnormal(result: ProcessResult) -> bool:
    return result.timed_out or result.signal is not None


def error_phase(name: str, command: CommandSpec, attempt: Attempt) -> PhaseReport:
    return PhaseReport(name, command_text(command), "error", f"could not run: {attempt.result}", [attempt],
                       [Item(BLAMED, "the command could not run, so nothing shows the change is clean",
                             "(the command)", attempt.result)])
