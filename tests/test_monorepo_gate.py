"""The gate when the project is a subfolder of a git work tree (a monorepo): git prints the
diff's paths from the top, the project's tools print theirs from the project's folder, and
the baseline's worktree holds the whole tree. The same change must get the same verdicts
as it does at the top of a repository; each scenario runs in both places.

Real repositories, real ruff, mypy and pytest, the CLI as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI
from helpers import git, run_cli, write_recipe

LINT = "ruff check --isolated --no-cache --select F --output-format concise ."
TYPECHECK = "mypy --no-incremental --hide-error-context typed.py"
TEST = "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml}"

FILES = {
    "axpipe.yaml": "recipe_paths: [recipes]\n",
    "mod.py": "X = 1\n",
    "legacy.py": "import os\n",  # a finding the change never touches
    "typed.py": "def size(text: str) -> int:\n    return len(text)\n\n\nWIDTH: int = size('abc')\nOLD: int = 'x'\n",
    "src/__init__.py": "",
    "src/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "from src.calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
                          "def test_sub():\n    assert sub(3, 1) == 2\n\n\ndef test_known_broken():\n"
                          "    assert add(0, 0) == 1\n",
}


def _fill(repo: Path, root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (repo / ".gitignore").write_text("__pycache__/\n.mypy_cache/\n")
    for name, phase, command in (("lint", "lint", LINT), ("types", "typecheck", TYPECHECK), ("tests", "test", TEST)):
        write_recipe(root / "recipes", name, f'name: {name}\ngate:\n  baseline: HEAD\n  phases:\n'
                                             f'    {phase}: "{command}"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the project")
    return root


@pytest.fixture(params=["top", "subfolder"])
def project(request: pytest.FixtureRequest, repo: Path) -> Path:
    """The same committed project at the top of ``repo`` and in ``repo/services/api``."""
    return _fill(repo, repo if request.param == "top" else repo / "services" / "api")


@pytest.fixture
def service(repo: Path) -> Path:
    """The project in ``repo/services/api``, beside a library at ``repo/lib`` it may use."""
    (repo / "lib").mkdir()
    (repo / "lib" / "shared.py").write_text("Y = 2\n")
    (repo / "other.py").write_text("import json\n")  # a finding outside the project
    return _fill(repo, repo / "services" / "api")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def run_gate_phase(root: Path, recipe: str, *, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    """``axpipe run recipe=NAME`` and the gate report its gate phase wrote."""
    result = run_cli("run", f"recipe={recipe}", "--json", cwd=cwd or root)
    finished = [json.loads(line) for line in result.stdout.splitlines() if '"gate.finished"' in line]
    assert len(finished) == 1, result.stdout + result.stderr
    report = Path(finished[0]["report"]).with_name("report.json")
    assert report.is_relative_to(root / ".axpipe")
    return result.exit_code, json.loads(report.read_text())


def items(report: dict[str, Any], phase: str) -> list[tuple[str, str, str]]:
    found = next(item for item in report["phases"] if item["name"] == phase)
    return [(item["verdict"], item["subject"], item["why"]) for item in found["items"]]


# -- the same change, the same verdicts, at the top and in a subfolder ---------------------------


def test_a_new_lint_finding_in_a_tracked_file_is_blamed(project: Path) -> None:
    # git diff names the file from the top (services/api/mod.py), ruff from the project's
    # folder (mod.py): unmatched, every finding looked pre-existing and the gate passed.
    edit(project / "mod.py", "X = 1\n", "X = 1\nimport sys\n")
    code, report = run_gate_phase(project, "lint", cwd=project / "src")
    assert code == 1
    assert items(report, "lint") == [
        ("pre-existing", "legacy.py:1:8", "the change did not touch this file"),
        ("blamed", "mod.py:2:8", "line 2 is one the change added or modified"),
    ]
    assert (report["changed_files"], report["changed_lines"]) == (1, 1)


def test_typecheck_compares_with_the_baseline_in_the_projects_folder(project: Path) -> None:
    # At the baseline mypy must run where it runs here; at the worktree's top it could not
    # read typed.py, and the old error on line 6 was blamed on the change.
    edit(project / "typed.py", "def size(text: str) -> int:\n    return len(text)",
         "def size(text: str) -> str:\n    return text")
    code, report = run_gate_phase(project, "types")
    assert code == 1
    assert items(report, "typecheck") == [
        ("blamed", "typed.py:5", "on a line the change did not touch, but the baseline does not have it: the "
                                 "change caused it (type errors reach unchanged call sites)"),
        ("pre-existing", "typed.py:6", "the baseline has the same finding on the same line (typed.py:6)"),
    ]
    baseline = report["phases"][0]["attempts"][1]
    assert baseline["where"] == "baseline" and baseline["exit_code"] == 1
    assert "Found 1 error in 1 file" in Path(baseline["log"]).read_text()  # line 6 only


def test_failing_tests_are_rerun_at_the_baseline_in_the_projects_folder(project: Path) -> None:
    edit(project / "src" / "calc.py", "return a - b", "return b - a")
    code, report = run_gate_phase(project, "tests")
    assert code == 1
    assert items(report, "test") == [
        ("pre-existing", "tests.test_calc::test_known_broken", "it fails at the baseline too"),
        ("blamed", "tests.test_calc::test_sub", "it passes at the baseline"),
    ]
    assert "1 failed, 2 passed" in Path(report["phases"][0]["attempts"][1]["log"]).read_text()
    assert report["worktree_removed"] is True


def test_axpipe_gate_runs_in_the_projects_folder(repo: Path, project: Path) -> None:
    edit(project / "mod.py", "X = 1\n", "X = 1\nimport sys\n")
    result = run_cli("gate", "--baseline", "HEAD", "--json", "--lint", LINT, "--command", "test -f axpipe.yaml",
                     cwd=project / "src")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(phase["name"], phase["status"]) for phase in report["phases"]] == [("lint", "failed"),
                                                                               ("command", "passed")]
    assert items(report, "lint") == [
        ("pre-existing", "legacy.py:1:8", "the change did not touch this file"),
        ("blamed", "mod.py:2:8", "line 2 is one the change added or modified"),
    ]
    assert Path(report["folder"]).parent == project / ".axpipe" / "gate"
    assert sorted(path.name for path in repo.rglob(".axpipe")) == [".axpipe"]  # the project's only
    assert git(repo, "status", "--porcelain", "-uall") == " M " + str((project / "mod.py").relative_to(repo)) + "\n"


# -- only in a subfolder ------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [None, "true"], ids=["default", "diff.relative"])
def test_a_changed_line_outside_the_projects_folder_is_blamed(service: Path, repo: Path, relative: str | None) -> None:
    # The change is the whole work tree's: a project's linter may check a library beside it,
    # and that library's changed lines count as much as the project's own. A user's
    # `diff.relative` setting would otherwise cut the diff to the project's folder.
    if relative is not None:
        git(repo, "config", "diff.relative", relative)
    write_recipe(service / "recipes", "wide", f'name: wide\ngate:\n  baseline: HEAD\n  phases:\n'
                                              f'    lint: "{LINT} ../../lib"\n')
    edit(repo / "lib" / "shared.py", "Y = 2\n", "Y = 2\nimport sys\n")
    code, report = run_gate_phase(service, "wide")
    assert code == 1
    assert items(report, "lint") == [
        ("blamed", "../../lib/shared.py:2:8", "line 2 is one the change added or modified"),
        ("pre-existing", "legacy.py:1:8", "the change did not touch this file"),
    ]


def test_a_project_folder_the_baseline_lacks_fails_closed(service: Path, repo: Path) -> None:
    # The first commit has no services/api: the baseline's tests cannot run where the
    # project's do, so a failing test is not known to fail there and counts.
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    result = run_cli("gate", "--baseline", first, "--json", "--test", TEST, cwd=service)
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert items(report, "test") == [(
        "blamed", "tests.test_calc::test_known_broken",
        f"the baseline run gave no test results (the project's folder services/api does not exist at the "
        f"baseline {first[:12]}), so it is not known to fail there")]
    assert report["worktree_removed"] is True


def test_a_project_in_a_folder_git_ignores_is_refused(cli: CLI, repo: Path) -> None:
    # git lists none of an ignored folder's files, so no change there would ever be seen:
    # narrowing would call every finding pre-existing.
    (repo / ".gitignore").write_text("scratch/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ignore scratch")
    folder = repo / "scratch" / "tool"
    folder.mkdir(parents=True)
    (folder / "axpipe.yaml").write_text("")
    (folder / "new.py").write_text("import sys\n")
    result = cli("gate", "--lint", LINT, cwd=folder)
    assert result.exit_code == 2
    assert result.stderr == (f"axpipe: error: {folder} is in a folder its git repository ignores, so git sees "
                             "none of its changes and the gate cannot narrow to them\n")
    assert not (folder / ".axpipe").exists() and not (repo / ".axpipe").exists()
