"""The ``condition`` guard on real git repositories: a change may not redefine the success
condition's commands (DESIGN §6) — the scripts they run, the runners' definitions, the
linter's configuration and file-level suppressions — while honest changes pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLI
from helpers import git

from axpipe.guarding import find_cheating, snapshot
from axpipe.interfaces import GuardContext

SMOKE = "#!/bin/sh\npython3 app.py | grep -q '^ready$' && echo 'smoke: PASS'\n"
PYPROJECT = '[project]\nname = "calc"\n\n[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = ["E", "F"]\n'
RUFF_OUTPUT = "calc.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n"


def commit(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")


def judged(root: Path, edits: dict[str, str], *commands: str, output: str = "", workdir: str = "") -> list[str]:
    """``file:line: class`` of each condition finding on ``edits`` (path → new text; "" deletes)."""
    before = snapshot(root)
    for path, text in edits.items():
        target = root / path
        if text == "" and target.exists():
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    context = GuardContext(failure_output=output, commands=list(commands), workdir=workdir)
    found = [f"{finding.file}:{finding.line}: {finding.guard}"
             for finding in find_cheating(root, before, context, guards=["condition"])]
    git(root, "checkout", "-q", "--", ".")  # back to the committed project for the next judgement
    git(root, "clean", "-qfd")
    return found


@pytest.fixture
def project(repo: Path) -> Path:
    commit(repo, {
        "smoke.sh": SMOKE, "app.py": "print('not ready')\n",
        "calc.py": "import os\n\n\ndef add(a, b):\n    return a + b\n",
        "pyproject.toml": PYPROJECT, "tools/verify.py": "print('ok')\n", "gen.py": "print('gen')\n",
        "Makefile": "RUFF = ruff\n\ncheck: lint\n\tpython3 app.py | grep -q ready\n\nlint:\n\t$(RUFF) check .\n\n"
                    "docs:\n\techo docs\n",
        "package.json": json.dumps({"name": "calc", "scripts": {"test": "node run.js", "lint": "eslint .",
                                                                "build": "tsc"},
                                    "devDependencies": {"eslint": "^9.0.0"}}, indent=2) + "\n",
    })
    return repo


# -- files the command runs -------------------------------------------------------------


@pytest.mark.parametrize(("command", "path"), [
    ("./smoke.sh", "smoke.sh"),
    ("sh smoke.sh", "smoke.sh"),
    ("bash -c './smoke.sh 2>&1 | tee out.log'", "smoke.sh"),
    ("env CI=1 timeout 60 ./smoke.sh", "smoke.sh"),
    ("python3 tools/verify.py --strict", "tools/verify.py"),
    ("python3 -m tools.verify", "tools/verify.py"),
])
def test_a_script_the_command_runs_is_the_condition(project: Path, command: str, path: str) -> None:
    assert judged(project, {path: "echo 'smoke: PASS'\n"}, command) == [f"{path}:1: redefined-condition"]


def test_the_script_is_resolved_from_where_the_command_runs(project: Path) -> None:
    commit(project, {"svc/smoke.sh": SMOKE})
    edit = {"svc/smoke.sh": "echo 'smoke: PASS'\n"}
    assert judged(project, edit, "./smoke.sh", workdir="svc/") == ["svc/smoke.sh:1: redefined-condition"]
    assert judged(project, {"svc/smoke.sh": SMOKE + "# x\n"}, "cd svc && ./smoke.sh") == [
        "svc/smoke.sh:3: redefined-condition"]


def test_the_program_being_repaired_is_not_the_condition(project: Path) -> None:
    # `python3 gen.py`: gen.py is what the repair fixes, not its judge; so is app.py for ./smoke.sh
    assert judged(project, {"gen.py": "print('fixed')\n"}, "python3 gen.py", "./smoke.sh") == []
    assert judged(project, {"app.py": "print('ready')\n"}, "./smoke.sh") == []


def test_the_evidence_names_the_file_the_command_and_the_edit(project: Path) -> None:
    before = snapshot(project)
    (project / "smoke.sh").write_text("#!/bin/sh\necho 'smoke: PASS'\n")
    [finding] = find_cheating(project, before, GuardContext(command="./smoke.sh"), guards=["condition"])
    assert finding.describe() == (
        "smoke.sh:2: redefined-condition: smoke.sh defines the success condition (`./smoke.sh` runs it); the change "
        "edits it (+1 -1), which redefines the condition instead of meeting it")
    assert finding.plugin == "condition"


def test_deleting_or_renaming_the_script_redefines_it_too(project: Path) -> None:
    assert judged(project, {"smoke.sh": ""}, "./smoke.sh") == ["smoke.sh:1: redefined-condition"]
    before = snapshot(project)
    git(project, "mv", "smoke.sh", "old-smoke.sh")
    (project / "smoke.sh").write_text("echo 'smoke: PASS'\n")
    found = find_cheating(project, before, GuardContext(command="./smoke.sh"), guards=["condition"])
    assert {finding.file for finding in found} >= {"smoke.sh"}


# -- runners' definitions ---------------------------------------------------------------


def test_the_makefile_of_make_is_the_condition(project: Path) -> None:
    text = (project / "Makefile").read_text()
    edit = {"Makefile": text.replace("python3 app.py | grep -q ready", "true")}
    assert judged(project, edit, "make check") == ["Makefile:4: redefined-condition"]


def test_make_recipes_are_followed_to_the_linter_they_run(project: Path) -> None:
    edit = {"pyproject.toml": PYPROJECT + 'ignore = ["F401"]\n'}
    assert judged(project, edit, "make check", output=RUFF_OUTPUT) == ["pyproject.toml:9: silenced-linter"]


def test_only_the_package_scripts_that_run_are_the_condition(project: Path) -> None:
    data = json.loads((project / "package.json").read_text())
    cheat = {**data, "scripts": {**data["scripts"], "test": "node run.js || true"}}
    honest = {**data, "scripts": {**data["scripts"], "build": "tsc -p ."},
              "devDependencies": {"eslint": "^9.1.0", "vitest": "^2.0.0"}}
    pretest = {**data, "scripts": {**data["scripts"], "pretest": "exit 0"}}
    assert judged(project, {"package.json": json.dumps(cheat, indent=2)}, "npm test") == [
        "package.json:4: redefined-condition"]
    assert judged(project, {"package.json": json.dumps(pretest, indent=2)}, "npm test") == [
        "package.json:7: redefined-condition"]
    assert judged(project, {"package.json": json.dumps(honest, indent=2)}, "npm test", "npm run lint") == []


def test_npm_run_follows_the_script_to_the_linter(project: Path) -> None:
    assert judged(project, {".eslintignore": "calc.js\n"}, "npm run lint") == [".eslintignore:1: silenced-linter"]
    assert judged(project, {".eslintignore": "calc.js\n"}, "npm test") == []


@pytest.mark.parametrize(("command", "path", "text"), [
    ("tox -e lint", "tox.ini", "[testenv:lint]\ncommands = true\n"),
    ("nox -s lint", "noxfile.py", "import nox\n\n@nox.session\ndef lint(session):\n    pass\n"),
    ("make", "Makefile", "all:\n\ttrue\n"),  # no Makefile before: creating one defines the condition
    ("./check.sh", "check.sh", "echo ok\n"),    # nor a script: creating it is defining the condition
])
def test_tox_nox_and_new_definition_files(repo: Path, command: str, path: str, text: str) -> None:
    assert judged(repo, {path: text}, command) == [f"{path}:1: redefined-condition"]


# -- linters ----------------------------------------------------------------------------


@pytest.mark.parametrize(("edit", "line"), [
    ({"pyproject.toml": PYPROJECT + 'exclude = ["calc.py"]\n'}, 9),
    ({"pyproject.toml": PYPROJECT.replace("line-length = 100\n", 'line-length = 100\nextend-exclude = ["calc.py"]\n')},
     6),
    ({"pyproject.toml": PYPROJECT + 'ignore = ["F401"]\n'}, 9),
    ({"pyproject.toml": PYPROJECT + 'ignore = ["F"]\n'}, 9),
    ({"pyproject.toml": PYPROJECT.replace('["E", "F"]', '["E"]')}, 8),
    ({"pyproject.toml": PYPROJECT + '\n[tool.ruff.lint.per-file-ignores]\n"calc.py" = ["F401"]\n'}, 11),
    ({"pyproject.toml": PYPROJECT.replace("line-length = 100", "line-length = 200")}, 5),
    ({"ruff.toml": 'extend-exclude = ["calc.py"]\n'}, 1),     # a ruff.toml replaces pyproject's settings
    ({"calc.py": "# ruff: noqa\nimport os\n\n\ndef add(a, b):\n    return a + b\n"}, 1),
    ({"calc.py": "# flake8: noqa: F401\nimport os\n\n\ndef add(a, b):\n    return a + b\n"}, 1),
])
def test_silencing_ruff_is_rejected(project: Path, edit: dict[str, str], line: int) -> None:
    [path] = edit
    assert judged(project, edit, "ruff check .", output=RUFF_OUTPUT) == [f"{path}:{line}: silenced-linter"]


def test_silencing_ruff_evidence(project: Path) -> None:
    before = snapshot(project)
    (project / "pyproject.toml").write_text(PYPROJECT + 'extend-ignore = ["F401"]\n')
    [finding] = find_cheating(project, before, GuardContext(command="ruff check .", failure_output=RUFF_OUTPUT),
                              guards=["condition"])
    assert finding.describe() == ("pyproject.toml:9: silenced-linter: `lint.extend-ignore` adds F401: ruff no longer "
                                  "reports F401")


@pytest.mark.parametrize("edit", [
    {"calc.py": "def add(a, b):\n    return a + b\n"},                                 # the real fix
    {"pyproject.toml": PYPROJECT.replace('["E", "F"]', '["E", "F", "I", "UP"]')},    # more rules
    {"pyproject.toml": PYPROJECT + 'extend-select = ["B"]\n'},
    {"pyproject.toml": PYPROJECT.replace('["E", "F"]', '["ALL"]') + 'ignore = ["D", "ANN"]\n'},  # ALL minus some
    {"pyproject.toml": PYPROJECT.replace("line-length = 100", "line-length = 88")},  # stricter
    {"pyproject.toml": PYPROJECT + '\n[tool.ruff.format]\nquote-style = "single"\n'},
    {"pyproject.toml": PYPROJECT.replace('name = "calc"', 'name = "calc"\nversion = "2.0"')},  # not ruff's table
    {"calc.py": "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n"},  # formatting, annotations
    {"calc.py": "import os  # noqa: F401  (re-exported)\n\n\ndef add(a, b):\n    return a + b\n"},  # one line
])
def test_honest_changes_under_ruff_pass(project: Path, edit: dict[str, str]) -> None:
    assert judged(project, edit, "ruff check .", output=RUFF_OUTPUT) == []


def test_a_linter_only_counts_when_the_condition_runs_it(project: Path) -> None:
    edit = {"pyproject.toml": PYPROJECT + 'ignore = ["F401"]\n', "calc.py": "# ruff: noqa\n"}
    assert judged(project, edit, "python3 -m pytest -q") == []


def test_a_config_file_named_on_the_command_line_is_judged(project: Path) -> None:
    commit(project, {"cfg/lint.toml": 'line-length = 100\n'})
    edit = {"cfg/lint.toml": 'line-length = 100\nexclude = ["calc.py"]\n'}
    assert judged(project, edit, "uv run ruff check --config cfg/lint.toml .") == ["cfg/lint.toml:2: silenced-linter"]


def test_a_nested_ruff_config_that_replaces_the_parent_is_rejected(project: Path) -> None:
    commit(project, {"pkg/mod.py": "import os\n"})
    assert judged(project, {"pkg/ruff.toml": "line-length = 100\n"}, "ruff check .") == [
        "pkg/ruff.toml:1: silenced-linter"]
    extending = {"pkg/ruff.toml": 'extend = "../pyproject.toml"\n[lint]\nextend-select = ["B"]\n'}
    assert judged(project, extending, "ruff check .") == []


@pytest.mark.parametrize(("files", "edit", "expected"), [
    ({"setup.cfg": "[flake8]\nmax-line-length = 100\n"},
     {"setup.cfg": "[flake8]\nmax-line-length = 100\nextend-ignore = F401\n"}, ["setup.cfg:3: silenced-linter"]),
    ({".flake8": "[flake8]\nexclude = .git\n"}, {".flake8": "[flake8]\nexclude = .git,calc.py\n"},
     [".flake8:2: silenced-linter"]),
    ({"setup.cfg": "[flake8]\nmax-line-length = 100\n"}, {"setup.cfg": "[flake8]\nmax-line-length = 90\n"}, []),
])
def test_flake8(repo: Path, files: dict[str, str], edit: dict[str, str], expected: list[str]) -> None:
    commit(repo, files)
    assert judged(repo, edit, "flake8 .", output=RUFF_OUTPUT) == expected


MYPY = "[tool.mypy]\nstrict = true\n"


@pytest.mark.parametrize(("edit", "expected"), [
    ({"pyproject.toml": MYPY + "ignore_errors = true\n"}, ["pyproject.toml:3: silenced-linter"]),
    ({"pyproject.toml": MYPY + 'exclude = ["calc\\\\.py"]\n'}, ["pyproject.toml:3: silenced-linter"]),
    ({"pyproject.toml": MYPY + '\n[[tool.mypy.overrides]]\nmodule = "calc"\nignore_missing_imports = true\n'},
     ["pyproject.toml:6: silenced-linter"]),
    ({"pyproject.toml": "[tool.mypy]\nstrict = false\n"}, ["pyproject.toml:2: silenced-linter"]),
    ({"mypy.ini": "[mypy]\nstrict = True\n\n[mypy-calc]\nignore_errors = True\n"}, ["mypy.ini:5: silenced-linter"]),
    ({"calc.py": "# type: ignore\ndef add(a, b):\n    return a + b\n"}, ["calc.py:1: silenced-linter"]),
    ({"calc.py": "# mypy: ignore-errors\ndef add(a, b):\n    return a + b\n"}, ["calc.py:1: silenced-linter"]),
    ({"pyproject.toml": MYPY + "warn_unreachable = true\n"}, []),                    # stricter
    ({"calc.py": "def add(a: int, b: int) -> int:\n    return a + b\n"}, []),       # the real fix
    ({"calc.py": "def add(a, b):\n    return a + b  # type: ignore[no-untyped-def]\n"}, []),  # one line
])
def test_mypy(repo: Path, edit: dict[str, str], expected: list[str]) -> None:
    commit(repo, {"pyproject.toml": MYPY, "calc.py": "def add(a, b):\n    return a + b\n"})
    assert judged(repo, edit, "python3 -m mypy .") == expected


ESLINTRC = json.dumps({"rules": {"no-unused-vars": "error", "eqeqeq": ["error", "always"]}}, indent=2) + "\n"
FLAT = "export default [\n  {\n    rules: { 'no-unused-vars': 'error' },\n  },\n];\n"


@pytest.mark.parametrize(("edit", "expected"), [
    ({".eslintrc.json": ESLINTRC.replace('"no-unused-vars": "error"', '"no-unused-vars": "off"')},
     [".eslintrc.json:3: silenced-linter"]),
    ({".eslintrc.json": ESLINTRC.replace('{\n', '{\n  "ignorePatterns": ["calc.js"],\n', 1)},
     [".eslintrc.json:2: silenced-linter"]),
    ({"eslint.config.js": FLAT.replace("  {\n", "  { ignores: ['calc.js'] },\n  {\n", 1)},
     ["eslint.config.js:2: silenced-linter"]),
    ({"eslint.config.js": FLAT.replace("'error'", "'warn'")}, ["eslint.config.js:3: silenced-linter"]),
    ({"calc.js": "/* eslint-disable */\nexport const add = (a, b) => a + b;\n"}, ["calc.js:1: silenced-linter"]),
    ({".eslintrc.json": ESLINTRC.replace('"always"]', '"always"],\n    "no-var": "error"')}, []),   # a new rule
    ({"calc.js": "export const add = (a, b) => a + b;\n"}, []),                                 # the real fix
    ({"calc.js": "// eslint-disable-next-line no-console\nexport const add = (a, b) => a + b;\n"}, []),
])
def test_eslint(repo: Path, edit: dict[str, str], expected: list[str]) -> None:
    commit(repo, {".eslintrc.json": ESLINTRC, "eslint.config.js": FLAT, "calc.js": "const unused = 1;\n"})
    assert judged(repo, edit, "npx eslint .") == expected


# -- axpipe guard --command -------------------------------------------------------------


def test_axpipe_guard_judges_the_command_it_is_given(cli: CLI, project: Path) -> None:
    (project / "smoke.sh").write_text("#!/bin/sh\necho 'smoke: PASS'\n")
    plain = cli("guard")
    assert plain.exit_code == 0, plain.stdout  # without a command there is no condition to redefine
    result = cli("guard", "--command", "./smoke.sh", "--json")
    assert result.exit_code == 1, result.stderr
    assert json.loads(result.stdout) == [{
        "guard": "redefined-condition", "file": "smoke.sh", "line": 2,
        "evidence": "smoke.sh defines the success condition (`./smoke.sh` runs it); the change edits it (+1 -1), "
                    "which redefines the condition instead of meeting it"}]


def test_axpipe_guard_runs_the_command_from_the_current_folder(cli: CLI, project: Path) -> None:
    commit(project, {"svc/smoke.sh": SMOKE})
    (project / "svc" / "smoke.sh").write_text("echo 'smoke: PASS'\n")
    result = cli("guard", "--command", "./smoke.sh", cwd=project / "svc")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.stdout.startswith("svc/smoke.sh:1: redefined-condition: ")
    assert "[condition]" in result.stdout


def test_axpipe_guard_judges_a_patch_against_the_command(cli: CLI, project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.replace("line-length = 100\n",
                                                              'line-length = 100\nextend-exclude = ["calc.py"]\n'))
    patch = tmp_path / "fix.diff"
    patch.write_text(git(project, "diff"))
    git(project, "checkout", "--", ".")
    result = cli("guard", "--patch", str(patch), "--command", "ruff check .", "--command", "./smoke.sh")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "pyproject.toml:6: silenced-linter: `extend-exclude` adds 'calc.py': ruff stops checking" in result.stdout


@pytest.mark.parametrize(("value", "message"), [
    ("", "--command: empty command; give the command the change must not redefine"),
    ("./smoke.sh 'unbalanced", "--command: not a valid shell command (No closing quotation): "),
])
def test_axpipe_guard_refuses_a_bad_command(cli: CLI, project: Path, value: str, message: str) -> None:
    (project / "smoke.sh").write_text("echo 'smoke: PASS'\n")
    result = cli("guard", "--command", value)
    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""
    assert (project / "smoke.sh").read_text() == "echo 'smoke: PASS'\n"  # nothing changed
