"""Scripted roles for ``recipes/task-loop.yaml``: each reads its real prompt and acts as told.

``python -m axpipe.samples.agents.task_roles`` acts as the role in ``AXPIPE_ROLE``:

- ``planner``: writes one criterion per test module it finds into the task file's
  ``Acceptance criteria`` (``AXPIPE_TASK_FILE``) and a short plan into ``Plan``;
- ``implementer``: reads the scope patterns its prompt lists and fixes ``calc.add`` only when
  ``calc.py`` is inside them; it writes what it did into ``Implementation notes``;
- ``qa``: runs the project's tests and ends with ``qa: PASS`` or ``qa: FAIL``;
- ``judge``: ends with ``judge: CONFIRMED`` when ``add`` adds, ``judge: REJECTED`` otherwise.

No model runs: the sample shows the loop, not an assistant.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from pathlib import Path


def set_section(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(^## {re.escape(name)}\n)(.*?)(?=^## |\Z)", re.S | re.M)
    return pattern.sub(lambda match: match.group(1) + "\n" + body.rstrip("\n") + "\n\n", text, count=1)


def scope(prompt: str) -> list[str]:
    match = re.search(r"^### Scope\n\n(.*?)(?:\n### |\Z)", prompt, re.S | re.M)
    return re.findall(r"^- `([^`]+)`", match.group(1), re.M) if match else []


def plan(task: Path) -> int:
    text = set_section(task.read_text(), "Plan", "1. Make `calc.add` add its arguments.")
    text = set_section(text, "Acceptance criteria", "1. **[closes]** add() adds: `python3 -m unittest -q`")
    task.write_text(text)
    print("planned one criterion")
    return 0


def implement(prompt: str, task: Path) -> int:
    patterns = scope(prompt)
    if any(fnmatch.fnmatch("calc.py", pattern) for pattern in patterns):
        source = Path("calc.py")
        source.write_text(source.read_text().replace("return a - b", "return a + b"))
        note = "Fixed `calc.add` (it subtracted)."
    else:
        note = f"calc.py is outside my scope ({', '.join(patterns) or 'none given'}): changed nothing."
    task.write_text(set_section(task.read_text(), "Implementation notes", note))
    print(note)
    return 0


def main() -> int:
    role = os.environ.get("AXPIPE_ROLE", "")
    prompt = Path(os.environ["AXPIPE_PROMPT_FILE"]).read_text()
    task = Path(os.environ.get("AXPIPE_TASK_FILE", "task.md"))
    if role == "planner":
        return plan(task)
    if role == "implementer":
        return implement(prompt, task)
    if role == "qa":
        # -B: a QA unit is read-only, and bytecode caches left in the project are writes
        tests = subprocess.run([sys.executable, "-B", "-m", "unittest", "-q"], capture_output=True, text=True)
        print("Ran the project's tests.")
        print("qa: PASS" if tests.returncode == 0 else "qa: FAIL")
        return 0
    if role == "judge":
        adds = "return a + b" in Path("calc.py").read_text()
        print("add() adds; the change is the one the goal asks for." if adds else "add() still subtracts.")
        print("judge: CONFIRMED" if adds else "judge: REJECTED")
        return 0
    print(f"unknown role {role!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
