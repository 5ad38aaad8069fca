"""A scripted stand-in for a coding assistant: it makes real edits, turn by turn.

The script is a JSON file named by ``SCRIPTED_AGENT_PLAN`` (set in the recipe's agent env):
``{"turns": [{...}, ...], "default": {...}}``. Turn *n* (from ``AXPIPE_ITERATION``, 1-based,
counted per goal) takes entry *n-1*, or ``default`` past the end. An entry may:

- ``write``: ``{path: content}`` files to write (relative to the workspace);
- ``replace``: ``[[path, old, new], ...]`` textual edits;
- ``keep_mtime``: true to give replaced files back their modification time, as an edit
  made within the same second as the file's last write would look (and as tools that
  preserve timestamps leave them);
- ``delete``: ``[path, ...]``;
- ``run``: shell commands to run after the edits, in order (``git add -A``, ``git commit ...``);
  a failing one fails the turn;
- ``tokens``: tokens to report through ``AXPIPE_USAGE_FILE`` (with ``cost``: USD, too);
- ``sleep``: seconds to wait (silently) before finishing;
- ``ask``: a permission prompt to print and wait on;
- ``blocked``: JSON to write to ``AXPIPE_BLOCKED_FILE`` (``"$RECEIPT"`` is replaced by the
  newest receipt id of the goal, read from the store);
- ``exit``: the exit code (default 0);
- ``say``: a line to print.

Every prompt it receives is appended to ``SCRIPTED_AGENT_LOG`` (outside the workspace) so
tests can read exactly what agents were told.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def newest_receipt() -> str:
    connection = sqlite3.connect(Path(".axpipe") / "state.db")
    row = connection.execute("SELECT id FROM receipts WHERE goal_id = ? ORDER BY started_at DESC LIMIT 1",
                             (os.environ["AXPIPE_GOAL_ID"],)).fetchone()
    return row[0] if row else "none"


def main() -> int:
    plan = json.loads(Path(os.environ["SCRIPTED_AGENT_PLAN"]).read_text())
    turn = int(os.environ["AXPIPE_ITERATION"])
    turns = plan.get("turns", [])
    step = turns[turn - 1] if turn <= len(turns) else plan.get("default", {})
    prompt = Path(os.environ["AXPIPE_PROMPT_FILE"]).read_text()
    log = os.environ.get("SCRIPTED_AGENT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"turn": turn, "prompt": prompt}) + "\n")
    if "say" in step:
        print(step["say"], flush=True)
    if "ask" in step:
        answer = input(step["ask"] + " ")
        print(f"answered {answer!r}")
    for path, content in step.get("write", {}).items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content)
    for path, old, new in step.get("replace", []):
        text = Path(path).read_text()
        times = os.stat(path)
        Path(path).write_text(text.replace(old, new))
        if step.get("keep_mtime"):
            os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    for path in step.get("delete", []):
        Path(path).unlink()
    for command in step.get("run", []):
        if subprocess.run(command, shell=True).returncode != 0:
            return 1
    if "tokens" in step:
        usage = {"tokens": step["tokens"], **({"cost": step["cost"]} if "cost" in step else {})}
        Path(os.environ["AXPIPE_USAGE_FILE"]).write_text(json.dumps(usage))
    if "blocked" in step:
        text = json.dumps(step["blocked"]).replace("$RECEIPT", newest_receipt())
        Path(os.environ["AXPIPE_BLOCKED_FILE"]).write_text(text)
    if "sleep" in step:
        time.sleep(step["sleep"])
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
