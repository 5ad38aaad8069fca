"""The plugin interfaces, documented once (DESIGN §10, §13).

A plugin is any object an entry point names (a class is instantiated with no arguments).
Each kind of plugin satisfies one :class:`typing.Protocol` below. A plugin that takes
parameters declares ``params_schema``: a dataclass whose fields are validated exactly like
recipe keys (types, ``metadata={"doc", "min", "max", "choices"}``), so a typo in a
plugin's parameter is a config error naming its path before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # plugin modules import this one; keep their import cheap
    from axpipe.process import CommandSpec, ProcessResult


class CheckStatus(StrEnum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be run (missing program, bad input): no evidence either way


@dataclass
class CheckRequest:
    """Everything a check kind gets to run one check."""

    check_id: str
    command: CommandSpec | None
    params: Any
    cwd: Path
    timeout: float
    env: Mapping[str, str] = field(default_factory=dict)
    artifacts_dir: Path | None = None
    on_output: Callable[[bytes], None] | None = None
    fingerprint: Callable[[], str] | None = None
    """Fingerprint of the workspace now, for kinds that compare the tree (idempotent)."""


@dataclass
class CheckOutcome:
    """The result of one check: data, not an exception."""

    status: CheckStatus
    summary: str
    exit_code: int | None = None
    output_tail: str = ""
    output_bytes: int = 0
    duration: float = 0.0
    matched_line: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status is CheckStatus.PASSED

    @classmethod
    def from_process(cls, status: CheckStatus, summary: str, result: ProcessResult,
                     **extra: Any) -> CheckOutcome:
        return cls(status=status, summary=summary, exit_code=result.exit_code,
                   output_tail=result.output, output_bytes=result.total_bytes,
                   duration=result.duration, **extra)


@runtime_checkable
class CheckKind(Protocol):
    """A kind of check (``axpipe.checks``); also usable as a repair's success condition."""

    params_schema: type | None
    """Dataclass of the kind's parameters, or None when it takes none."""

    needs_command: bool
    """Whether a check of this kind must have a ``command``."""

    def describe(self, params: Any) -> str:
        """The condition in words, as the repair report prints it before iteration 1."""
        ...

    def run(self, request: CheckRequest) -> CheckOutcome:
        """Run the check once and say whether it held. Must not raise for a failing check."""
        ...


class AgentStatus(StrEnum):
    """How an agent's turn ended."""

    DONE = "done"  # exited 0
    FAILED = "failed"  # exited non-zero or was killed
    STOPPED = "stopped"  # a non-autonomous agent reached a permission prompt
    TIMED_OUT = "timed-out"
    ERROR = "error"  # could not be started (missing program)


@dataclass
class AgentRequest:
    """One turn of an agent: the rendered prompt and where and how to run.

    ``env`` already holds the pinned variables (DESIGN §13): ``AXPIPE_PROMPT_FILE``,
    ``AXPIPE_GOAL_ID``, ``AXPIPE_ITERATION``, ``AXPIPE_USAGE_FILE``, and in a repair
    ``AXPIPE_FAILURE_FILE``; plus ``AXPIPE_BLOCKED_FILE`` (see docs/goals.md).
    """

    prompt: str
    prompt_file: Path
    cwd: Path
    env: Mapping[str, str]
    timeout: float
    autonomous: bool
    params: Any
    model: str | None = None
    on_output: Callable[[bytes], None] | None = None


@dataclass
class AgentOutcome:
    """The result of an agent's turn: data, not an exception."""

    status: AgentStatus
    summary: str
    exit_code: int | None = None
    output_tail: str = ""
    duration: float = 0.0
    prompt: str | None = None  # the permission prompt that stopped a non-autonomous agent


@runtime_checkable
class Agent(Protocol):
    """A program that does work or repairs (``axpipe.agents``): a coding CLI, a codemod, a fixer."""

    params_schema: type | None

    def run(self, request: AgentRequest) -> AgentOutcome:
        """Make one turn of changes in ``request.cwd``. Must not raise for a failing turn."""
        ...


