"""A scripted QA or judge CLI for tests: ``python verdict_reviewer.py PLAN``.

``PLAN`` is a JSON file ``{"calls": [{...}, ...], "default": {...}}``; call *n* (counted in
``PLAN.count``) takes entry *n-1*, or ``default`` past the end. An entry may:

- ``say``: text to print (the trace of a text reviewer);
- ``events``: JSON objects to print one a line (the trace of a jsonl reviewer);
- ``write``: ``{path: content}`` files to write, relative to the workspace (``$ARTIFACTS/``
  is replaced by the artifacts folder axpipe gives in ``AXPIPE_ARTIFACTS_DIR``);
- ``run``: shell commands to run in the workspace, in order, whatever their exit codes; each
  one's exit code is printed (``ran: <command>: <code>``);
- ``exit``: the exit code (default 0).

It really reads its prompt (``AXPIPE_PROMPT_FILE``) and appends it to ``PLAN.prompts``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

plan_path = Path(sys.argv[1])
plan = json.loads(plan_path.read_text())
counter = plan_path.with_name(plan_path.name + ".count")
call = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(call))
calls = plan.get("calls", [])
step = calls[call - 1] if call <= len(calls) else plan.get("default", {})
prompt = Path(os.environ["AXPIPE_PROMPT_FILE"]).read_text()
with open(plan_path.with_name(plan_path.name + ".prompts"), "a", encoding="utf-8") as log:
    log.write(json.dumps({"call": call, "role": os.environ["AXPIPE_ROLE"], "prompt": prompt}) + "\n")
for name, content in step.get("write", {}).items():
    path = Path(name.replace("$ARTIFACTS", os.environ["AXPIPE_ARTIFACTS_DIR"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
for command in step.get("run", []):
    print(f"ran: {command}: {subprocess.run(command, shell=True).returncode}", flush=True)
if "say" in step:
    print(step["say"])
for event in step.get("events", []):
    print(json.dumps(event))
sys.exit(int(step.get("exit", 0)))
