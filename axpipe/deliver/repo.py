"""The git commands delivery runs: text out, a :class:`DeliverError` naming the command when one fails."""

from __future__ import annotations

import subprocess
from pathlib import Path

from axpipe import git
from axpipe.errors import AxpipeError, ExitCode

# Delivery never asks a person for anything: no credential prompt, no editor, no pager.
QUIET = {"GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0",
         "GCM_INTERACTIVE": "never", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


# The runner's own local steps (switching to the task branch, moving it to its commit) run no
# hook of the project: a post-checkout or reference-transaction hook could change the tree or
# refs after they were checked. The push keeps the project's hooks (pre-push): a local policy.
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


class DeliverError(AxpipeError):
    """A delivery step could not be done (exit 1); the message says which and why."""

    exit_code = ExitCode.FAILED


def run(root: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    return git.run(root, *args, env={**QUIET, **(env or {})}, input=input, timeout=timeout)


def text(root: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    """The command's stripped output; a failure raises :class:`DeliverError` with git's last line."""
    completed = run(root, *args, env=env, input=input)
    if completed.returncode != 0:
        named = args[len(NO_HOOKS):] if args[:len(NO_HOOKS)] == NO_HOOKS else args
        raise DeliverError(f"git {' '.join(named[:2])} failed: {last_line(completed.stderr)}")
    return completed.stdout.decode("utf-8", "surrogateescape").strip()


def last_line(output: bytes) -> str:
    lines = [line for line in output.decode(errors="replace").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no message"


def commit_of(root: Path, revision: str) -> str | None:
    """The commit ``revision`` names, or None."""
    if not revision or revision.startswith("-"):
        return None
    completed = run(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    return completed.stdout.decode().strip() if completed.returncode == 0 else None


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (``main``), or None when detached."""
    completed = run(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    return completed.stdout.decode().strip() if completed.returncode == 0 else None


def valid_branch(root: Path, name: str) -> bool:
    return run(root, "check-ref-format", "--branch", name).returncode == 0 and not name.startswith("-")
