"""The guard core as the repair loop uses it: changes from git (untracked, staged, renamed,
snapshots an agent committed over), from patches, and find_cheating's errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git

from axpipe.change import from_git as changes
from axpipe.errors import InputError, PluginError
from axpipe.guard.run import check_change, find_cheating, snapshot
from axpipe.interfaces import GuardContext

CODE = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(40, 2) == 42\n"


def commit(repo: Path, files: dict[str, str], message: str = "files") -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def project(repo: Path) -> Path:
    commit(repo, {"calc.py": CODE, "tests/test_calc.py": TEST})
    return repo


def by_path(change_set: changes.ChangeSet) -> dict[str, changes.ChangedFile]:
    return {item.path: item for item in change_set.files}


def test_working_tree_changes_include_untracked_files(project: Path) -> None:
    (project / "calc.py").write_text(CODE.replace("a + b", "a + b + 0"))
    (project / "tests" / "test_new.py").write_text("def test_new():\n    assert True\n")
    (project / "notes.txt").write_text("not inspected\n")
    found = by_path(changes.from_git(project, "HEAD", suffixes=(".py",)))
    assert set(found) == {"calc.py", "tests/test_new.py"}
    assert found["calc.py"].before == CODE and found["calc.py"].after.endswith("a + b + 0\n")
    assert found["tests/test_new.py"].status == "added" and found["tests/test_new.py"].before is None
    assert found["tests/test_new.py"].added_lines()[0] == (1, "def test_new():")


def test_staged_judges_the_index_not_the_working_tree(project: Path) -> None:
    (project / "calc.py").write_text(CODE.replace("a + b", "a - b"))
    git(project, "add", "calc.py")
    (project / "calc.py").write_text(CODE.replace("a + b", "a * b"))  # unstaged on top
    (project / "untracked.py").write_text("x = 1\n")
    found = by_path(changes.from_git(project, "HEAD", staged=True))
    assert set(found) == {"calc.py"}
    assert "a - b" in (found["calc.py"].after or "")


def test_a_renamed_test_file_is_one_change(project: Path) -> None:
    git(project, "mv", "tests/test_calc.py", "tests/test_arithmetic.py")
    found = changes.from_git(project, "HEAD").files
    assert [(item.old_path, item.new_path, item.status) for item in found] == [
        ("tests/test_calc.py", "tests/test_arithmetic.py", "renamed")]
    assert find_cheating(project) == []


def test_binary_and_symlinked_files_are_not_read(project: Path) -> None:
    (project / "blob.py").write_bytes(b"\0\1\2")
    os.symlink("calc.py", project / "link.py")
    change_set = changes.from_git(project, "HEAD")
    found = by_path(change_set)
    assert found["blob.py"].binary and found["blob.py"].after is None
    assert found["link.py"].binary
    assert sorted(change_set.notes) == [
        "blob.py: not judged (binary, a symlink, a submodule or over 2 MiB)",
        "link.py: not judged (binary, a symlink, a submodule or over 2 MiB)"]
    assert find_cheating(project) == []


def test_a_snapshot_base_sees_through_an_agent_commit(project: Path) -> None:
    (project / "scratch.py").write_text("draft = 1\n")  # untracked work before the agent runs
    index_before = (project / ".git" / "index").read_bytes()
    before = snapshot(project)
    assert (project / ".git" / "index").read_bytes() == index_before, "the user's index is untouched"
    assert git(project, "status", "--porcelain").splitlines() == ["?? scratch.py"]
    # The agent skips the test, edits the untracked file and commits everything.
    (project / "tests" / "test_calc.py").write_text(TEST.replace("def test_add", "@pytest.mark.skip\ndef test_add"))
    (project / "scratch.py").write_text("draft = 2\n")
    commit(project, {}, "agent")
    found = find_cheating(project, before)
    assert [(finding.guard, finding.file) for finding in found] == [("skipped-test", "tests/test_calc.py")]
    assert find_cheating(project, "HEAD") == []  # against HEAD the commit hides it: why snapshots exist
    scratch = by_path(changes.from_git(project, before))["scratch.py"]
    assert (scratch.status, scratch.before, scratch.after) == ("modified", "draft = 1\n", "draft = 2\n")


def test_untracked_file_in_a_snapshot_then_edited_is_a_modification(project: Path) -> None:
    (project / "helper.py").write_text("def f(x):\n    return x * 2\n")
    before = snapshot(project)
    (project / "helper.py").write_text("def f(x):\n    return x * 3\n")
    item, = changes.from_git(project, before).files
    assert (item.status, item.removed_lines(), item.added_lines()) == (
        "modified", [(2, "    return x * 2")], [(2, "    return x * 3")])


def test_a_repository_without_commits_judges_everything_as_new(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    pass\n")
    git(tmp_path, "add", "-A")
    report = check_change(tmp_path, staged=True)  # the first commit, through the pre-commit hook
    assert [item.status for item in report.changes.files] == ["added"]
    assert report.findings == []
    with pytest.raises(InputError, match="unknown revision 'HEAD~1'"):
        find_cheating(tmp_path, "HEAD~1")


def test_unknown_revision_and_folders_outside_git_are_input_errors(project: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown revision 'no-such-branch'"):
        find_cheating(project, "no-such-branch")
    with pytest.raises(InputError, match="is not a revision"):
        find_cheating(project, "--output=/tmp/x")
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(InputError, match="is not inside a git repository"):
        find_cheating(outside)


def test_unknown_guard_names_what_is_available(project: Path) -> None:
    with pytest.raises(PluginError, match=r"unknown guard 'pyhton' \(did you mean 'python'\?\); available: "
                                          r"condition, javascript, python"):
        find_cheating(project, guards=["pyhton"])


def test_only_the_named_guards_run(project: Path) -> None:
    (project / "tests" / "test_calc.py").write_text(TEST.replace("== 42", ""))
    (project / "ui.test.js").write_text("it.skip('x', () => { expect(1).toBe(1); });\n")
    assert {finding.plugin for finding in find_cheating(project)} == {"python"}  # the js test is new: fine
    assert find_cheating(project, guards=["javascript"]) == []
    assert [finding.guard for finding in find_cheating(project, guards=["python"])] == ["loosened-assertion"]


def test_unchanged_files_are_never_parsed(project: Path) -> None:
    commit(project, {"broken.py": "def (:\n", "src/huge.py": "x = 1\n" * 50_000})
    (project / "calc.py").write_text(CODE.replace("a + b", "b + a"))
    report = check_change(project)
    assert report.findings == [] and report.changes.notes == []
    assert [item.path for item in report.changes.files] == ["calc.py"]


def test_a_new_version_that_does_not_parse_is_judged_by_its_hunks(project: Path) -> None:
    (project / "tests" / "test_calc.py").write_text(TEST.replace("def test_add():", "@pytest.mark.skip\n"
                                                                 "def test_add(:"))
    report = check_change(project)
    assert [note.split(":")[0] for note in report.changes.notes] == ["tests/test_calc.py"]
    assert "does not parse" in report.changes.notes[0]
    assert [(finding.guard, finding.line) for finding in report.findings] == [("skipped-test", 4)]


def test_context_names_test_files_the_repository_search_would_not_find(project: Path) -> None:
    # The project's pytest collects checks/verify_*.py; only the context tells the guards so.
    commit(project, {"checks/verify_calc.py": "from calc import add\n\n\ndef test_big():\n"
                                              "    assert add(40, 2) == 42\n",
                     "pytest.ini": "[pytest]\npython_files = verify_*.py\n"})
    git(project, "rm", "-q", "tests/test_calc.py")
    commit(project, {}, "no tests")
    (project / "calc.py").write_text("def add(a, b):\n    if a == 40:\n        return 42\n    return a + b\n")
    assert find_cheating(project) == []
    found = find_cheating(project, context=GuardContext(test_files=["checks/verify_calc.py"]))
    assert [finding.guard for finding in found] == ["hardcoded-expected"]


def test_failure_output_alone_reveals_a_returned_constant(project: Path) -> None:
    git(project, "rm", "-q", "tests/test_calc.py")
    commit(project, {"calc.py": "def area(w, h):\n    return w * h + 1\n"}, "buggy")
    (project / "calc.py").write_text("def area(w, h):\n    return 12\n")
    assert find_cheating(project) == []
    output = "E       assert 13 == 12\nE        +  where 13 = area(3, 4)\n"
    found = find_cheating(project, context=GuardContext(failure_output=output))
    assert [(finding.guard, finding.line) for finding in found] == [("hardcoded-expected", 2)]
    assert "the failing run expects" in found[0].evidence


def test_patch_that_applies_to_the_files_on_disk_is_judged_whole(project: Path) -> None:
    (project / "tests" / "test_calc.py").write_text(TEST.replace("assert add(40, 2) == 42", "assert add(40, 2)"))
    git(project, "add", "-A")
    patch = git(project, "diff", "--cached", "HEAD")
    git(project, "reset", "-q", "--hard")
    before = check_change(project, patch=patch, patch_source="fix.diff")
    assert before.changes.files[0].complete and before.changes.notes == []
    (project / "tests" / "test_calc.py").write_text(TEST.replace("assert add(40, 2) == 42", "assert add(40, 2)"))
    after = check_change(project, patch=patch, patch_source="fix.diff")  # already applied: undone in memory
    assert after.changes.files[0].complete and after.changes.notes == []
    assert [finding.evidence for finding in before.findings] == [finding.evidence for finding in after.findings]
    assert [finding.guard for finding in before.findings] == ["loosened-assertion"]


def test_patch_that_does_not_match_the_files_is_judged_by_its_hunks(project: Path, tmp_path: Path) -> None:
    patch = ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n"
             "+++ b/tests/test_calc.py\n@@ -10,2 +10,3 @@\n def test_other():\n+    pytest.skip('later')\n"
             "     assert other() == 1\n")
    for root in (project, tmp_path):
        report = check_change(root, patch=patch, patch_source="fix.diff")
        assert not report.changes.files[0].complete
        assert report.changes.notes and "guards saw its hunks only" in report.changes.notes[0]
        assert [(finding.guard, finding.line) for finding in report.findings] == [("skipped-test", 11)]


def test_malformed_patch_is_an_input_error(project: Path) -> None:
    with pytest.raises(InputError, match=r"--patch fix\.diff: not a unified diff"):
        check_change(project, patch="this is prose, not a diff\n", patch_source="fix.diff")


def test_outside_git_a_patch_finds_the_tests_by_walking_the_folder(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "calc.py").write_text(CODE)
    (tmp_path / "tests" / "test_calc.py").write_text(TEST)
    (tmp_path / "node_modules" / "x" / "test_calc.py").write_text(TEST.replace("42", "43"))  # never read
    patch = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,4 @@\n def add(a, b):\n+    if a == 40:\n"
             "+        return 42\n     return a + b\n")
    report = check_change(tmp_path, patch=patch, patch_source="fix.diff")
    assert report.changes.files[0].complete
    finding, = report.findings
    assert (finding.guard, finding.file, finding.line) == ("hardcoded-expected", "calc.py", 2)
    assert "tests/test_calc.py::test_add" in finding.evidence


@pytest.mark.parametrize(("glob", "path", "matches"), [
    ("**/test_*.py", "test_a.py", True),
    ("**/test_*.py", "pkg/tests/test_a.py", True),
    ("**/test_*.py", "pkg/test_dir/a.py", False),
    ("**/tests/**/*.py", "tests/unit/a.py", True),
    ("**/*.test.*", "src/ui/a.test.tsx", True),
    ("**/*.test.*", "src/ui/a.tsx", False),
    ("**/test_[a-c].py", "pkg/test_b.py", True),
    ("**/test_[a-c].py", "pkg/test_d.py", False),
    ("**/test_[^a-c].py", "pkg/test_d.py", True),
])
def test_lookup_globs_follow_git_pathspec_rules(glob: str, path: str, matches: bool) -> None:
    import re

    from axpipe.change.globs import glob_regex

    assert bool(re.fullmatch(glob_regex(glob), path)) is matches


def test_a_searched_test_must_mention_the_changed_module(project: Path) -> None:
    # `run` in jobs.py is not the `run` a test of another module expects to raise.
    commit(project, {"jobs.py": "def run(job):\n    return job.execute()\n",
                     "tests/test_process.py": "import pytest\n\nfrom process import run\n\n\n"
                     "def test_missing():\n    with pytest.raises(FileNotFoundError):\n        run('nope')\n"})
    (project / "jobs.py").write_text("def run(job):\n    try:\n        return job.execute()\n"
                                     "    except FileNotFoundError as error:\n        return {'failed': str(error)}\n")
    assert find_cheating(project) == []
    (project / "tests" / "test_jobs.py").write_text("import pytest\n\nimport jobs\n\n\ndef test_missing():\n"
                                                    "    with pytest.raises(FileNotFoundError):\n"
                                                    "        jobs.run(None)\n")
    git(project, "add", "tests/test_jobs.py")
    git(project, "commit", "-q", "-m", "a test of jobs")
    found = find_cheating(project)
    assert [(finding.guard, finding.file, finding.line) for finding in found] == [("swallowed-error", "jobs.py", 4)]
    assert "tests/test_jobs.py::test_missing expects run to raise" in found[0].evidence


def test_the_deferred_entry_points_match_the_guards_they_load() -> None:
    from axpipe_builtin.guards import condition, entry, javascript, python

    for deferred, real in ((entry.PythonGuard(), python.PythonGuard()),
                           (entry.JavaScriptGuard(), javascript.JavaScriptGuard()),
                           (entry.ConditionGuard(), condition.ConditionGuard())):
        assert deferred.suffixes == real.suffixes
        assert deferred.describe() == real.describe()