# -- guards (axpipe.guards) -------------------------------------------------------------
#
# A guard looks at one change (the files an agent touched, before and after) and reports
# the ways it made a check pass without fixing anything: a test deleted or skipped, an
# assertion loosened, the error swallowed, the expected value hardcoded. The repair loop
# runs every guard on each iteration's diff; `axpipe guard` runs them on any change.
#
# How the repair loop (or any caller) uses them:
#
#     from axpipe.guarding import find_cheating, snapshot
#     before = snapshot(root)                  # a tree id of the whole working tree, untracked files too
#     ...the agent edits, may even commit...
#     findings = find_cheating(root, before, GuardContext(failure_output=tail, command=target),
#                              guards=recipe.repair.guards)    # None: every installed guard
#     if findings: revert to `before`, count the attempt, tell the agent findings[i].describe()
#
# `before` also makes the revert exact and limited to the iteration's edit:
# `git restore --source=<before> --worktree -- .` puts back every file it holds, and files
# the fix created are the paths in `git diff --name-only --diff-filter=A <before>` plus
# untracked ones not in `git ls-tree -r --name-only <before>`. find_cheating raises
# InputError (unknown base, not a repository), PluginError (unknown guard) or GuardError
# (a guard crashed: never read that as "honest"). Only the changed files are read and
# parsed, so the cost follows the size of the change, not of the repository.


class GuardClass(StrEnum):
    """What a cheating fix did. Built-in guards report these; a plugin may add its own."""

    DELETED_TEST = "deleted-test"              # a test removed, or renamed so it is not collected
    SKIPPED_TEST = "skipped-test"              # skipped, expected to fail, todo, or `.only` elsewhere
    LOOSENED_ASSERTION = "loosened-assertion"  # assertions removed, weakened, tolerance widened
    SWALLOWED_ERROR = "swallowed-error"        # the error caught and discarded
    HARDCODED_EXPECTED = "hardcoded-expected"  # the expected value returned, or a branch on the test input


@dataclass(frozen=True)
class Hunk:
    """One ``@@ -old_start,old_count +new_start,new_count @@`` block of a unified diff.

    ``lines`` keep their diff prefix: ``" "`` context, ``"-"`` removed, ``"+"`` added."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]

    def removed(self) -> list[tuple[int, str]]:
        """``(line number in the old file, text)`` of every removed line."""
        return [(number, text) for kind, number, text in self._walk() if kind == "-"]

    def added(self) -> list[tuple[int, str]]:
        """``(line number in the new file, text)`` of every added line."""
        return [(number, text) for kind, number, text in self._walk() if kind == "+"]

    def _walk(self) -> list[tuple[str, int, str]]:
        old, new = self.old_start, self.new_start
        walked: list[tuple[str, int, str]] = []
        for line in self.lines:
            kind, text = line[:1], line[1:]
            if kind == "-":
                walked.append(("-", old, text))
                old += 1
            elif kind == "+":
                walked.append(("+", new, text))
                new += 1
            else:
                old += 1
                new += 1
        return walked


@dataclass
class ChangedFile:
    """One file of a change, as a guard sees it.

    ``before``/``after`` are the whole old and new texts when they are known: always from a
    git repository, and from a patch when it applies to the files on disk (or is a new or
    deleted file). A patch alone knows only its hunks: then ``complete`` is False and the
    texts are None, and guards fall back to what the hunks show.
    """

    old_path: str | None      # None: the file is new
    new_path: str | None      # None: the file was deleted
    before: str | None
    after: str | None
    hunks: list[Hunk] = field(default_factory=list)
    complete: bool = True
    binary: bool = False

    @property
    def path(self) -> str:
        """The path findings name: the new path, or the old one for a deleted file."""
        return self.new_path or self.old_path or ""

    @property
    def status(self) -> str:
        """``added``, ``deleted``, ``renamed`` or ``modified``."""
        if self.old_path is None:
            return "added"
        if self.new_path is None:
            return "deleted"
        return "renamed" if self.old_path != self.new_path else "modified"

    def added_lines(self) -> list[tuple[int, str]]:
        return [pair for hunk in self.hunks for pair in hunk.added()]

    def removed_lines(self) -> list[tuple[int, str]]:
        return [pair for hunk in self.hunks for pair in hunk.removed()]


class RepoLookup(Protocol):
    """The repository around a change, for guards that need files the change did not touch
    (the test that asserts what a changed function returns). Reads the new state."""

    def read(self, path: str) -> str | None:
        """The text of ``path`` (relative to the root) as it is now, or None."""
        ...

    def files_mentioning(self, word: str, globs: tuple[str, ...]) -> list[str]:
        """Paths matching one of ``globs`` (``**/test_*.py``: ``**`` spans folders, ``*``
        does not) whose text contains ``word`` as a whole word."""
        ...


@dataclass
class ChangeSet:
    """Everything that changed, with where it came from (``git diff <rev>``, ``patch x.diff``)."""

    files: list[ChangedFile]
    source: str
    root: Path | None = None
    lookup: RepoLookup | None = None
    notes: list[str] = field(default_factory=list)
    """What the guards could not see (a patch that does not apply, an unreadable file)."""

    def matching(self, suffixes: tuple[str, ...]) -> list[ChangedFile]:
        """The changed files whose path (old or new) ends with one of ``suffixes``."""
        return [item for item in self.files if not item.binary and
                any((path or "").endswith(suffixes) for path in (item.old_path, item.new_path))]


@dataclass
class GuardContext:
    """What the caller knows about the failure the change was meant to fix.

    All optional: without it guards still judge the change from the diff and the
    repository's tests. With it, the hardcoded-expected and swallowed-error classes also
    see the values and errors the failing run expected."""

    failure_output: str = ""
    """The failing run's output (its tail is enough): pytest/unittest/jest assertion lines."""
    failing_tests: list[str] = field(default_factory=list)
    """Ids of the failing tests: ``tests/test_x.py::test_y`` or ``path > describe > title``."""
    test_files: list[str] = field(default_factory=list)
    """Repository-relative test files the failure names (read in their current state)."""
    command: str | None = None
    """The target command, for evidence only."""


