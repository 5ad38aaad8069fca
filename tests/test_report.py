"""``axpipe report``: built from a project with real evidence of every kind, checked as
HTML and JSON, and opened in a real headless Chromium."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import GIT_IDENTITY, git, run_cli
from html_check import outline, problems
from reportkit import build

from axpipe.browser import chromium
from axpipe.goal import coverage
from axpipe.recipe import schema
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as sql

# CI installs Chromium (.ci/run) and sets this: there a missing browser fails the tests.
BROWSER_REQUIRED = bool(os.environ.get("AXPIPE_REQUIRE_BROWSER"))


def need_browser() -> None:
    if chromium.find() is None and not BROWSER_REQUIRED:
        pytest.skip(f"no Chromium here ({chromium.INSTALL_HINT}); CI installs it and never skips")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, entry_point_cache: Path) -> Iterator[Path]:
    """One project for the whole module (it takes ~10 s of real runs), with the same
    isolation every test gets (conftest.isolated_environment)."""
    base = tmp_path_factory.mktemp("report")
    root, scratch = base / "repo", base / "scratch"
    root.mkdir()
    scratch.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for name in ("AXPIPE_RECIPE_PATH", "AXPIPE_DEBUG", "CI", "BUILD_NUMBER", "PYTEST_ADDOPTS",
                     "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
            patch.delenv(name, raising=False)
        patch.setenv("AXPIPE_PRIVATE_DIR", str(base / "private"))
        patch.setenv("XDG_CACHE_HOME", str(entry_point_cache))
        patch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for name, value in GIT_IDENTITY.items():
            patch.setenv(name, value)
        git(root, "init", "-q", "-b", "main")
        (root / "README.md").write_text("a project\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        build(root, scratch)
        yield root


@pytest.fixture(scope="module")
def written(project: Path) -> Path:
    result = run_cli("report", cwd=project)
    assert result.exit_code == 0, result.stderr
    index = project / ".axpipe" / "report" / "index.html"
    assert result.stdout == f"report: {index}\n"
    return index.parent


def _pages(folder: Path) -> dict[str, Path]:
    """The pages by a name that does not change between runs (repair and gate pages are
    named after their folders, which carry the time)."""
    named = {}
    for path in sorted(folder.glob("*.html")):
        stable = re.sub(r"-[\d_-]{10,}-.*\.html$", ".html", path.name)
        named[stable] = path
    return named


def test_every_page_is_valid_html_that_needs_no_network(written: Path) -> None:
    pages = _pages(written)
    assert sorted(pages) == ["gate-gate.html", "goal-calc.html", "goal-doubles.html", "index.html",
                             "repair-runs.html", "schedule-nightly.html"]
    assert [line for page in pages.values() for line in problems(page)] == []
    for page in pages.values():
        text = page.read_text()
        assert "<script" not in text and "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in text


def test_a_held_out_check_shows_its_state_but_never_its_command(project: Path, written: Path) -> None:
    for path in written.iterdir():
        assert "20, 22" not in path.read_text(), path.name
    calc = next(goal for goal in json.loads((written / "report.json").read_text())["goals"] if goal["id"] == "calc")
    hidden = next(check for check in calc["checks"] if check["id"] == "hidden")
    assert hidden["held_out"] and hidden["command"] is None and hidden["status"] == "stale"
    assert all(receipt["artifacts"] == [] for receipt in hidden["history"])


def test_the_pages_structure(written: Path, snapshot: Any) -> None:
    assert {name: outline(path) for name, path in _pages(written).items()} == snapshot


def test_the_json_holds_what_the_pages_show(project: Path, written: Path) -> None:
    result = run_cli("report", "--json", cwd=project)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == {**json.loads((written / "report.json").read_text()), "generated_at": data["generated_at"]}
    goals = {goal["id"]: goal for goal in data["goals"]}
    assert goals["calc"]["status"] == "complete"
    assert [(check["id"], check["status"], check["reason"]) for check in goals["calc"]["checks"]] == [
        ("unit", "stale", "the source changed since it passed"),
        ("hidden", "stale", "the source changed since it passed")]
    assert [(check["id"], check["status"]) for check in goals["doubles"]["checks"]] == [("triple", "failed")]
    assert goals["calc"]["contract_digest"] and goals["calc"]["contract"]["checks"][0]["id"] == "unit"
    assert goals["calc"]["qa_report"].startswith("- AC1 PASS · command · ")
    [repair] = data["repairs"]
    assert repair["status"] == "resolved" and repair["iterations"][0]["guard"] == "protected-path"
    [gate] = data["gates"]
    phases = {phase["name"]: phase for phase in gate["phases"]}
    assert phases["lint"]["blamed"] and phases["test"]["pre_existing"] and not phases["test"]["blamed"]
    [task] = data["schedules"]
    assert [run["status"] for run in task["runs"]] == ["skipped"] and "catch_up is skip" in task["runs"][0]["reason"]
    assert data["overview"]["goals_by_status"] == {"active": 1, "complete": 1}
    assert {(item["goal"], item["status"]) for item in data["overview"]["failing_checks"]} == {
        ("calc", "stale"), ("doubles", "failed")}
    assert data["trend"][-1]["total"] >= 2
    [review] = data["reviews"]
    assert [(item["cli"], item["exit_code"], item["verdict"]) for item in review["reviewers"]] == [
        ("alpha", 0, "VERDICT: findings F1"), ("beta", 0, "VERDICT: no findings")]


def test_since_leaves_out_what_came_before(project: Path) -> None:
    data = json.loads(run_cli("report", "--json", "--since", "2999-01-01", cwd=project).stdout)
    assert data["runs"] == [] and data["repairs"] == [] and data["gates"] == [] and data["trend"] == []
    assert all(check["history"] == [] for goal in data["goals"] for check in goal["checks"])


def test_a_bad_since_is_an_input_error(project: Path) -> None:
    result = run_cli("report", "--since", "last tuesday", cwd=project)
    assert result.exit_code == 2
    assert "--since: 'last tuesday' is not a date (YYYY-MM-DD) or an ISO date-time" in result.stderr


def test_a_project_where_nothing_ran_is_refused_and_left_as_it_was(repo: Path) -> None:
    result = run_cli("report", cwd=repo)
    assert result.exit_code == 2
    assert "nothing has run here yet" in result.stderr
    assert not (repo / ".axpipe").exists()


@pytest.mark.slow
def test_the_report_in_a_real_browser(written: Path, tmp_path: Path) -> None:
    need_browser()
    pages = _pages(written)
    with chromium.browser() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(pages["index.html"].as_uri())
        assert page.title() == "Overview · axpipe report"
        failing = page.locator("#failing-checks tbody tr")
        assert failing.count() == 3
        stale = failing.filter(has_text="stale").first
        # highlighted: the row's class gives it a coloured background a person sees
        assert stale.evaluate("row => getComputedStyle(row.cells[0]).backgroundColor") == "rgb(255, 246, 224)"
        failed = failing.filter(has_text="doubles")
        assert failed.evaluate("row => getComputedStyle(row.cells[0]).backgroundColor") == "rgb(253, 236, 236)"
        page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
        assert (tmp_path / "overview.png").stat().st_size > 10_000
        page.click("#repairs a")  # a relative link, from file://
        assert page.url == pages["repair-runs.html"].as_uri()
        assert page.locator("h1").inner_text().startswith("Repair: python3 -m unittest -q")
        assert "reverted by the protected-path guard" in page.locator("#iteration-1 h2").inner_text()
        page.goto(pages["goal-doubles.html"].as_uri())
        assert page.title() == "Goal doubles · axpipe report"
        cells = page.locator("table.checks tbody tr").first.locator("td").all_inner_texts()
        assert cells[:3] == ["triple", "command", "failed"]
        assert errors == []


def test_migration_coverage_comes_from_the_newest_run_of_each_recipe(repo: Path) -> None:
    """The coverage the settle phase computes and emits (axpipe.goal.coverage), as the report shows it."""
    (repo / "inventory.yaml").write_text("batches: [invoices, payments, ledger]\n")
    spec = schema.Coverage(inventory="inventory.yaml", variable="batch")
    plan = json.dumps({"checks": [], "source_paths": ["."], "acceptance": {}})
    with Store(repo / ".axpipe" / "state.db") as store:
        for batch, status in (("invoices", "complete"), ("payments", "blocked")):
            sql.insert_goal(store, f"mig-{batch}", recipe="migration", objective="move", assured=1, status=status,
                            workspace=str(repo), plan=plan, variables=json.dumps({"batch": batch}))
        for number, run_dir in enumerate(("old", "new")):
            folder = repo / ".axpipe" / "runs" / run_dir
            store.start_run(run_id=run_dir, recipe="migration", workspace=str(repo), run_dir=str(folder), pid=1)
            data = coverage.report(store, repo, "migration", spec)
            if number == 0:
                data = {**data, "accepted": []}  # an older run, which must not be the one shown
            events = EventLog(path=folder / "events.jsonl")
            events.emit("goal.coverage", phase="settle", summary=coverage.describe(data), **data)
            events.close()
    data = json.loads(run_cli("report", "--json", cwd=repo).stdout)
    [shown] = data["coverage"]
    assert (shown["recipe"], shown["total"], shown["accepted"]) == ("migration", 3, ["invoices"])
    assert shown["remaining"] == {"payments": "blocked", "ledger": "not started"}
    result = run_cli("report", cwd=repo)
    page = (repo / ".axpipe" / "report" / "index.html").read_text()
    assert result.exit_code == 0 and "1 of 3: invoices" in page and "payments (blocked), ledger (not started)" in page


def test_a_half_written_report_file_is_listed_with_the_reason(repo: Path) -> None:
    Store(repo / ".axpipe" / "state.db").close()
    for folder in ("runs/2026-12-01/10-00-00-repair", "gate/2026-12-01_10-00-00"):
        (repo / ".axpipe" / folder).mkdir(parents=True)
        (repo / ".axpipe" / folder / "report.json").write_text('{"iterations": [')  # cut short by a crash
    result = run_cli("report", "--out", str(repo / "evidence"), cwd=repo)
    assert result.exit_code == 0, result.stderr
    data = json.loads((repo / "evidence" / "report.json").read_text())
    errors = [entry["error"].split(":")[0] for entry in data["repairs"] + data["gates"]]
    assert errors == ["cannot read report.json"] * 2
    assert all(problems(page) == [] for page in (repo / "evidence").glob("*.html"))
    assert "cannot read report.json" in next((repo / "evidence").glob("repair-*.html")).read_text()
