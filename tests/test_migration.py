"""The migration-batch recipe on the ledger sample: batches accumulate coverage, a bug is
fixed by the scripted migrator, and a batch with a missing requirement is blocked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLI


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def coverage_of(stdout: str) -> dict[str, object]:
    return next(event for event in events(stdout) if event["type"] == "goal.coverage")


def test_batches_accumulate_coverage_until_one_is_blocked(cli: CLI, repo: Path) -> None:
    first = cli("run", "recipe=migration-batch", "batch=invoices", "--json")
    assert first.exit_code == 0, first.stderr
    assert coverage_of(first.stdout)["accepted"] == ["invoices"]
    workspace = repo / ".axpipe" / "workspaces" / "ledger"
    assert (workspace / ".git").is_dir()

    second = cli("run", "recipe=migration-batch", "batch=payments", "--json")
    assert second.exit_code == 0, second.stderr
    agent = next(event for event in events(second.stdout) if event["type"] == "agent.finished")
    assert agent["edited"] == ["src/ledger/payments.py"]
    report = coverage_of(second.stdout)
    assert report["accepted"] == ["invoices", "payments"]
    assert report["remaining"] == {"credit-notes": "not started"}
    assert "passing one batch does not finish the migration" in str(report["summary"])

    third = cli("run", "recipe=migration-batch", "batch=credit-notes")
    assert third.exit_code == 6  # not complete after one pass
    assert "remaining: credit-notes (active)" in third.stdout
    resumed = cli("goal", "resume", "--goal", "migration-batch-credit-notes", cwd=workspace)
    assert resumed.exit_code == 3
    status = json.loads(cli("goal", "status", "--json", "--goal", "migration-batch-credit-notes",
                            cwd=workspace).stdout)
    blocked = status["goal"]["blocked"]
    assert blocked["kind"] == "missing-requirement"
    assert blocked["evidence"] == [status["checks"][0]["receipt"]]


@pytest.mark.parametrize(("batch", "code", "line"), [
    ("invoices", 0, "parity: PASS invoices: 5 rows match export-v1"),
    ("payments", 1, "row 6: migrated 293, legacy 292"),
    ("credit-notes", 1, "parity: FAIL credit-notes: 2 assertion(s) skipped of 2"),
])
def test_the_parity_check_fails_on_mismatch_and_skipped_assertions(batch: str, code: int, line: str) -> None:
    from axpipe import samples

    workspace = samples.prepare("ledger")
    result = subprocess.run([sys.executable, "checks/parity.py", "--batch", batch], cwd=workspace,
                            capture_output=True, text=True)
    assert result.returncode == code and line in result.stdout


def test_the_parity_check_fails_without_the_export_or_with_another_target() -> None:
    from axpipe import samples

    workspace = samples.prepare("ledger")
    init = workspace / "src" / "ledger" / "__init__.py"
    init.write_text('MIGRATED_FROM = "export-v2"\n')
    other = subprocess.run([sys.executable, "checks/parity.py", "--batch", "invoices"], cwd=workspace,
                           capture_output=True, text=True)
    assert other.returncode == 3 and "IDENTITY" in other.stdout
    (workspace / "legacy" / "export-v1" / "schema.sql").unlink()
    missing = subprocess.run([sys.executable, "checks/parity.py", "--batch", "invoices"], cwd=workspace,
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "ENVIRONMENT" in missing.stdout


def test_coverage_needs_a_recipe_variable(cli: CLI, repo: Path) -> None:
    result = cli("run", "recipe=migration-batch", "coverage.variable=lot")
    assert result.exit_code == 2
    assert "coverage.variable: 'lot' is not a variable of the recipe (variables: batch)" in result.stderr