@dataclass(frozen=True, order=True)
class GuardFinding:
    """One thing a guard caught. ``to_json`` is the pinned shape (DESIGN §13)."""

    file: str
    line: int
    """1-based line in the new file; in the old file when the thing is gone (a deleted test)."""
    guard: str
    """The guard class (a :class:`GuardClass` value for the built-ins)."""
    evidence: str
    plugin: str = ""
    """The guard plugin that reported it (``python``, ``javascript``); not part of the JSON."""

    def to_json(self) -> dict[str, Any]:
        return {"guard": self.guard, "file": self.file, "line": self.line, "evidence": self.evidence}

    def describe(self) -> str:
        """One line for people and agents: ``tests/test_x.py:12: skipped-test: ...``."""
        return f"{self.file}:{self.line}: {self.guard}: {self.evidence}"


@runtime_checkable
class Guard(Protocol):
    """A repair guard (``axpipe.guards``): finds cheating fixes in a change.

    ``check`` must not raise for a file it cannot parse (note it in ``changes.notes`` and
    judge what it can): an exception is reported as an error of the guard run, never
    read as "nothing found"."""

    params_schema: type | None
    """Dataclass of the guard's parameters, or None when it takes none."""

    suffixes: tuple[str, ...]
    """File name endings the guard inspects (``.py``); it is not run when none changed,
    and only these files are read."""

    def describe(self) -> str:
        """What the guard covers, in one line (``plugins list``, docs)."""
        ...

    def check(self, changes: ChangeSet, context: GuardContext) -> list[GuardFinding]:
        """Every finding in ``changes``; an empty list when the change is honest."""
        ...


# -- reviewers (axpipe.reviewers) --------------------------------------------------------


@dataclass
class ReviewRequest:
    """What a reviewer plugin needs to build the command of one review."""

    name: str
    """The reviewer's folder name in the round (``round-<n>/<name>/``)."""
    command: CommandSpec | None
    """The recipe's ``command``, or None to use the plugin's own (presets)."""
    model: str | None
    params: Any
    prompt: str
    """The rendered prompt."""
    prompt_file: Path
    """Where the rendered prompt is written (also in ``AXPIPE_PROMPT_FILE``)."""
    workspace: Path


@dataclass
class ReviewInvocation:
    """How to run one review: the round runner runs it and records what happened."""

    command: CommandSpec
    timeout: float
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Reviewer(Protocol):
    """A review CLI (``axpipe.reviewers``). The plugin only says how to call the CLI and in
    which format it answers; the round runner runs it, keeps its output, and reads the
    verdict itself (:mod:`axpipe.verdicts`), so a plugin cannot declare a review successful."""

    params_schema: type | None

    def output_format(self, params: Any) -> str:
        """``"text"`` (kept as ``stdout.txt``) or ``"jsonl"`` (an event stream, ``stdout.jsonl``)."""
        ...

    def prompt_template(self, params: Any) -> str:
        """The jinja2 source of the prompt (see docs/reviews.md for its variables)."""
        ...

    def invocation(self, request: ReviewRequest) -> ReviewInvocation:
        """The command (and stdin, environment, timeout) that runs the review."""
        ...


# -- test adapters (axpipe.test_adapters) -----------------------------------------------


