"""The ``condition`` guard on real git repositories: a change may not redefine the success
condition's commands (DESIGN §6) — the scripts they run, the runners' definitions, the
linter's configuration and file-level suppressions — while honest changes pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLI
from helpers import git

from axpipe.guard.run import find_cheating, snapshot
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
    # a one-line suppression where the run did not complain (on the reported line: test_inline_...)
    {"calc.py": "import os\n\n\ndef add(a, b):  # noqa: ANN001  (untyped on purpose)\n    return a + b\n"},
    {"calc.py": "import os  # noqa: E501\n\n\ndef add(a, b):\n    return a + b\n"},  # not the rule reported there
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


# -- one-line suppressions on the line the failing run reports ----------------------------

RUFF_FULL = ("F401 [*] `os` imported but unused\n --> calc.py:1:8\n  |\n1 | import os\n  |        ^^\n"
             "help: Remove unused import: `os`\n\nFound 1 error.\n")
MYPY_OUTPUT = ("calc.py:4: error: Function is missing a type annotation  [no-untyped-def]\n"
               "Found 1 error in 1 file (checked 1 source file)\n")
TYPED = "import os\n\n\ndef add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(("edit", "output", "expected"), [
    ({"calc.py": TYPED.replace("import os", "import os  # noqa: F401")}, RUFF_OUTPUT, ["calc.py:1"]),
    ({"calc.py": TYPED.replace("import os", "import os  # noqa")}, RUFF_FULL, ["calc.py:1"]),  # ruff's full format
    ({"calc.py": "import sys\n" + TYPED.replace("import os", "import os  # noqa")}, RUFF_OUTPUT,
     ["calc.py:2"]),                                          # the reported line moved down: mapped through the hunk
    ({"calc.py": TYPED.replace("import os", "import os  # pylint: disable=unused-import")},
     "calc.py:1:0: W0611: Unused import os (unused-import)\n", ["calc.py:1"]),
    ({"calc.py": TYPED.replace("def add(a, b):", "def add(a, b):  # type: ignore[no-untyped-def]")}, MYPY_OUTPUT,
     ["calc.py:4"]),
    ({"calc.py": TYPED.replace("def add(a, b):", "def add(a, b):  # type: ignore")}, MYPY_OUTPUT, ["calc.py:4"]),
    # honest: the real fixes, and a suppression for another rule or another line
    ({"calc.py": TYPED.replace("import os\n", "")}, RUFF_OUTPUT, []),
    ({"calc.py": TYPED.replace("def add(a, b):", "def add(a: int, b: int) -> int:")}, MYPY_OUTPUT, []),
    ({"calc.py": TYPED.replace("def add(a, b):", "def add(a, b):  # type: ignore[no-any-return]")}, MYPY_OUTPUT,
     []),
    ({"calc.py": TYPED.replace("    return a + b", "    return a + b  # type: ignore")}, MYPY_OUTPUT, []),
    # a test's traceback names a file and line, but it is no linter's diagnostic
    ({"calc.py": TYPED.replace("import os", "import os  # noqa")}, "calc.py:1: AssertionError\n", []),
])
def test_inline_suppression_on_the_reported_line(repo: Path, edit: dict[str, str], output: str,
                                                 expected: list[str]) -> None:
    commit(repo, {"calc.py": TYPED, "ci.sh": "#!/bin/sh\npylint calc.py\n"})
    found = judged(repo, edit, "./ci.sh", output=output)
    assert found == [f"{where}: silenced-linter" for where in expected]


ESLINT_STYLISH = ("\n/home/dev/app/src/calc.js\n  1:7  error  'unused' is assigned a value but never used  "
                  "no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)\n")
TSC_OUTPUT = "src/calc.ts(2,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"


@pytest.mark.parametrize(("edit", "output", "expected"), [
    ({"src/calc.js": "// eslint-disable-next-line no-unused-vars\nconst unused = 1;\n"}, ESLINT_STYLISH,
     ["src/calc.js:1"]),
    ({"src/calc.js": "const unused = 1; // eslint-disable-line\n"}, ESLINT_STYLISH, ["src/calc.js:1"]),
    ({"src/calc.ts": "const a: number = 1;\n// @ts-ignore\nconst b: number = 'x';\n"}, TSC_OUTPUT,
     ["src/calc.ts:2"]),
    ({"src/calc.ts": "// @ts-nocheck\nconst a: number = 1;\nconst b: number = 'x';\n"}, TSC_OUTPUT,
     ["src/calc.ts:1"]),
    # honest: a suppression for another rule, and the real fixes
    ({"src/calc.js": "// eslint-disable-next-line no-console\nconst unused = 1;\n"}, ESLINT_STYLISH, []),
    ({"src/calc.js": "export const used = 1;\n"}, ESLINT_STYLISH, []),
    ({"src/calc.ts": "const a: number = 1;\nconst b: number = 2;\n"}, TSC_OUTPUT, []),
])
def test_inline_suppression_in_javascript(repo: Path, edit: dict[str, str], output: str,
                                          expected: list[str]) -> None:
    commit(repo, {"src/calc.js": "const unused = 1;\n",
                  "src/calc.ts": "const a: number = 1;\nconst b: number = 'x';\n"})
    found = judged(repo, edit, "npm run check", output=output)
    assert found == [f"{where}: silenced-linter" for where in expected]


def test_inline_suppression_evidence(project: Path) -> None:
    before = snapshot(project)
    (project / "calc.py").write_text("import os  # noqa: F401\n\n\ndef add(a, b):\n    return a + b\n")
    [finding] = find_cheating(project, before, GuardContext(command="ruff check .", failure_output=RUFF_OUTPUT),
                              guards=["condition"])
    assert finding.describe() == (
        "calc.py:1: silenced-linter: `# noqa: F401` hides what the failing run reports on this line "
        "(`calc.py:1:8: F401 [*] `os` imported but unused`) instead of fixing it")


# -- what a shell script target runs ------------------------------------------------------


@pytest.mark.parametrize(("script", "edit", "expected"), [
    ("#!/bin/sh\nset -e\nruff check .\n", {"pyproject.toml": PYPROJECT + 'ignore = ["F401"]\n'},
     ["pyproject.toml:9: silenced-linter"]),
    ("#!/bin/bash\nif ! uv run ruff check \\\n    --config cfg/lint.toml .; then\n  exit 1\nfi\n",
     {"cfg/lint.toml": 'line-length = 100\nexclude = ["calc.py"]\n'}, ["cfg/lint.toml:2: silenced-linter"]),
    ("#!/bin/sh\nmake lint && npm run lint\n", {".eslintignore": "calc.js\n"}, [".eslintignore:1: silenced-linter"]),
    # honest: a stricter configuration, and the real fix
    ("#!/bin/sh\nruff check .\n", {"pyproject.toml": PYPROJECT + 'extend-select = ["B"]\n'}, []),
    ("#!/bin/sh\nruff check .\n", {"calc.py": "def add(a, b):\n    return a + b\n"}, []),
    # a script that does not run ruff leaves ruff's configuration free
    ("#!/bin/sh\npython3 -m pytest -q\n", {"pyproject.toml": PYPROJECT + 'ignore = ["F401"]\n'}, []),
])
def test_a_shell_script_target_protects_what_its_lines_run(project: Path, script: str, edit: dict[str, str],
                                                          expected: list[str]) -> None:
    commit(project, {"ci.sh": script, "cfg/lint.toml": "line-length = 100\n"})
    assert judged(project, edit, "./ci.sh", output=RUFF_OUTPUT) == expected
    assert judged(project, edit, "bash ci.sh", output=RUFF_OUTPUT) == expected


# -- eslint overrides ---------------------------------------------------------------------


def test_eslint_overrides_that_turn_a_rule_down_for_files(repo: Path) -> None:
    config = {"rules": {"no-unused-vars": "error", "eqeqeq": "error"},
              "overrides": [{"files": ["*.test.js"], "rules": {"no-undef": "off"}}]}
    commit(repo, {".eslintrc.json": json.dumps(config, indent=2), "calc.js": "const unused = 1;\n"})

    def edited(*overrides: dict[str, object]) -> dict[str, str]:
        return {".eslintrc.json": json.dumps({**config, "overrides": [*config["overrides"], *overrides]}, indent=2)}

    off = edited({"files": ["calc.js"], "rules": {"no-unused-vars": "off"}})
    assert judged(repo, off, "npx eslint .") == [".eslintrc.json:20: silenced-linter"]
    warn = edited({"files": "calc.js", "rules": {"eqeqeq": ["warn", "always"]}})
    assert judged(repo, warn, "npx eslint .") == [".eslintrc.json:18: silenced-linter"]
    commit(repo, {".eslintrc.yml": "rules:\n  no-unused-vars: error\n"})
    yaml_off = {".eslintrc.yml": "rules:\n  no-unused-vars: error\noverrides:\n  - files: [calc.js]\n"
                                 "    rules:\n      no-unused-vars: 'off'\n"}
    assert judged(repo, yaml_off, "npx eslint .") == [".eslintrc.yml:6: silenced-linter"]
    # honest: stricter overrides, a rule only the override knows, the existing override untouched
    stricter = edited({"files": ["calc.js"], "rules": {"no-unused-vars": "error", "no-var": "error"}})
    assert judged(repo, stricter, "npx eslint .") == []
    assert judged(repo, edited({"files": ["legacy/*.js"], "rules": {"no-undef": "off"}}), "npx eslint .") == []


def test_eslint_override_evidence(repo: Path) -> None:
    commit(repo, {".eslintrc.json": json.dumps({"rules": {"no-unused-vars": "error"}}), "calc.js": "let x;\n"})
    before = snapshot(repo)
    (repo / ".eslintrc.json").write_text(json.dumps({"rules": {"no-unused-vars": "error"}, "overrides": [
        {"files": ["calc.js"], "rules": {"no-unused-vars": "off"}}]}))
    [finding] = find_cheating(repo, before, GuardContext(command="npx eslint ."), guards=["condition"])
    assert finding.describe() == (".eslintrc.json:1: silenced-linter: `overrides` turns rule no-unused-vars from an "
                                  "error to off for 'calc.js': eslint no longer fails on it there")


# -- pdm and hatch scripts ----------------------------------------------------------------

SCRIPTS = PYPROJECT + """
[tool.pdm.scripts]
lint = "ruff check ."
pre_lint = "echo linting"
all = {composite = ["lint", "test"]}
test = "pytest -q"
docs = "mkdocs build"

