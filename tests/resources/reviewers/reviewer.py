"""A scripted review CLI for tests: `python reviewer.py MODE [ARG]` behaves as MODE says.

Stands in for a paid review CLI. It really reads the prompt (file or stdin) and really
exits, prints, sleeps or commits, so the round runner is tested against real processes.
"""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
prompt_file = os.environ["AXPIPE_PROMPT_FILE"]
prompt = open(prompt_file, encoding="utf-8").read()

if mode == "no-findings":
    print(f"Reviewed {prompt.count(chr(10))} prompt lines of round {os.environ['AXPIPE_REVIEW_ROUND']}.")
    print("VERDICT: no findings")
elif mode == "findings":
    print("F1: the total subtracts instead of adding")
    print("VERDICT: findings " + (sys.argv[2] if len(sys.argv) > 2 else "F1"))
elif mode == "echo-stdin":
    received = sys.stdin.read()
    print("stdin matches the prompt file:", received == prompt)
    print("VERDICT: no findings")
elif mode == "stderr-noise":
    sys.stderr.write("warning: deprecated flag\n")
    sys.stderr.flush()
    print(json.dumps({"type": "text", "text": "VERDICT: no findings"}))
elif mode == "fail":
    sys.stderr.write("error: not logged in\n")
    sys.exit(3)
elif mode == "warn-only":
    print("warning: model overloaded, partial answer")
elif mode == "sleep":
    print("Looking at calc.py...", flush=True)
    time.sleep(30)
    print("VERDICT: no findings")
elif mode == "commit":
    with open("calc.py", "a", encoding="utf-8") as handle:
        handle.write("# touched by a reviewer\n")
    subprocess.run(["git", "commit", "-qam", "reviewer edit"], check=True)
    print("VERDICT: no findings")
elif mode == "edit":
    with open("calc.py", "a", encoding="utf-8") as handle:
        handle.write("# touched by a reviewer\n")
    print("VERDICT: no findings")
else:
    sys.exit(f"unknown mode {mode}")
