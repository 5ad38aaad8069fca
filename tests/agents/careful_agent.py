"""A scripted agent that behaves as a careful agent does: it acts on what its prompt tells it.

The script is a JSON file named by ``CAREFUL_AGENT_PLAN``: ``{"turns": [{...}, ...],
"default": {...}}``, entry *n-1* for the *n*-th call (counted in ``<plan>.count``). An entry may:

- ``replace``: ``[[path, old, new], ...]`` edits it wants to make. It makes only those whose
  path matches a pattern of the prompt's ``### Scope`` list; the others it leaves and says so
  in its notes. With no ``### Scope`` heading in its prompt it knows no bounds and makes them all;
- ``notes``: text for the task file's ``Implementation notes`` section (``AXPIPE_TASK_FILE``).
  When its prompt says why the last unit bounced, it quotes that block in its notes;
- ``task_section``: ``[name, text]`` to replace another section's body (a careless write);
- ``criteria``: lines for the ``Acceptance criteria`` section (a planner's work);
- ``pause``: ``[ready, release]``: write the file ``ready``, then wait (up to 60 s) until the file
  ``release`` exists, before touching the task file (a person acts meanwhile);
- ``tokens``: tokens to report through ``AXPIPE_USAGE_FILE``;
- ``exit``: its exit code (default 0).

Every prompt is appended to ``<plan>.prompts`` (JSON lines with the role) outside the workspace.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
import time
from pathlib import Path


def scope_of(prompt: str) -> list[str] | None:
    match = re.search(r"^### Scope\n\n(.*?)(?:\n### |\Z)", prompt, re.S | re.M)
    if match is None:
        return None
    return re.findall(r"^- `([^`]+)`", match.group(1), re.M)


def bounce_block(prompt: str) -> str:
    match = re.search(r"^### Why the last unit bounced\n\n(.*?)(?:\n## |\Z)", prompt, re.S | re.M)
    return match.group(1).strip() if match else ""


def set_section(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(^## {re.escape(name)}\n)(.*?)(?=^## |\Z)", re.S | re.M)
    return pattern.sub(lambda match: match.group(1) + "\n" + body.rstrip("\n") + "\n\n", text, count=1)


def main() -> int:
    plan_path = Path(os.environ["CAREFUL_AGENT_PLAN"])
    plan = json.loads(plan_path.read_text())
    counter = plan_path.with_name(plan_path.name + ".count")
    call = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(call))
    turns = plan.get("turns", [])
    step = turns[call - 1] if call <= len(turns) else plan.get("default", {})
    prompt = Path(os.environ["AXPIPE_PROMPT_FILE"]).read_text()
    with open(plan_path.with_name(plan_path.name + ".prompts"), "a", encoding="utf-8") as log:
        log.write(json.dumps({"call": call, "role": os.environ.get("AXPIPE_ROLE"), "prompt": prompt}) + "\n")
    scope = scope_of(prompt)
    notes = [step["notes"]] if "notes" in step else []
    for path, old, new in step.get("replace", []):
        if scope is not None and not any(fnmatch.fnmatch(path, pattern) for pattern in scope):
            notes.append(f"left {path} alone: it is outside my scope ({', '.join(scope)})")
            continue
        target = Path(path)
        target.write_text(target.read_text().replace(old, new))
    bounced = bounce_block(prompt)
    if bounced:
        notes.append("The last unit bounced; I was told:\n\n" + bounced)
    if "pause" in step:
        ready, release = step["pause"]
        Path(ready).write_text("ready")
        deadline = time.monotonic() + 60
        while not Path(release).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    task_file = os.environ.get("AXPIPE_TASK_FILE")
    if task_file:
        task = Path(task_file)
        text = task.read_text()
        if notes:
            text = set_section(text, "Implementation notes", "\n\n".join(notes))
        if "criteria" in step:
            text = set_section(text, "Acceptance criteria", "\n".join(step["criteria"]))
        if "task_section" in step:
            text = set_section(text, step["task_section"][0], step["task_section"][1])
        task.write_text(text)
    if "tokens" in step:
        Path(os.environ["AXPIPE_USAGE_FILE"]).write_text(json.dumps({"tokens": step["tokens"]}))
    print(step.get("say", "done"))
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
