"""`axpipe guard` as CI and pre-commit run it: real repositories, the CLI as a process,
exit codes 0/1/2, the pinned JSON, and every input error."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CLI
from helpers import AXPIPE, RESOURCES, ROOT, git, tree

from axpipe.cli import main

CODE = "def add(a, b):\n    return a + b\n"
TEST = ("import pytest\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_add_big():\n    assert add(40, 2) == 42\n")
SKIPPED = TEST.replace("def test_add_big", "@pytest.mark.skip(reason=\"flaky\")\ndef test_add_big")


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "calc.py").write_text(CODE)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    return repo


def cheat(project: Path) -> None:
    """Skip a test, hardcode the value it expects, and weaken another test."""
    (project / "tests" / "test_calc.py").write_text(SKIPPED.replace("assert add(2, 3) == 5", "assert add(2, 3)"))
    (project / "calc.py").write_text("def add(a, b):\n    if a == 40:\n        return 42\n    return a + b\n")


def test_nothing_fired_exits_0(cli: CLI, project: Path, snapshot: object) -> None:
    (project / "calc.py").write_text(CODE.replace("a + b", "b + a"))
    result = cli("guard")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == snapshot


def test_findings_exit_1_with_file_line_guard_and_evidence(cli: CLI, project: Path, snapshot: object) -> None:
    cheat(project)
    before = tree(project)
    result = cli("guard")
    assert result.exit_code == 1, result.stderr
    assert result.stdout == snapshot
    assert tree(project) == before  # judging changes nothing


def test_findings_do_not_depend_on_git_literal_pathspecs(cli: CLI, project: Path) -> None:
    # the guards' own `*.py` pathspecs would match no file if git read them literally
    cheat(project)
    assert cli("guard", "--json").stdout == cli("guard", "--json", env={"GIT_LITERAL_PATHSPECS": "1"}).stdout
    assert cli("guard", env={"GIT_LITERAL_PATHSPECS": "1"}).exit_code == 1


def test_json_is_the_pinned_list(cli: CLI, project: Path, snapshot: object) -> None:
    cheat(project)
    result = cli("guard", "--json")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)
    assert all(list(finding) == ["guard", "file", "line", "evidence"] for finding in findings)
    assert findings == snapshot
    clean = cli("guard", "--json", "--base", "HEAD", "--guards", "javascript")
    assert (clean.exit_code, json.loads(clean.stdout)) == (0, [])


def test_base_covers_committed_work(cli: CLI, project: Path) -> None:
    cheat(project)
    git(project, "commit", "-q", "-am", "agent work")
    assert cli("guard").exit_code == 0  # nothing left in the working tree
    result = cli("guard", "--base", "HEAD~1", "--json")
    assert result.exit_code == 1
    assert {finding["guard"] for finding in json.loads(result.stdout)} == {
        "skipped-test", "loosened-assertion", "hardcoded-expected"}


def test_patch_file_and_stdin(cli: CLI, project: Path, tmp_path: Path) -> None:
    cheat(project)
    git(project, "add", "-A")
    patch = git(project, "diff", "--cached", "HEAD")
    git(project, "reset", "-q", "--hard")
    (tmp_path / "fix.diff").write_text(patch)
    from_file = cli("guard", "--patch", str(tmp_path / "fix.diff"), "--json")
    assert from_file.exit_code == 1 and from_file.stderr == ""
    completed = subprocess.run([sys.executable, "-m", "axpipe", "guard", "--patch", "-", "--json"], cwd=project,
                               input=patch, capture_output=True, text=True)
    assert completed.returncode == 1
    assert json.loads(completed.stdout) == json.loads(from_file.stdout)
    assert len(json.loads(from_file.stdout)) == 3


@pytest.mark.parametrize("how", ["working tree", "untracked", "patch"])
def test_a_test_file_whose_name_is_not_utf8_is_judged(project: Path, tmp_path: Path, how: str) -> None:
    name = os.fsdecode(b"test_d\xff.py")
    (project / "tests" / name).write_text(TEST)
    if how != "untracked":
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "a test file with an odd name")
    (project / "tests" / name).write_text(SKIPPED)
    args = ["guard"]
    if how == "patch":
        patch = subprocess.run(["git", "diff", "HEAD"], cwd=project, capture_output=True, check=True).stdout
        assert b'"b/tests/test_d\\377.py"' in patch  # git C-quotes the name
        (tmp_path / "odd.diff").write_bytes(patch)
        args += ["--patch", str(tmp_path / "odd.diff")]
    # a strict UTF-8 stdout, as in most desktop locales: the name must not end the command
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    text = subprocess.run([*AXPIPE, *args], cwd=project, capture_output=True, env=env)
    assert b"not judged" not in text.stderr
    if how == "untracked":  # read and judged (a new file's skip is not a removed test)
        assert (text.returncode, text.stdout) == (0, b"guard: nothing fired; judged 1 changed file of "
                                                     b"`git diff HEAD` with condition, javascript, python\n")
        return
    assert text.returncode == 1, text.stderr
    assert text.stdout.startswith(b"tests/test_d\xff.py:10: skipped-test: ")  # the name's own bytes
    as_json = subprocess.run([*AXPIPE, *args, "--json"], cwd=project, capture_output=True, env=env)
    assert [finding["file"] for finding in json.loads(as_json.stdout)] == [f"tests/{name}"]


def test_a_base_missing_from_a_shallow_clone_says_to_fetch_it(cli: CLI, project: Path, tmp_path: Path) -> None:
    (project / "calc.py").write_text(CODE.replace("a + b", "b + a"))
    git(project, "commit", "-qam", "second")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    result = cli("guard", "--base", "HEAD~1", cwd=clone)
    assert result.exit_code == 2
    assert result.stderr == (f"axpipe: error: --base: unknown revision 'HEAD~1' in {clone} (a commit, branch, tag or "
                             "tree id; see `git log`); this is a shallow clone, which may simply not have it: fetch "
                             "the history it lacks (git fetch --deepen=N or --unshallow)\n")


def test_a_patch_without_its_files_says_what_it_could_not_see(cli: CLI, tmp_path: Path) -> None:
    patch = ("diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
             "@@ -3,2 +3,3 @@\n \n+@pytest.mark.skip\n def test_x():\n")
    (tmp_path / "fix.diff").write_text(patch)
    result = cli("guard", "--patch", "fix.diff", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr == "note: tests/test_x.py: the patch is not on disk; guards saw its hunks only\n"
    assert result.stdout.startswith("tests/test_x.py:4: skipped-test: skip marker added: `@pytest.mark.skip`")


def test_staged_judges_what_is_about_to_be_committed(cli: CLI, project: Path) -> None:
    cheat(project)
    git(project, "add", "tests/test_calc.py")
    git(project, "checkout", "--", "calc.py")  # only the test edit is staged
    result = cli("guard", "--staged", "--json")
    assert result.exit_code == 1
    assert {finding["file"] for finding in json.loads(result.stdout)} == {"tests/test_calc.py"}
    git(project, "reset", "-q")
    assert cli("guard", "--staged").exit_code == 0


def test_failure_output_and_failing_tests_reach_the_guards(cli: CLI, project: Path, tmp_path: Path) -> None:
    git(project, "rm", "-q", "tests/test_calc.py")
    git(project, "commit", "-q", "-m", "tests elsewhere")
    (project / "calc.py").write_text("def add(a, b):\n    return 5\n")
    assert cli("guard").exit_code == 0
    (tmp_path / "out.txt").write_text("E       assert 6 == 5\nE        +  where 6 = add(2, 3)\n")
    result = cli("guard", "--failure-output", str(tmp_path / "out.txt"), "--failing-test", "x.py::test_add")
    assert result.exit_code == 1
    assert "add now returns the constant 5 that the failing run expects" in result.stdout


def test_in_process_main_matches_the_subprocess(project: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cheat(project)
    monkeypatch.chdir(project)
    assert main(["guard", "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)) == 3


@pytest.mark.parametrize("args", [
    pytest.param(["--base", "no-such-rev"], id="unknown-revision"),
    pytest.param(["--base", "HEAD", "--patch", "fix.diff"], id="base-and-patch"),
    pytest.param(["--staged", "--patch", "fix.diff"], id="staged-and-patch"),
    pytest.param(["--patch", "missing.diff"], id="unreadable-patch"),
    pytest.param(["--patch", "prose.txt"], id="malformed-patch"),
    pytest.param(["--guards", "pyhton"], id="unknown-guard"),
    pytest.param(["--guards", " , "], id="no-guard-named"),
    pytest.param(["--failure-output", "missing.txt"], id="unreadable-failure-output"),
])
def test_input_errors_exit_2_and_change_nothing(cli: CLI, project: Path, args: list[str], snapshot: object) -> None:
    cheat(project)
    (project / "prose.txt").write_text("Please review my change, it is fine.\n")
    (project / "fix.diff").write_text("")
    before = tree(project)
    result = cli("guard", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.replace(str(project), "<repo>") == snapshot
    assert tree(project) == before


def test_outside_git_the_default_base_is_an_input_error(cli: CLI, tmp_path: Path) -> None:
    result = cli("guard", cwd=tmp_path)
    assert result.exit_code == 2
    assert "is not inside a git repository, so there is no change against --base (default HEAD)" in result.stderr
    assert "--patch FILE" in result.stderr


def test_help(cli: CLI, snapshot: object) -> None:
    result = cli("guard", "--help")
    assert result.exit_code == 0
    assert result.stdout == snapshot


# -- plugins ----------------------------------------------------------------------------


def pip_install_target(source: Path, target: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(source)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("example-guard-site")
    pip_install_target(ROOT / "plugins" / "axpipe-example-checks", target)
    return target


@pytest.fixture(scope="module")
def misbehaving_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("test-guards-site")
    pip_install_target(RESOURCES / "guard-plugins", target)
    return target


def test_a_third_party_guard_runs_beside_the_built_ins(cli: CLI, project: Path, example_site: Path) -> None:
    env = {"PYTHONPATH": str(example_site)}
    (project / "tests" / "test_calc.py").write_text(TEST.replace("def test_add_big", "@pytest.mark.flaky(reruns=3)\n"
                                                                 "def test_add_big"))
    result = cli("guard", "--json", env=env)
    assert result.exit_code == 1
    assert json.loads(result.stdout) == [{
        "guard": "skipped-test", "file": "tests/test_calc.py", "line": 10,
        "evidence": "reruns added, so a failing test can pass: `@pytest.mark.flaky(reruns=3)`"}]
    assert cli("guard", "--guards", "python", env=env).exit_code == 0  # the built-in does not know reruns


def test_the_example_guard_passes_the_guard_contract(example_site: Path) -> None:
    example = ROOT / "plugins" / "axpipe-example-checks"
    completed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                str(example / "tests" / "test_flaky_reruns.py")], cwd=example,
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(example_site)})
    assert completed.returncode == 0, completed.stdout[-3000:]
    assert "5 passed" in completed.stdout


def test_a_crashing_guard_is_an_error_never_a_pass(cli: CLI, project: Path, misbehaving_site: Path) -> None:
    (project / "calc.py").write_text(CODE.replace("a + b", "b + a"))
    result = cli("guard", "--guards", "crashing", env={"PYTHONPATH": str(misbehaving_site)})
    assert result.exit_code == 1
    assert result.stderr.startswith("axpipe: error: guard 'crashing' failed on git diff HEAD: "
                                    "RuntimeError: guard bug: cannot read the change.")
    assert result.stdout == ""


def test_a_plugin_without_the_protocol_is_refused(cli: CLI, project: Path, misbehaving_site: Path) -> None:
    result = cli("guard", "--guards", "not-a-guard", env={"PYTHONPATH": str(misbehaving_site)})
    assert result.exit_code == 2
    assert "guard 'not-a-guard' does not satisfy the Guard protocol" in result.stderr


# -- pre-commit -------------------------------------------------------------------------


def test_the_pre_commit_hook_entry_rejects_a_staged_cheat(project: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook, = hooks
    assert hook["id"] == "axpipe-guard" and hook["language"] == "python"
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    command = shlex.split(hook["entry"])
    assert command[0] == "axpipe"
    run = [sys.executable, "-m", "axpipe", *command[1:]]
    (project / "tests" / "test_calc.py").write_text(SKIPPED)
    git(project, "add", "-A")
    rejected = subprocess.run(run, cwd=project, capture_output=True, text=True)
    assert rejected.returncode == 1
    assert "skipped-test" in rejected.stdout
    git(project, "reset", "-q", "--hard")
    (project / "calc.py").write_text(CODE.replace("a + b", "b + a"))
    git(project, "add", "-A")
    assert subprocess.run(run, cwd=project, capture_output=True, text=True).returncode == 0


@pytest.mark.slow
def test_pre_commit_runs_the_hook_from_this_repository(project: Path, tmp_path: Path) -> None:
    # Real pre-commit installs axpipe from this checkout into its own environment.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "pre-commit>=3.2"],
                   check=True, capture_output=True)
    (project / "tests" / "test_calc.py").write_text(SKIPPED)
    git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("PYTHONPATH", None)
    completed = subprocess.run([str(venv / "bin" / "pre-commit"), "try-repo", str(ROOT), "axpipe-guard"],
                               cwd=project, capture_output=True, text=True, env=env, timeout=900)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "tests/test_calc.py:10: skipped-test: test_add_big is now skipped" in completed.stdout