@dataclass(frozen=True)
class NamedTest:
    """A test named by a regression: the repository file and the runner's exact full name."""

    file: str
    full_name: str


class NamedTestStatus(StrEnum):
    """What happened to a named test in one run."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    MISSING = "missing"


@dataclass
class NamedTestResult:
    """One named test's result: its status and how many times it was executed (exactly 1 is
    what a regression needs; more means the name is ambiguous)."""

    test: NamedTest
    status: NamedTestStatus
    executions: int
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.test.file, "fullName": self.test.full_name, "status": self.status.value,
                "executions": self.executions, "note": self.note}


@dataclass
class TestRunRequest:
    """Run the files of ``tests`` once, with retries disabled, in ``workspace``."""

    __test__ = False  # not a pytest test class

    workspace: Path
    tests: list[NamedTest]
    timeout: float
    artifacts_dir: Path
    on_output: Callable[[bytes], None] | None = None


@dataclass
class TestRunReport:
    """Per named test, what happened; ``error`` when the runner could not run at all."""

    __test__ = False

    results: list[NamedTestResult]
    commands: list[str] = field(default_factory=list)
    error: str | None = None
    output_tail: str = ""


@runtime_checkable
class TestAdapter(Protocol):
    """Runs named tests exactly once (``axpipe.test_adapters``): no retries, no reruns, no
    random order, and matches full names exactly (never by prefix)."""

    suffixes: tuple[str, ...]
    """File suffixes this adapter runs (``.py``); picks the adapter for a regression file."""

    def run(self, request: TestRunRequest) -> TestRunReport:
        """Run the named tests' files once and report every named test (never raises for a
        failing test; ``error`` for a runner that cannot start)."""
        ...


# -- receipt verifiers (axpipe.receipt_verifiers) ---------------------------------------


@dataclass
class ReceiptRequest:
    """Verify the receipts under ``root`` against the repository at ``workspace``."""

    root: Path
    workspace: Path
    reviewers: list[str] | None = None
    """Required reviewers; None: every reviewer folder of the final round (at least one)."""
    test_dir: str = "tests"
    test_adapter: str | None = None
    """Test adapter name; None: chosen per regression file by its suffix."""
    timeout: float = 600.0
    artifacts_dir: Path | None = None
    on_output: Callable[[bytes], None] | None = None


@dataclass
class ReceiptProblem:
    """One reason the receipts do not verify, with the round, reviewer and finding involved."""

    rule: str
    message: str
    round: int | None = None
    reviewer: str | None = None
    finding: str | None = None

    def where(self) -> str:
        parts = []
        if self.round is not None:
            parts.append(f"round-{self.round}" + (f"/{self.reviewer}" if self.reviewer else ""))
        elif self.reviewer:
            parts.append(self.reviewer)
        if self.finding:
            parts.append(f"finding {self.finding}")
        return " ".join(parts)

    def render(self) -> str:
        where = self.where()
        return f"[{self.rule}] {where + ': ' if where else ''}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "round": self.round, "reviewer": self.reviewer, "finding": self.finding,
                "message": self.message}


@dataclass
class ReceiptReport:
    """The verifier's answer: every problem found (none means verified) and what it looked at."""

    problems: list[ReceiptProblem]
    head: str | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    tests: list[NamedTestResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@runtime_checkable
class ReceiptVerifier(Protocol):
    """Checks a folder of review receipts (``axpipe.receipt_verifiers``)."""

    def verify(self, request: ReceiptRequest) -> ReceiptReport:
        """Every problem with the receipts; never raises for receipts that do not verify."""
        ...


# -- what a check kind may declare about the recipe around it (optional attributes) ------
#
# A CheckKind gets only its params. Two optional class attributes let a kind take part in
# the recipe it is used in (see docs/plugins.md and docs/gates.md):
#
#     recipe_defaults: ClassVar[dict[str, str]] = {"scope": "scope"}
#         param -> top-level recipe key. When a check leaves the param out (None), the
#         recipe's value fills it as the recipe is validated, before the contract is
#         frozen; a param still None afterwards is a config error. (git-scope)
#
#     medium: ClassVar[str] = "browser"
#         the kind checks the running application in a browser; a `found` criterion whose
#         checker has this kind is reported as `browser` in qa-report.md.
#
# QA and judge units are reviewers (Reviewer above) declared with `qa: true` or
# `judge: true`; their verdict is read by axpipe.trace_verdicts from their output's last
# event, never taken from the plugin.
