"""Plan validation (DESIGN §5): the rules a goal's plan must pass before any work.

Each rule is its own function taking the goal and a :class:`PlanContext` and reporting
problems through ``add(path, message)``; every message names the criterion or check it is
about. All rules run, so every problem is reported at once; the plan is refused (exit 2)
when any is found, before anything runs.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from axpipe import git, templates
from axpipe.goal import contract
from axpipe.process import command_text
from axpipe.recipe import schema

Add = Callable[[str, str], None]

PLAN_LIMIT = 8192
PLAN_WARNING = 7168

# First words a shell runs without looking them up on PATH: POSIX built-ins (special and
# regular) and the bash ones a check is likely to start with.
_SHELL_WORDS = {
    "!", "case", "for", ".", ":", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set",
    "shift", "times", "trap", "unset", "alias", "cd", "command", "false", "getopts", "hash", "read", "true", "type",
    "ulimit", "umask", "unalias", "wait", "test", "[", "[[", "source", "local", "declare", "pushd", "popd",
}
# Reserved words that open a simple command (`{ cmd; }`, `until cmd; do cmd; done`): the
# command after them is the one the rules judge. A segment that starts with a closing word
# holds only redirections of the compound command (`} 2>&1`).
_OPENING_WORDS = {"{", "if", "then", "elif", "else", "while", "until", "do", "time"}
_CLOSING_WORDS = {"}", "fi", "done", "esac"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "|&", ";;", "(", ")"}
_FILE_TESTS = {"-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-p", "-S", "-b", "-c"}
_INSPECTION = {"ls", "cat", "stat"}
_ASSERTION_WORDS = {"git", "test", "[", "[[", "grep", "wc", "head", "echo", "read", "!", "]", "]]"}


class PlanContext:
    """What the rules need to know about the workspace the plan will run in."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    @cached_property
    def remotes(self) -> set[str]:
        names = {"origin", "upstream"}
        if self.root is None:
            return names
        completed = git.text(self.root, "remote")
        if completed.returncode == 0:
            names.update(line.strip() for line in completed.stdout.splitlines() if line.strip())
        return names


def _check_path(index: int, check: schema.CheckSpec) -> str:
    return f"goal.checks[{index}]"


def _label(check: schema.CheckSpec) -> str:
    return f"check '{check.id}'"


def _commands(goal: schema.Goal) -> Iterator[tuple[int, schema.CheckSpec, str]]:
    for index, check in enumerate(goal.checks):
        if check is None or check.command is None:
            continue
        yield index, check, command_text(check.command)  # type: ignore[arg-type]


def _segments(command: str) -> list[list[str]] | None:
    """The command split into simple commands at ``&&``, ``||``, ``;`` and ``|``."""
    try:
        return _split(command)
    except ValueError:
        return None


