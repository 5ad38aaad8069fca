"""Test identity from the Node runners (axpipe.guard.runner_listings): ``vitest list --json``
names every test case, ``jest --listTests --json`` every test file, at the base and after the
change. The real runners from npm (the session's ``node_modules`` fixture), the real CLI, real
repositories; the checkout is left as it was found.

Skipped only where Node.js or npm is missing (CI has both)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CLI
from helpers import git

# Cases made in a loop: no test is written out, so only the runner can count them.
GENERATED = """import { expect, test } from "vitest";

for (const n of [1, 2, 3]) {
  test(`doubles ${n}`, () => { expect(n * 2).toBe(n + n); });
}
"""
WRITTEN_OUT = """import { expect, test } from "vitest";

test("adds 1", () => { expect(1 + 1).toBe(2); });
test("adds 2", () => { expect(2 + 2).toBe(4); });
"""
# The same two cases, now one table: an honest refactor.
AS_TABLE = """import { expect, test } from "vitest";

test.each([1, 2])("adds %i", (n) => { expect(n + n).toBe(2 * n); });
"""
JEST_TESTS = """const { sum } = require("../sum.js");

test("adds", () => { expect(sum(1, 2)).toBe(3); });
"""


def project(repo: Path, node_modules: Path, files: dict[str, str]) -> None:
    """A committed Node project whose ``node_modules`` is the session's install (ignored)."""
    (repo / "node_modules").symlink_to(node_modules)
    files = {".gitignore": "node_modules\n", **files}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "project")


def findings(result: object) -> list[dict[str, object]]:
    payload: list[dict[str, object]] = json.loads(result.stdout)  # type: ignore[attr-defined]
    return payload


def test_vitest_finds_a_case_that_is_no_longer_listed(cli: CLI, repo: Path, node_modules: Path) -> None:
    project(repo, node_modules, {"package.json": '{"name": "web", "private": true, "type": "module"}\n',
                                 "test/double.test.js": GENERATED})
    (repo / "test/double.test.js").write_text(GENERATED.replace("[1, 2, 3]", "[1, 2]"))
    assert findings(cli("guard", "--json")) == []  # the text cannot see a case made in a loop
    result = cli("guard", "--json", "--runner", "vitest", timeout=300)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert [(item["guard"], item["file"]) for item in findings(result)] == [("deleted-test", "test/double.test.js")]
    [finding] = findings(result)
    assert "doubles 3" in str(finding["evidence"]) and "no longer collected by vitest" in str(finding["evidence"])
    assert git(repo, "status", "--porcelain", "--ignored").splitlines() == [
        " M test/double.test.js", "!! node_modules"]


def test_vitest_keeps_cases_that_became_a_table(cli: CLI, repo: Path, node_modules: Path) -> None:
    project(repo, node_modules, {"package.json": '{"name": "web", "private": true, "type": "module"}\n',
                                 "test/add.test.js": WRITTEN_OUT})
    (repo / "test/add.test.js").write_text(AS_TABLE)
    result = cli("guard", "--json", "--runner", "vitest", timeout=300)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert findings(result) == []
    # without the runner's names the two cases must be judged from the text, and still pass
    assert "test identity judged from the change's text" not in result.stderr


def test_jest_finds_a_test_file_its_config_no_longer_runs(cli: CLI, repo: Path, node_modules: Path) -> None:
    package = {"name": "api", "private": True, "jest": {"testPathIgnorePatterns": ["/node_modules/"]}}
    project(repo, node_modules, {"package.json": json.dumps(package) + "\n",
                                 "sum.js": "exports.sum = (a, b) => a + b;\n", "__tests__/sum.test.js": JEST_TESTS})
    package["jest"] = {"testPathIgnorePatterns": ["/node_modules/", "sum"]}
    (repo / "package.json").write_text(json.dumps(package) + "\n")
    result = cli("guard", "--json", "--runner", "jest", timeout=300)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert ("deleted-test", "__tests__/sum.test.js") in [(item["guard"], item["file"]) for item in findings(result)]
    assert git(repo, "status", "--porcelain", "--ignored").splitlines() == [" M package.json", "!! node_modules"]


def test_jest_keeps_a_test_file_that_moved(cli: CLI, repo: Path, node_modules: Path) -> None:
    project(repo, node_modules, {"package.json": '{"name": "api", "private": true}\n',
                                 "sum.js": "exports.sum = (a, b) => a + b;\n", "__tests__/sum.test.js": JEST_TESTS})
    git(repo, "mv", "__tests__/sum.test.js", "sum.test.js")
    (repo / "sum.test.js").write_text(JEST_TESTS.replace("../sum.js", "./sum.js"))
    result = cli("guard", "--json", "--runner", "jest", timeout=300)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert findings(result) == []
