"""Sweeps (``axpipe run -m``): an id, a record of every job's outcome, a git worktree and
branch per job under a parallel launcher, and ``--resume`` (DESIGN §12).

A sweep's record lives in ``.axpipe/sweeps/<id>/``: ``sweep.json`` (the arguments it ran
with, the commit its jobs start from) and one ``job-<n>.json`` per finished job, written
by the job itself. Jobs of a parallel launcher (joblib, submitit, Ray) run in other
processes, so these files, not return values, are how the sweep learns each job's end;
they are also what ``--resume`` reads to run only the jobs that did not finish.

Under a parallel launcher each job works in ``.axpipe/worktrees/<sweep>/<n>`` on branch
``axpipe/<sweep>/<n>``, made from the commit the sweep started at; the user's checkout is
never written (the worktrees and records are inside its ``.axpipe/``, which git ignores).
What a job changed is committed on its branch when it ends. The basic launcher runs one
job after another in the user's checkout, as a single run does.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from axpipe import git, workspace
from axpipe.errors import AxpipeError, ExitCode, InputError
from axpipe.records import record

_MULTIRUN = ("-m", "--multirun")
# What may differ on --resume: how jobs are launched, not what they run.
_LAUNCHER_KEYS = ("hydra/launcher=", "hydra.launcher.", "+hydra.launcher.", "++hydra.launcher.")
# Worst first, for the sweep's exit code (DESIGN §12: the worst of its jobs').
SEVERITY = (ExitCode.INTERRUPTED, ExitCode.INPUT_ERROR, ExitCode.LOCKED, ExitCode.ENVIRONMENT, ExitCode.FAILED,
            ExitCode.IDLE_TIMEOUT, ExitCode.BLOCKED, ExitCode.BUDGET_LIMITED, ExitCode.NOT_TERMINAL, ExitCode.OK)


@record
class Sweep:
    """One ``-m`` invocation: its id, where it runs, and the jobs a resumed sweep already finished."""

    id: str
    root: Path
    base: str | None
    parallel: bool
    done: dict[int, dict[str, Any]]
    arguments: list[str]


def is_multirun(arguments: list[str]) -> bool:
    return any(item in _MULTIRUN for item in arguments)


def launcher(arguments: list[str]) -> str:
    """The launcher the arguments choose (Hydra's ``basic`` unless ``hydra/launcher=`` says)."""
    chosen = [item.partition("=")[2] for item in arguments if item.startswith("hydra/launcher=")]
    return chosen[-1] if chosen else "basic"


def comparable(arguments: list[str]) -> list[str]:
    """The arguments that say what a sweep runs (recipe, overrides), without how it is launched."""
    return [item for item in arguments if item not in _MULTIRUN and not item.startswith(_LAUNCHER_KEYS)]


def folder(root: Path, sweep_id: str) -> Path:
    return workspace.state_dir(root) / "sweeps" / sweep_id


def begin(root: Path, arguments: list[str], resume: str | None) -> Sweep:
    """Start a sweep, or take up the one ``resume`` names (refused, exit 2, when its recipe
    or overrides differ or it does not exist)."""
    parallel = launcher(arguments) != "basic"
    wanted = comparable(arguments)
    if resume is not None:
        path = folder(root, resume) / "sweep.json"
        if not resume or "/" in resume or not path.is_file():
            known = sorted(item.name for item in path.parent.parent.iterdir()) if path.parent.parent.is_dir() else []
            raise InputError(f"--resume: no sweep {resume!r} in {path.parent.parent}"
                             + (f"; sweeps here: {', '.join(known[-5:])}" if known else ""))
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored["arguments"] != wanted:
            raise InputError(f"--resume {resume}: the sweep ran with `{' '.join(stored['arguments'])}`, this command "
                             f"has `{' '.join(wanted)}`; a resumed sweep must run the same recipe and overrides "
                             "(start a new sweep without --resume)")
        base = stored.get("base")
        if parallel and base is None:
            raise InputError(f"--resume {resume}: the sweep started without a commit to give its jobs worktrees; "
                             "resume it with the basic launcher")
        return Sweep(resume, root, base, parallel, finished(root, resume), wanted)
    base = _head(root)
    if parallel and base is None:
        raise InputError(f"hydra/launcher={launcher(arguments)}: jobs of a parallel sweep work in git worktrees of "
                         f"their own, made from HEAD, and {root} is not a git checkout with a commit")
    # Nothing is written yet: a sweep refused before its first job leaves the checkout as it was.
    return Sweep(f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}", root, base, parallel, {}, wanted)


def finished(root: Path, sweep_id: str) -> dict[int, dict[str, Any]]:
    """The jobs of a sweep that ended (an interrupted job did not), by job number."""
    done = {}
    for path in folder(root, sweep_id).glob("job-*.json"):
        job = json.loads(path.read_text(encoding="utf-8"))
        if job["exit_code"] != ExitCode.INTERRUPTED:
            done[int(job["num"])] = job
    return done


def record_job(sweep: Sweep, num: int, job: dict[str, Any]) -> None:
    """Record a job's end (and, with the first job, the sweep itself)."""
    path = folder(sweep.root, sweep.id)
    if not (path / "sweep.json").is_file():
        workspace.ensure_state_dir(sweep.root)
        path.mkdir(parents=True, exist_ok=True)
        _write(path / "sweep.json", {"id": sweep.id, "arguments": sweep.arguments, "base": sweep.base})
    _write(path / f"job-{num}.json", {"num": num, **job})


def jobs(sweep: Sweep) -> list[dict[str, Any]]:
    """Every recorded job of the sweep, in job order."""
    found = [json.loads(path.read_text(encoding="utf-8"))
             for path in folder(sweep.root, sweep.id).glob("job-*.json")]
    return sorted(found, key=lambda job: int(job["num"]))


def worktree(sweep: Sweep, num: int) -> tuple[Path, str]:
    """The job's worktree and branch, made on first use (a resumed job continues in its own)."""
    path = workspace.state_dir(sweep.root) / "worktrees" / sweep.id / str(num)
    branch = f"axpipe/{sweep.id}/{num}"
    path.parent.mkdir(parents=True, exist_ok=True)
    # One `git worktree add` at a time: jobs of a parallel launcher start together.
    with (path.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (path / ".git").exists():
            exists = _git(sweep.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0
            added = _git(sweep.root, "worktree", "add", "-q", str(path), branch) if exists else \
                _git(sweep.root, "worktree", "add", "-q", "-b", branch, str(path), str(sweep.base))
            if added.returncode != 0:
                raise AxpipeError(f"sweep {sweep.id} job {num}: cannot make its worktree {path}: "
                                  f"{added.stderr.strip()}", exit_code=ExitCode.ENVIRONMENT)
    return path, branch


def commit_work(path: Path, sweep: Sweep, num: int, overrides: list[str]) -> str | None:
    """Commit what the job changed in its worktree on its branch; the commit, or None when
    it changed nothing. axpipe's own ``.axpipe/`` stays out (git ignores it)."""
    _git(path, "add", "-A")
    if _git(path, "diff", "--cached", "--quiet").returncode == 0:
        return None
    subject = f"axpipe sweep {sweep.id} job {num}: {' '.join(overrides)}"
    identity = {"GIT_AUTHOR_NAME": "axpipe", "GIT_AUTHOR_EMAIL": "axpipe@localhost",
                "GIT_COMMITTER_NAME": "axpipe", "GIT_COMMITTER_EMAIL": "axpipe@localhost"}
    committed = _git(path, "commit", "-q", "--no-verify", "-m", subject, env={**os.environ, **identity})
    if committed.returncode != 0:
        return None
    return _git(path, "rev-parse", "HEAD").stdout.strip()


def worst(codes: list[int]) -> int:
    """The sweep's exit code: the worst of its jobs' (order in :data:`SEVERITY`)."""
    rank: dict[int, int] = {int(code): index for index, code in enumerate(SEVERITY)}
    return min(codes, key=lambda code: rank.get(code, 0), default=0)


def _head(root: Path) -> str | None:
    if not workspace.is_git_repository(root):
        return None
    found = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return found.stdout.strip() if found.returncode == 0 else None


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return git.text(cwd, *args, env=env)


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace the file whole: the sweep reads records while other jobs write theirs."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, path)