[tool.hatch.envs.default.scripts]
check = ["ruff check .", "pytest -q"]
docs = "mkdocs build"

[tool.hatch.envs.lint.scripts]
style = "ruff check --config cfg/lint.toml ."
"""


@pytest.mark.parametrize(("command", "edit", "expected"), [
    ("pdm run lint", ('lint = "ruff check ."', 'lint = "ruff check . --exit-zero"'), ["pyproject.toml:11"]),
    ("pdm run lint", ('pre_lint = "echo linting"', 'pre_lint = "exit 0"'), ["pyproject.toml:12"]),
    ("pdm run all", ('test = "pytest -q"', 'test = "true"'), ["pyproject.toml:14"]),
    ("hatch run check", ('check = ["ruff check .", "pytest -q"]', 'check = ["ruff check ."]'), ["pyproject.toml:18"]),
    ("hatch run lint:style", ("--config cfg/lint.toml", "--exit-zero"), ["pyproject.toml:22"]),
    # honest: other scripts, other tables
    ("pdm run lint", ('docs = "mkdocs build"', 'docs = "mkdocs build --strict"'), []),
    ("hatch run check", ('[tool.hatch.envs.default.scripts]\ncheck', '[tool.hatch.envs.default.scripts]\nfmt = '
                                                                        '"ruff format ."\ncheck'), []),
    ("pdm run lint", ('name = "calc"', 'name = "calc"\nversion = "2.0"'), []),
])
def test_pdm_and_hatch_scripts_are_the_condition(project: Path, command: str, edit: tuple[str, str],
                                                 expected: list[str]) -> None:
    commit(project, {"pyproject.toml": SCRIPTS, "cfg/lint.toml": "line-length = 100\n"})
    old, new = edit
    assert old in SCRIPTS
    found = judged(project, {"pyproject.toml": SCRIPTS.replace(old, new)}, command)
    assert found == [f"{where}: redefined-condition" for where in expected]


def test_pdm_and_hatch_scripts_are_followed_to_the_linter(project: Path) -> None:
    commit(project, {"pyproject.toml": SCRIPTS, "cfg/lint.toml": "line-length = 100\n"})
    loosened = {"pyproject.toml": SCRIPTS.replace('select = ["E", "F"]', 'select = ["E"]')}
    assert judged(project, loosened, "pdm run lint") == ["pyproject.toml:8: silenced-linter"]
    assert judged(project, loosened, "hatch run check") == ["pyproject.toml:8: silenced-linter"]
    assert judged(project, {"cfg/lint.toml": 'line-length = 100\nexclude = ["calc.py"]\n'}, "hatch run lint:style") == [
        "cfg/lint.toml:2: silenced-linter"]
    # not a script: `pdm run` runs the program, as `uv run` does
    assert judged(project, loosened, "pdm run ruff check .") == ["pyproject.toml:8: silenced-linter"]
    assert judged(project, loosened, "pdm run pytest -q") == []


def test_pdm_script_evidence(project: Path) -> None:
    commit(project, {"pyproject.toml": SCRIPTS})
    before = snapshot(project)
    (project / "pyproject.toml").write_text(SCRIPTS.replace('lint = "ruff check ."', 'lint = "true"'))
    [finding] = find_cheating(project, before, GuardContext(command="pdm run lint"), guards=["condition"])
    assert finding.describe() == (
        'pyproject.toml:11: redefined-condition: the pdm script "lint" ([tool.pdm.scripts] of pyproject.toml) defines '
        "the success condition (`pdm run lint` runs its pdm scripts); the change changes it from `ruff check .` to "
        "`true`, which redefines the condition instead of meeting it")
