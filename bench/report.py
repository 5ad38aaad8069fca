"""``axpipe report`` on a project with 1,000 runs: time and size, against a baseline
measured in the same run.

    .venv/bin/python bench/report.py [--repeat N] [--runs N]

Target (issue 23): the report of a project with 1,000 runs builds in under 2 s and stays
under 5 MB. The project is made with the store's own functions: 1,000 runs (each with a
run folder and its events, every tenth a repair report of three iterations, every 50th a
gate report), 20 goals of 3 checks with 50 receipts each (1,000 receipts), 5 schedules with
200 runs. Baseline: ``axpipe plugins list`` (the CLI's start-up with its plugin registry),
so the ratio shows what the report adds on top of starting at all on this machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import compare, spawn

from axpipe.store import Store
from axpipe.store import goals as sql
from axpipe.store.rows import insert

AXPIPE = str(Path(sys.executable).parent / "axpipe")
REPAIR = {"target": "pytest -q", "condition": "exit code 0", "budget": 4, "status": "resolved", "iterations_used": 3,
          "final_diff": "calc.py (+1 -1)", "not_validated": [],
          "discarded": ["iteration 1: test_calc.py (+1 -0) (python)"],
          "iterations": [{"n": n, "command": "pytest -q", "exit_code": 1, "oracle_line": None, "result": "exit code 1",
                          "diagnosis": "AssertionError: 5 != -1", "fix": "calc.py (+1 -1)",
                          "guard": "python" if n == 1 else None, "evidence": ["test_calc.py:3: skip added"] * (n == 1),
                          "phase": None} for n in (1, 2, 3)]}
GATE = {"baseline": "a" * 40, "baseline_given": "HEAD~1", "head": "b" * 40, "narrow": True, "changed_files": 2,
        "changed_lines": 9, "status": "failed", "summary": "gate failed: lint failed (1 blamed)",
        "phases": [{"name": "lint", "command": "ruff check .", "status": "failed", "summary": "1 blamed",
                    "attempts": [{"where": "workspace", "command": "ruff check .", "result": "exit code 1",
                                  "exit_code": 1, "duration": 0.1, "log": "lint.log",
                                  "output_tail": "x.py:1:1 F401\n"}],
                    "items": [{"verdict": "blamed", "why": "on a changed line", "subject": "x.py:1:1",
                               "message": "unused import", "code": "F401", "counts": True}]}]}


def make_project(root: Path, runs: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src.py").write_text("VALUE = 1\n")
    state = root / ".axpipe"
    with Store(state / "state.db") as store:
        for number in range(runs):
            run_id = f"run-{number:05d}"
            folder = state / "runs" / "2026-12-01" / f"{number:05d}"
            folder.mkdir(parents=True)
            (folder / "events.jsonl").write_text(json.dumps({"ts": "2026-12-01T00:00:00Z", "type": "run.started",
                                                             "goal": None}) + "\n")
            if number % 10 == 0:
                (folder / "report.json").write_text(json.dumps(REPAIR))
            if number % 50 == 0:
                gate = state / "gate" / f"{number:05d}"
                gate.mkdir(parents=True)
                (gate / "report.json").write_text(json.dumps(GATE))
            store.start_run(run_id=run_id, recipe=f"recipe-{number % 7}", workspace=str(root), run_dir=str(folder),
                            pid=1)
            store.finish_run(run_id, status="succeeded" if number % 4 else "failed", exit_code=0 if number % 4 else 1,
                             summary="settle: complete")
        for goal_number in range(20):
            goal = f"goal-{goal_number:02d}"
            checks = [{"id": f"c{n}", "kind": "command", "command": "true", "acceptance": [f"AC{n}"]}
                      for n in (1, 2, 3)]
            plan = {"checks": checks, "source_paths": ["src.py"],
                    "acceptance": {f"AC{n}": {"tag": "closes", "text": f"criterion {n}", "check": f"c{n}"}
                                   for n in (1, 2, 3)}}
            digest = f"{goal_number:064d}"
            sql.insert_goal(store, goal, recipe="bench", objective=f"objective {goal_number}", assured=1,
                            status="active", contract_digest=digest, workspace=str(root), plan=json.dumps(plan))
            sql.insert_contract(store, digest=digest, goal_id=goal, canonical=plan)
            sql.insert_session(store, session_id=f"s-{goal}", goal_id=goal, contract_digest=digest,
                               workspace=str(root))
            for receipt_number in range(50):
                receipt = f"r-{goal}-{receipt_number:03d}"
                sql.start_receipt(store, receipt_id=receipt, goal_id=goal, session_id=f"s-{goal}", workspace=str(root),
                                  contract_digest=digest, check_id=f"c{receipt_number % 3 + 1}", held_out=False,
                                  command="true")
                sql.finish_receipt(store, receipt, status="passed" if receipt_number % 5 else "failed", exit_code=0,
                                   summary="exit code 0", fingerprint="f" * 64, fingerprint_reason=None,
                                   output_tail="ok\n", artifacts=[])
        with store.transaction() as db:
            for task_number in range(5):
                task = f"task-{task_number}"
                insert(db, "schedule_tasks", {"id": task, "title": task, "kind": "daily", "expression": "03:00",
                                              "tz": "UTC", "recipe": "bench", "source": "bench", "next_run":
                                              "2026-12-09T03:00:00.000000Z", "created_at": "2026-12-01T00:00:00Z",
                                              "updated_at": "2026-12-01T00:00:00Z"})
                for run_number in range(40):
                    insert(db, "schedule_runs", {"task_id": task, "scheduled_for": "2026-12-01T03:00:00.000000Z",
                                                 "last_scheduled": "2026-12-01T03:00:00.000000Z", "trigger": "schedule",
                                                 "status": "skipped" if run_number % 3 else "succeeded",
                                                 "reason": "missed: catch_up is skip", "recipe": "bench",
                                                 "overrides": "[]", "max_run_duration": 3600.0,
                                                 "queued_at": "2026-12-01T03:00:00.000000Z"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="axpipe-report-bench-") as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        make_project(root, args.runs)
        compared = compare(spawn(AXPIPE, "report", cwd=root), spawn(AXPIPE, "plugins", "list", cwd=root), args.repeat)
        folder = root / ".axpipe" / "report"
        pages = list(folder.iterdir())
        size = sum(path.stat().st_size for path in pages)
        print(f"project: {args.runs} runs, 20 goals, 1000 receipts, {args.runs // 10} repairs, "
              f"{args.runs // 50} gates, 200 schedule runs")
        print(f"axpipe report:       median {compared.ours:7.0f} ms (fastest {compared.best_ours:.0f} ms); "
              f"target < 2000 ms: {'met' if compared.ours < 2000 else 'MISS'}")
        print(f"axpipe plugins list: median {compared.theirs:7.0f} ms (fastest {compared.best_theirs:.0f} ms)")
        print(f"ratio report / baseline: {compared.ratio:.2f} (95% interval {compared.ratio_low:.2f}-"
              f"{compared.ratio_high:.2f})")
        print(f"report folder: {len(pages)} files, {size / 1e6:.2f} MB; target < 5 MB: "
              f"{'met' if size < 5e6 else 'MISS'}")


if __name__ == "__main__":
    main()
