"""Sweeps (``axpipe run -m``) with real launchers: jobs that edit code in worktrees of their
own under joblib and submitit_local, and a sweep stopped by SIGTERM, then resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import AXPIPE, git, run_cli, write_recipe

# The agent appends its batch to $SWEEP_LOG (outside the checkout: counts runs per job)
# and writes batch.txt; batch b waits for $SWEEP_GATE to exist, so a test can stop it.
EDIT = """
name: edit
batch: one
agent:
  kind: command
  command: >-
    sh -c 'test ${batch} != b || test -f $SWEEP_GATE || sleep 60;
    echo ${batch} >> $SWEEP_LOG; echo ${batch} > batch.txt'
goal:
  objective: "write the batch file"
  acceptance:
    AC1: {tag: closes, text: "written", check: written}
  checks:
    - id: written
      acceptance: [AC1]
      command: "python3 -c \\"assert open('batch.txt').read().strip() == '${batch}'\\""
"""


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(repo / "recipes", "edit", EDIT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a recipe that edits")
    gate = tmp_path / "gate"
    gate.touch()  # batch b does not wait unless a test removes this
    return repo, {"SWEEP_LOG": str(tmp_path / "log.txt"), "SWEEP_GATE": str(gate)}


def _snapshot(repo: Path) -> tuple[str, str, list[str]]:
    """HEAD, git status and every file outside .git/.axpipe: what "untouched" means."""
    files = sorted(str(path.relative_to(repo)) for path in repo.rglob("*")
                   if ".git" not in path.relative_to(repo).parts[:1] and ".axpipe" not in path.relative_to(repo).parts)
    return git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain", "--untracked-files=all"), files


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
def test_a_parallel_sweep_edits_in_worktrees_and_leaves_the_checkout_untouched(
        project: tuple[Path, dict[str, str]], launcher: str) -> None:
    repo, env = project
    before = _snapshot(repo)
    result = run_cli("run", "-m", "recipe=edit", "batch=a,b,c", f"hydra/launcher={launcher}", cwd=repo, env=env,
                     timeout=300)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _snapshot(repo) == before
    sweep_id = result.stdout.split()[1].rstrip(";")
    branches = git(repo, "branch", "--list", f"axpipe/{sweep_id}/*", "--format=%(refname:short)").split()
    assert branches == [f"axpipe/{sweep_id}/{n}" for n in range(3)]
    for n, batch in enumerate("abc"):
        assert git(repo, "show", f"axpipe/{sweep_id}/{n}:batch.txt") == f"{batch}\n"
        assert git(repo, "diff", "--name-only", before[0].strip(), f"axpipe/{sweep_id}/{n}") == "batch.txt\n"
        assert git(repo, "log", "-1", "--format=%s", f"axpipe/{sweep_id}/{n}") == \
            f"axpipe sweep {sweep_id} job {n}: recipe=edit batch={batch}\n"
        assert f"job {n}: recipe=edit batch={batch} -> exit 0; branch axpipe/{sweep_id}/{n} at" in result.stdout
    assert sorted(Path(env["SWEEP_LOG"]).read_text().split()) == ["a", "b", "c"]


def test_a_parallel_sweep_outside_git_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(tmp_path / "recipes", "edit", EDIT)
    result = run_cli("run", "-m", "recipe=edit", "batch=a,b", "hydra/launcher=joblib", cwd=tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "jobs of a parallel sweep work in git worktrees of their own, made from HEAD" in result.stderr
    assert not (tmp_path / ".axpipe").exists()


@pytest.mark.slow
def test_an_interrupted_sweep_resumed_runs_only_the_jobs_that_did_not_finish(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    Path(env["SWEEP_GATE"]).unlink()  # batch b waits: the sweep is stopped there
    args = ["run", "-m", "recipe=edit", "batch=a,b,c"]
    run = subprocess.Popen([*AXPIPE, *args, "--json"], cwd=repo, env={**os.environ, **env},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stdout is not None
    started = 0
    for line in run.stdout:
        started += json.loads(line)["type"] == "run.started"
        if started == 2 and json.loads(line)["type"] == "phase.started" and json.loads(line).get("phase") == "work":
            break  # job 1 (batch b) is in its agent's turn
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    sweep_id = stderr.split()[1].rstrip(";")
    assert "job 0: recipe=edit batch=a -> exit 0" in stderr and "job 1: recipe=edit batch=b -> exit 130" in stderr
    assert f"resume with --resume {sweep_id}" in stderr
    assert Path(env["SWEEP_LOG"]).read_text().split() == ["a"]

    other = run_cli(*args[:-1], "batch=a,b", "--resume", sweep_id, cwd=repo, env=env)
    assert other.exit_code == 2
    assert f"--resume {sweep_id}: the sweep ran with `recipe=edit batch=a,b,c`, this command has " \
           "`recipe=edit batch=a,b`" in other.stderr
    assert run_cli(*args, "--resume", "nope", cwd=repo, env=env).exit_code == 2

    Path(env["SWEEP_GATE"]).touch()
    resumed = run_cli(*args, "--resume", sweep_id, cwd=repo, env=env, timeout=300)
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    assert Path(env["SWEEP_LOG"]).read_text().split() == ["a", "b", "c"]  # a did not run again
    assert "job 0: recipe=edit batch=a -> exit 0 (finished before; not run again)\n" in resumed.stdout
    assert "job 1: recipe=edit batch=b -> exit 0\njob 2: recipe=edit batch=c -> exit 0\n" in resumed.stdout


@pytest.mark.slow
def test_a_job_whose_worktree_cannot_be_made_fails_and_runs_nothing(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    hook = repo / ".git" / "hooks" / "post-checkout"  # `git worktree add` exits with the hook's status
    hook.write_text("#!/bin/sh\necho 'checkout refused by policy' >&2\nexit 3\n")
    hook.chmod(0o755)
    result = run_cli("run", "-m", "recipe=edit", "batch=a,b", "hydra/launcher=joblib", cwd=repo, env=env, timeout=300)
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "job 0: recipe=edit batch=a -> exit 5" in result.stdout
    assert "job 1: recipe=edit batch=b -> exit 5" in result.stdout
    assert "cannot make its worktree" in result.stderr and "checkout refused by policy" in result.stderr
    assert not Path(env["SWEEP_LOG"]).exists()  # no agent ran
