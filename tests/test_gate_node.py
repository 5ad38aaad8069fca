"""The gate's test phase on real Node projects: vitest, jest (installed from npm once per
session) and ``node --test``. A ``--bail`` run is not taken for a complete one, a linked
package does not make the baseline run the workspace's code, and all three runners are
narrowed without report flags.

Skipped only where Node.js or npm is missing (CI has both); an npm install that fails is a
test failure.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import git, run_cli

# The first test fails before the change and after it, the same way; the change breaks the
# three others. With --bail the run stops at the first failure and sees only the old one.
SUM_TESTS = """import {{ describe, test, expect }} from "{runner}";
import {{ sum }} from "{module}";

test("a known failure", () => {{ expect(sum(0, 0)).toBe(1); }});
describe("sum", () => {{
  test("adds 1", () => {{ expect(sum(1, 1)).toBe(2); }});
  test("adds 2", () => {{ expect(sum(2, 2)).toBe(4); }});
  test("adds 3", () => {{ expect(sum(3, 3)).toBe(6); }});
}});
"""
SUM = "export const sum = (a, b) => a + b;\n"
BROKEN = "export const sum = (a, b) => a - b;\n"


def install(root: Path, modules: Path, linked: dict[str, str] | None = None) -> None:
    """``root/node_modules`` as npm leaves it: the installed packages, and packages of the
    project's own linked in (npm workspaces, ``npm link``)."""
    target = root / "node_modules"
    target.mkdir()
    for entry in modules.iterdir():
        (target / entry.name).symlink_to(entry)
    for name, folder in (linked or {}).items():
        (target / name).symlink_to(Path("..") / folder)


def commit(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "project")


def gate(root: Path, test: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("gate", "--baseline", "HEAD", "--json", "--test", test, cwd=root, timeout=300)
    assert result.stdout.startswith("{"), result.stderr
    return result.exit_code, json.loads(result.stdout)


def verdicts(report: dict[str, Any]) -> dict[str, list[str]]:
    items = report["phases"][0]["items"]
    return {verdict: sorted(item["subject"] for item in items if item["verdict"] == verdict)
            for verdict in ("blamed", "pre-existing")}


PACKAGE = '{"name": "web", "private": true, "type": "module"}\n'
GITIGNORE = "node_modules/\n"


def sum_project(root: Path, modules: Path) -> None:
    """A vitest project whose tests use a package of its own, linked into node_modules."""
    install(root, modules, {"mylib": "packages/mylib"})
    commit(root, {".gitignore": GITIGNORE, "package.json": PACKAGE,
                  "packages/mylib/package.json": '{"name": "mylib", "type": "module", "main": "index.js"}\n',
                  "packages/mylib/index.js": SUM,
                  "test/sum.test.js": SUM_TESTS.format(runner="vitest", module="mylib")})


VITEST_BROKEN = ["test/sum.test.js::sum > adds 1", "test/sum.test.js::sum > adds 2", "test/sum.test.js::sum > adds 3"]
VITEST_KNOWN = "test/sum.test.js::a known failure"
JUNIT = "--reporter=junit --outputFile={junit_xml}"  # as the reports had it: the gate read JUnit XML


def test_a_bail_run_of_vitest_blames_every_broken_test(repo: Path, node_modules: Path) -> None:
    sum_project(repo, node_modules)
    (repo / "packages" / "mylib" / "index.js").write_text(BROKEN)
    code, report = gate(repo, f"node_modules/.bin/vitest run --bail=1 {JUNIT}")
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": VITEST_BROKEN, "pre-existing": [VITEST_KNOWN]}


def test_a_linked_package_does_not_make_the_baseline_run_the_workspace(repo: Path, node_modules: Path) -> None:
    # From the worktree (inside the workspace), Node would find the workspace's node_modules and,
    # through the link, the workspace's packages/mylib: the changed code, at the "baseline".
    sum_project(repo, node_modules)
    (repo / "packages" / "mylib" / "index.js").write_text(BROKEN)
    code, report = gate(repo, f"npx vitest run {JUNIT}")
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": VITEST_BROKEN, "pre-existing": [VITEST_KNOWN]}
    items = {item["subject"]: item["why"] for item in report["phases"][0]["items"]}
    assert items[VITEST_BROKEN[0]] == "it passes at the baseline"


def test_a_linked_package_the_baseline_lacks_is_not_found_in_the_workspace(repo: Path, node_modules: Path) -> None:
    # mylib is new: at the baseline, the test that imports it cannot load (it is blamed), and
    # the look-up does not walk up into the workspace's node_modules to find the new code.
    install(repo, node_modules, {"mylib": "packages/mylib"})
    commit(repo, {".gitignore": GITIGNORE, "package.json": PACKAGE,
                  "test/sum.test.js": SUM_TESTS.format(runner="vitest", module="mylib")})
    commit_free = {"packages/mylib/package.json": '{"name": "mylib", "type": "module", "main": "index.js"}\n',
                   "packages/mylib/index.js": BROKEN}
    for name, text in commit_free.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    code, report = gate(repo, f"npx vitest run {JUNIT}")
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": sorted([VITEST_KNOWN, *VITEST_BROKEN]), "pre-existing": []}
    why = {item["subject"]: item["why"] for item in report["phases"][0]["items"]}[VITEST_KNOWN]
    assert why.startswith("its file failed as a whole at the baseline (") and "mylib" in why, why


def test_a_plain_jest_command_is_narrowed(repo: Path, node_modules: Path) -> None:
    install(repo, node_modules)
    commit(repo, {".gitignore": GITIGNORE, "package.json": '{"name": "web", "private": true}\n',
                  "sum.js": SUM.replace("export const sum =", "exports.sum ="),
                  "__tests__/sum.test.js": SUM_TESTS.format(runner="@jest/globals", module="../sum.js")
                  .replace('import { describe, test, expect } from "@jest/globals";\nimport { sum } from "../sum.js";',
                           'const { sum } = require("../sum.js");'),
                  "__tests__/later.test.js": 'test("later", () => { expect(1).toBe(1); });\n'})
    (repo / "sum.js").write_text("exports.sum = (a, b) => (a === 2 ? a + b : a - b);\n")  # breaks adds 1 and 3
    code, report = gate(repo, "npx jest --bail")
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": ["__tests__/sum.test.js::sum > adds 1",
                                           "__tests__/sum.test.js::sum > adds 3"],
                                "pre-existing": ["__tests__/sum.test.js::a known failure"]}
    assert "without --bail" in report["phases"][0]["summary"]


NODE_TESTS = """import { describe, test } from "node:test";
import assert from "node:assert";
import { sum } from "../sum.js";

test("a known failure", () => { assert.strictEqual(sum(0, 0), 1); });
describe("sum", () => {
  test("adds 1", () => { assert.strictEqual(sum(1, 1), 2); });
  test("adds 2", () => { assert.strictEqual(sum(2, 2), 4); });
});
"""


def test_a_plain_node_test_command_is_narrowed(repo: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (CI has it)")
    commit(repo, {"package.json": PACKAGE, "sum.js": SUM, "test/sum.test.js": NODE_TESTS,
                  "test/broken.test.js": 'import "./missing.js";\n'})
    (repo / "sum.js").write_text("export const sum = (a, b) => (a === 2 ? a - b : a + b);\n")  # breaks adds 2
    code, report = gate(repo, "node --test test/")
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": ["test/sum.test.js::sum > adds 2"],
                                "pre-existing": ["test/broken.test.js::test/broken.test.js",
                                                 "test/sum.test.js::a known failure"]}
