"""The vitest test adapter against a real vitest, installed from npm once per test session.

Skipped only where Node.js or npm is missing (CI has both). An npm install that fails is a
test failure, not a skip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import git
from review_fixtures import Receipts, text_receipt

from axpipe.interfaces import NamedTest, ReceiptRequest, TestRunReport, TestRunRequest
from axpipe.plugin import registry
from axpipe.testing.reviews import AdapterCase, NamedTestAdapterContract

TESTS = """\
import { describe, expect, test } from "vitest";
import { existsSync, writeFileSync } from "node:fs";

describe("cart", () => {
  describe("totals", () => {
    test("adds lines", () => { expect(1 + 1).toBe(2); });
  });
  test("fails", () => { expect(1).toBe(2); });
  test.skip("skipped", () => {});
  test.todo("later");
  test("twin", () => {});
  test("twin", () => {});
  test.each([1, 2])("param %i", (n) => { expect(n).toBeGreaterThan(0); });
  test("flaky", () => {
    // Fails on its first run only: passes only if vitest retried it.
    const marker = "flaky.marker";
    if (!existsSync(marker)) { writeFileSync(marker, "1"); throw new Error("first run fails"); }
  });
});
"""

# The project asks for retries; the adapter's --retry=0 must win.
CONFIG = """\
import { defineConfig } from "vitest/config";
export default defineConfig({ test: { retry: 3 } });
"""


@pytest.fixture(scope="session")
def vitest_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node_modules with vitest, installed from the npm registry once per session."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("Node.js and npm are not installed; the vitest adapter needs them (CI has both)")
    folder = tmp_path_factory.mktemp("vitest-install")
    version = subprocess.run([npm, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    # npm 10 machines cannot install Vite 8 (docs/reviews.md): there Vite 7 with Vitest 3.
    if int(version.split(".")[0]) <= 10:
        dependencies = {"vitest": "^3.2.0", "vite": "^7.0.0"}
    else:
        dependencies = {"vitest": "4.1.12", "vite": "^8.0.0"}
    (folder / "package.json").write_text(json.dumps({"name": "axpipe-vitest-fixture", "private": True,
                                                     "type": "module", "devDependencies": dependencies}))
    completed = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, f"npm install failed:\n{completed.stdout}\n{completed.stderr}"
    return folder / "node_modules"


@pytest.fixture
def web(tmp_path: Path, vitest_modules: Path) -> Path:
    root = tmp_path / "web"
    (root / "test").mkdir(parents=True)
    (root / "node_modules").symlink_to(vitest_modules)
    (root / "package.json").write_text('{"name": "web", "private": true, "type": "module"}\n')
    (root / "vitest.config.ts").write_text(CONFIG)
    (root / "test" / "cart.test.ts").write_text(TESTS)
    (root / "test" / "broken.test.ts").write_text("import { nothing } from './missing.js';\n")
    return root


def run(root: Path, *names: str, file: str = "test/cart.test.ts") -> TestRunReport:
    adapter = registry.load("axpipe.test_adapters", "vitest")
    return adapter.run(TestRunRequest(workspace=root, tests=[NamedTest(file, name) for name in names], timeout=300,
                                      artifacts_dir=root.parent / "artifacts"))


def outcomes(report: TestRunReport) -> list[tuple[str, str, int]]:
    return [(result.test.full_name, result.status.value, result.executions) for result in report.results]


def test_each_named_test_is_reported_with_its_status_and_executions(web: Path) -> None:
    report = run(web, "cart totals adds lines", "cart fails", "cart skipped", "cart later", "cart param 2",
                 "cart gone", "cart twin", "cart flaky")
    assert report.error is None, report.error
    assert outcomes(report) == [
        ("cart totals adds lines", "passed", 1), ("cart fails", "failed", 1), ("cart skipped", "skipped", 1),
        ("cart later", "skipped", 1), ("cart param 2", "passed", 1), ("cart gone", "missing", 0),
        ("cart twin", "passed", 2),     # two tests share the full name: ambiguous
        ("cart flaky", "failed", 1)]    # the config's retry: 3 did not apply
    assert "--retry=0" in report.commands[0] and "--reporter=json" in report.commands[0]


def test_names_are_matched_exactly_not_by_prefix(web: Path) -> None:
    (totals, param) = run(web, "cart totals", "cart param").results
    assert (totals.status.value, totals.executions) == ("missing", 0)
    assert totals.note.startswith("not run under this exact name; 1 test(s) share it as a prefix "
                                  "(cart totals adds lines)")
    assert param.note.startswith("not run under this exact name; 2 test(s) share it as a prefix")


def test_a_file_that_fails_to_load_leaves_its_tests_missing_with_the_reason(web: Path) -> None:
    (result,) = run(web, "anything", file="test/broken.test.ts").results
    assert (result.status.value, result.executions) == ("missing", 0)
    assert result.note.startswith("the file failed: ")


def test_a_project_without_vitest_installed_says_so(tmp_path: Path) -> None:
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.ts").write_text("")
    (result,) = run(tmp_path, "a", file="test/a.test.ts").results
    assert result.status.value == "missing"
    assert result.note.startswith("vitest is not installed for this file")


def test_the_verifier_runs_vitest_regressions(repo: Path, vitest_modules: Path) -> None:
    """A fixed finding whose regression is a vitest test, end to end through `receipts verify`."""
    (repo / "node_modules").symlink_to(vitest_modules)
    receipts = Receipts(repo, repo / "review", "", "")
    receipts.commit(".gitignore", "node_modules\n", "ignore installed packages")
    receipts.commit("package.json", '{"name": "web", "private": true, "type": "module"}\n', "package")
    receipts.commit("src/sum.js", "export const sum = (a, b) => a - b;\n", "sum")
    receipts.a = git(repo, "rev-parse", "HEAD").strip()
    receipts.commit("src/sum.js", "export const sum = (a, b) => a + b;\n", "fix sum")
    receipts.b = receipts.commit("test/sum.test.js", 'import { test, expect } from "vitest";\n'
                                 'import { sum } from "../src/sum.js";\n'
                                 'test("sum adds", () => { expect(sum(2, 3)).toBe(5); });\n', "regression")
    rounds = ((1, receipts.a, "VERDICT: findings S1"), (2, receipts.b, "VERDICT: no findings"))
    for number, revision, verdict in rounds:
        receipts.write(f"round-{number}/revision.txt", revision + "\n")
        for file, text in text_receipt(verdict).items():
            receipts.write(f"round-{number}/web/{file}", text)
    receipts.set_dispositions({"findings": [{"round": 1, "cli": "web", "id": "S1", "status": "fixed",
                                             "evidence": "sum subtracted",
                                             "regression": {"file": "test/sum.test.js", "fullName": "sum adds"}}]})
    verifier = registry.load("axpipe.receipt_verifiers", "cli-review")
    report = verifier.verify(ReceiptRequest(root=receipts.root, workspace=repo, test_dir="test",
                                            artifacts_dir=repo.parent / "artifacts"))
    assert [p.render() for p in report.problems] == []
    assert [(t.test.full_name, t.status.value, t.executions) for t in report.tests] == [("sum adds", "passed", 1)]


class TestVitestConformance(NamedTestAdapterContract):
    adapter = "vitest"

    @pytest.fixture(autouse=True)
    def _installed(self, vitest_modules: Path) -> None:
        self.modules = vitest_modules

    def project(self, folder: Path) -> AdapterCase:
        (folder / "node_modules").symlink_to(self.modules)
        (folder / "package.json").write_text('{"name": "c", "private": true, "type": "module"}\n')
        (folder / "one.test.js").write_text('import { test, expect } from "vitest";\n'
                                            'test("ok", () => {});\ntest("bad", () => { expect(1).toBe(2); });\n')
        return AdapterCase(file="one.test.js", passing="ok", failing="bad")