def _split(command: str) -> list[list[str]]:
    """:func:`_segments`, raising shlex's ``ValueError`` (unbalanced quotes) instead."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            segments.append([])
        elif token in _OPENING_WORDS and not segments[-1]:
            continue
        else:
            segments[-1].append(token)
    return [segment for segment in segments if segment and segment[0] not in _CLOSING_WORDS]


def _first_word(segment: list[str]) -> str | None:
    for token in segment:
        if token == "!" or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", token):
            continue
        return token
    return None


def first_program(command: str | list[Any]) -> str | None:
    """The first program ``command`` runs, the one looked up on PATH or in the project.

    A list runs as it is (no shell): its first item. A shell string: the first word (after
    ``!`` and ``VAR=`` prefixes) of the first simple command that is not a shell built-in,
    so ``ulimit -t 60; pytest`` is ``pytest`` and a misspelling after a built-in is still
    found; None when only built-ins run. Raises ``ValueError`` when the quotes do not balance.
    """
    if not isinstance(command, str):
        return str(command[0]) if command else None
    return next((first for segment in _split(command)
                 if (first := _first_word(segment)) is not None and first not in _SHELL_WORDS), None)


def program_problem(word: str, root: Path, *, search_path: str | None = None, in_project: bool = True) -> str | None:
    """Why the program ``word`` cannot be started from ``root`` (to follow ``'word' ``), or
    None when it can. A path (``./fix.sh``, ``/opt/x``) must be a file, relative ones from
    ``root``; a bare word is looked up on ``search_path`` (the PATH the program will run
    with; None: axpipe's own) and, with ``in_project``, as a file in ``root`` too."""
    if "/" in word:
        candidate = Path(word) if Path(word).is_absolute() else root / word
        return None if candidate.is_file() else "does not exist in the project"
    if shutil.which(word, path=search_path) is not None or (in_project and (root / word).is_file()):
        return None
    return "is not a command on PATH or in the project" if in_project else "is not on PATH"


def agent_program_problem(params: Any, root: Path) -> str | None:
    """Why the agent's ``command`` cannot start in ``root`` (a message for its config path),
    or None when it can or the agent runs no command of its own (only agents with a
    ``command`` parameter are looked at: the command agent and its presets).

    The program is looked up as the agent will run it: with the PATH of the agent's own
    ``env`` when it sets one (:func:`axpipe.process.run` adds it to axpipe's environment),
    and a bare word only on PATH, as the shell or the process runner looks it up."""
    command = getattr(params, "command", None)
    if not isinstance(command, (str, list)):
        return None
    words: list[Any] = command if isinstance(command, list) else []
    if isinstance(command, str):
        try:  # a string runs through the shell: one it cannot parse would fail every turn
            words = shlex.split(command)
        except ValueError as error:
            return f"not a valid shell command ({error}): {redact(command)!r}"
    if not words:
        return "empty command"
    program = first_program(command)
    if program is None:
        return None
    env = getattr(params, "env", None)
    search_path = env["PATH"] if isinstance(env, dict) and isinstance(env.get("PATH"), str) else None
    problem = program_problem(program, root, search_path=search_path, in_project=False)
    return f"the agent's program '{program}' {problem}" if problem else None


# -- the rules ---------------------------------------------------------------------------


def uncovered_acceptance(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """Every `closes` criterion is proved by some check."""
    known_checks = {check.id for check in goal.checks if check is not None}
    covered = {acceptance_id for check in goal.checks if check is not None for acceptance_id in check.acceptance}
    for acceptance_id, criterion in goal.acceptance.items():
        if criterion is None or criterion.tag != "closes":
            continue
        if criterion.check in known_checks:
            continue
        if acceptance_id not in covered:
            add(f"goal.acceptance.{acceptance_id}",
                f"acceptance id not covered by any check: criterion {acceptance_id} is `closes`, so a check must "
                "list it in `acceptance` (or name the check here with `check: <id>`)")


def unknown_commands(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """A check's program exists on PATH or in the project: a typo costs a plan round, not a run."""
    if context.root is None:
        return
    root = context.root
    for index, check, command in _commands(goal):
        segments = _segments(command)
        if segments is None:
            add(f"{_check_path(index, check)}.command", f"{_label(check)}: unbalanced quotes in {redact(command)!r}")
            continue
        word = first_program(command)
        problem = program_problem(word, root) if word is not None else None
        if problem is not None:
            add(f"{_check_path(index, check)}.command", f"{_label(check)}: '{word}' {problem} ({redact(command)!r})")


def _is_presence(segment: list[str], alone: bool) -> bool:
    word = _first_word(segment)
    if word in ("test", "[", "[["):
        return any(token in _FILE_TESTS for token in segment[1:])
    if word in _INSPECTION:
        return True
    return word == "grep" and alone and any(token == "-q" or re.fullmatch(r"-[a-zA-Z]*q[a-zA-Z]*", token)
                                            for token in segment[1:])


def presence_checks(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """A check must assert behaviour, not that a file exists or can be printed."""
    for index, check, command in _commands(goal):
        segments = _segments(command)
        if not segments:
            continue
        if all(_is_presence(segment, alone=len(segments) == 1) for segment in segments):
            add(f"{_check_path(index, check)}.command",
                f"{_label(check)}: a bare presence or inspection check ({redact(command)!r}) proves nothing about "
                "behaviour; run a command that asserts the outcome and exits non-zero when it does not hold")


def _words_in(command: str) -> set[str]:
    """Program names of every simple command, including inside ``$(...)`` and backticks."""
    words: set[str] = set()
    inner = re.findall(r"\$\(([^()]*)\)|`([^`]*)`", command)
    pieces = [command, *[left or right for left, right in inner]]
    for piece in pieces:
        for segment in _segments(re.sub(r"\$\([^()]*\)|`[^`]*`", "X", piece)) or []:
            word = _first_word(segment)
            if word is not None:
                words.add(word)
    return words


def path_filtered_git_log(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """A non-empty `git log A..B -- paths` proves a commit matched, not that the change is scoped."""
    for index, check, command in _commands(goal):
        match = re.search(r"git\s+log\b[^|;&)`]*?\s--\s+\S", command)
        if not match:
            continue
        if _words_in(command) <= _ASSERTION_WORDS:
            add(f"{_check_path(index, check)}.command",
                f"{_label(check)}: an isolated, path-filtered `git log` assertion ({redact(command)!r}) does not "
                "exclude unrelated files or commits; use a `git-scope` check, which inspects every changed path "
                "of every commit")


_RANGE = re.compile(r"([^\s.'\"]+?)\.{2,3}([^\s'\"]*)")


def _ref_candidates(goal: schema.Goal) -> Iterator[tuple[str, str, str]]:
    for index, check in enumerate(goal.checks):
        if check is None:
            continue
        path = _check_path(index, check)
        texts = []
        if check.command is not None:
            texts.append(command_text(check.command))  # type: ignore[arg-type]
        params = contract.check_description(check, None)["params"]
        if isinstance(params, dict) and isinstance(params.get("baseline"), str):
            yield path, check.id, params["baseline"]
        for text in texts:
            for left, right in _RANGE.findall(text):
                yield path, check.id, left
                if right:
                    yield path, check.id, right
            for segment in _segments(text) or []:
                for token in _git_revisions(segment):
                    yield path, check.id, token


_REVISION_COMMANDS = {"diff", "log", "merge-base", "rev-list", "rev-parse", "show", "cherry", "range-diff"}


def _git_revisions(segment: list[str]) -> list[str]:
    """The revision arguments of a `git <diff|log|...>` simple command (up to `--`)."""
    if _first_word(segment) != "git":
        return []
    words = segment[segment.index("git") + 1:]
    if not words or words[0] not in _REVISION_COMMANDS:
        return []
    revisions = []
    for word in words[1:]:
        if word == "--":
            break
        if not word.startswith("-"):
            revisions.append(word)
    return revisions


def _remote_of(ref: str, remotes: set[str]) -> str | None:
    """The remote a revision resolves to a remote-tracking ref of, or None.

    Follows git's lookup (gitrevisions(7)): ``X`` is tried as ``refs/X``, ..., ``refs/remotes/X``
    and ``refs/remotes/X/HEAD``, so ``refs/remotes/origin/main``, ``remotes/origin/main``,
    ``origin/main`` and a bare ``origin`` (its default branch) are all remote-tracking, with
    or without a suffix (``~2``, ``^{commit}``, ``@{1}``); ``@{u}``/``@{push}`` name one too.
    """
    ref = ref.strip("'\"")
    if re.search(r"@\{(?:u|upstream|push)\}", ref, re.IGNORECASE):
        return "upstream"
    name = re.split(r"[~^:]|@\{", ref, maxsplit=1)[0]
    if name.startswith("refs/"):
        name = name[len("refs/"):]
        if not name.startswith("remotes/"):
            return None  # refs/heads/..., refs/tags/...: spelled out, and not a remote's
    if name.startswith("remotes/"):
        remote = name.split("/")[1]
        return remote or "remote"
    head = name.split("/", 1)[0]
    return head if head in remotes else None


def remote_tracking_baseline(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """The baseline is the HEAD at plan time ({BASELINE}), not a remote-tracking ref."""
    objective = goal.objective.lower() if goal.objective else ""
    seen: set[tuple[str, str]] = set()
    for path, check_id, ref in _ref_candidates(goal):
        remote = _remote_of(ref, context.remotes)
        if remote is None or (path, remote) in seen:
            continue
        seen.add((path, remote))
        if re.search(rf"\b{re.escape(remote.lower())}\b", objective):
            continue
        add(path, f"check '{check_id}': baseline '{ref}' is a remote-tracking ref and the objective does not "
                  f"name the remote '{remote}'; use {{BASELINE}} (the HEAD when the plan is made)")


# A documented list (docs/recipes.md): detect-secrets and gitleaks were considered; the
# former costs ~200 ms to import on every run and flags ordinary commands as high-entropy.
SECRET_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("URL with user info", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.I)),
    ("URL with a token as user", re.compile(r"\b[a-z][a-z0-9+.-]*://[A-Za-z0-9_-]{20,}@", re.I)),
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("API key", re.compile(
        r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|sk_live_[0-9A-Za-z]{20,}|AIza[0-9A-Za-z_-]{35})")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("password or secret", re.compile(
        r"(?i)(?:\b|_)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)"
        r"\s*[:=]\s*['\"]?(?![$%{<])[^\s'\"]{6,}")),
    ("password on the command line", re.compile(
        r"(?i)--(?:password|passwd|token|secret|api-key)(?:=|\s+)['\"]?(?![$%{<])[^\s'\"]{4,}")),
]


def find_credentials(text: str) -> list[str]:
    """The kinds of credential ``text`` contains (never the credential itself)."""
    return [name for name, pattern in SECRET_PATTERNS if pattern.search(text)]


def redact(text: str) -> str:
    """``text`` with every credential replaced, for messages that quote a command."""
    for _, pattern in SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text


def _plan_texts(goal: schema.Goal) -> Iterator[tuple[str, str, str]]:
    """Each text of the plan: its config path, what a message names it by (a check's id,
    DESIGN §5: "every problem listed with its criterion or check id"), and the text."""
    yield "goal.objective", "", goal.objective or ""
    for key, item in goal.acceptance.items():
        if item is not None:
            yield f"goal.acceptance.{key}.text", f"criterion {key}: ", item.text
    for index, source in enumerate(goal.sources):
        if source is not None:
            yield f"goal.sources[{index}].reference", "", source.reference
    for index, check in enumerate(goal.checks):
        if check is None:
            continue
        description = contract.check_description(check, None)
        label = f"{_label(check)}: "
        for key in ("command", "purpose", "environment"):
            value = description[key]
            if isinstance(value, list):
                value = " ".join(value)
            if value:
                yield f"goal.checks[{index}].{key}", label, str(value)
        yield f"goal.checks[{index}].params", label, json.dumps(description["params"], default=str)


def credentials(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """No credential in the plan text or in a command: they belong to the credential store."""
    for path, label, text in _plan_texts(goal):
        found = find_credentials(text)
        if found:
            add(path, f"{label}contains a credential ({', '.join(found)}); keep credentials in the project's "
                      "credential mechanism (environment variables, a secrets manager), never in the plan or its "
                      "commands")


_GLOB = re.compile(r"[*?\[]")


def source_path_globs(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """Source paths are paths, not patterns: the fingerprint reads them literally (git's
    literal pathspecs, a plain walk), so ``src/*.py`` would name one file that does not
    exist and every change to ``src/`` would go unnoticed."""
    for index, source in enumerate(goal.source_paths if isinstance(goal.source_paths, list) else []):
        if isinstance(source, str) and _GLOB.search(source):
            add(f"goal.source_paths[{index}]",
                f"{source!r} is a pattern, and source paths are read literally: name the folder or the files "
                f"(`{_glob_free(source)}` covers every file below it)")


def _glob_free(source: str) -> str:
    """The folder above the first glob character of ``source`` (``.`` for none)."""
    head = _GLOB.split(source, maxsplit=1)[0]
    folder = head.rsplit("/", 1)[0] if "/" in head else ""
    return folder or "."


def missing_source_paths(root: Path, source_paths: list[str]) -> list[tuple[int, str]]:
    """The source paths (index, path) that exist neither in the work tree nor in git's index.

    Not refused: a goal may be to create them, and the fingerprint counts a missing path
    (its appearance changes the fingerprint). But a typo (`scr/`) would leave the real
    source uncovered, so the plan warns about each one."""
    import os

    missing = [(index, source) for index, source in enumerate(source_paths)
               if not os.path.lexists(root / source)]
    if not missing:
        return []
    completed = git.run(root, "ls-files", "-z", "--cached", "--", *(source for _, source in missing),
                        literal_pathspecs=True)
    if completed.returncode != 0:
        return missing  # outside git: only the tree counts
    tracked = git.names(completed.stdout)
    return [(index, source) for index, source in missing
            if not any(name == os.path.normpath(source) or name.startswith(os.path.normpath(source) + "/")
                       for name in tracked)]


def render(goal: schema.Goal, *, goal_id: str, baseline: str | None) -> str:
    """The plan as a person reads it: Markdown with the assurance JSON."""
    canonical, _ = contract.build(goal, baseline or "0" * 40)
    visible = [check for check in goal.checks if check is not None and not check.held_out]
    return templates.render_file(
        "plan.md.j2", goal=goal, goal_id=goal_id, baseline=baseline, checks=visible,
        held_out=[check.id for check in goal.checks if check is not None and check.held_out],
        command_text=command_text,
        assurance=json.dumps(canonical, indent=2, sort_keys=True, ensure_ascii=False))


def _renderable(goal: schema.Goal) -> bool:
    """False when values failed their type checks (already reported); nothing to render then."""
    return (isinstance(goal.objective, str) and isinstance(goal.source_paths, list)
            and all(item is not None for item in goal.acceptance.values())
            and all(check is not None and check.id is not None for check in goal.checks)
            and all(source is not None for source in goal.sources))


def size_bound(goal: schema.Goal) -> int:
    """An upper bound of the rendered plan's size, without rendering it.

    The Markdown repeats only strings the assurance JSON holds, plus a little markup per
    item: twice the JSON and that markup bound the whole. Rendering needs jinja2 (~80 ms
    to import), so the exact size is taken only when this bound comes near the limits.
    """
    canonical, _ = contract.build(goal, "0" * 40)
    assurance = len(json.dumps(canonical, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    items = len(goal.acceptance) + len(goal.sources) + len(goal.checks)
    return 2 * assurance + 120 * items + 400


def exact_size_needed(goal: schema.Goal) -> bool:
    return size_bound(goal) > PLAN_WARNING


def plan_size(goal: schema.Goal, context: PlanContext, add: Add) -> None:
    """The rendered plan fits in 8,192 bytes (aim below 7,168)."""
    if not _renderable(goal) or not exact_size_needed(goal):
        return
    size = len(render(goal, goal_id="x" * 24, baseline="0" * 40).encode("utf-8"))
    if size > PLAN_LIMIT:
        add("goal", f"the rendered plan is {size} bytes, over the {PLAN_LIMIT}-byte limit; shorten repeated prose "
                    "and keep every acceptance id and check")


RULES: list[Callable[[schema.Goal, PlanContext, Add], None]] = [
    uncovered_acceptance, unknown_commands, presence_checks, path_filtered_git_log,
    remote_tracking_baseline, credentials, source_path_globs, plan_size,
]


def check_plan(goal: schema.Goal, root: Path | None, add: Add) -> None:
    """Apply every plan rule to ``goal``."""
    context = PlanContext(root)
    for rule in RULES:
        rule(goal, context, add)


def size_warning(rendered: str) -> str | None:
    """A warning when the plan is over the comfortable size but under the limit."""
    size = len(rendered.encode("utf-8"))
    if PLAN_WARNING < size <= PLAN_LIMIT:
        return f"the rendered plan is {size} bytes; aim below {PLAN_WARNING} (the limit is {PLAN_LIMIT})"
    return None

