"""A scripted reviewer that answers in JSONL events: flags a change to shop/ with no test change.

Usage: python3 reviewers/tests_touched.py < PROMPT. It reads the "Files changed" list of the
prompt on stdin and writes {"type": "text", "text": ...} events, the last one ending with
the verdict line.
"""

import json
import sys


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")


def changed_files(prompt):
    files = []
    inside = False
    for line in prompt.splitlines():
        if line.startswith("Files changed:"):
            inside = True
            continue
        if inside:
            if not line.startswith("- "):
                break
            files.append(line[2:].strip())
    return files


def main():
    files = changed_files(sys.stdin.read())
    emit({"type": "status", "message": f"{len(files)} changed file(s)"})
    source = [path for path in files if path.startswith("shop/")]
    tests = [path for path in files if path.startswith("tests/")]
    emit({"type": "text", "text": f"Source files changed: {len(source)}; test files changed: {len(tests)}."})
    if source and not tests:
        emit({"type": "text", "text": "T1: shop/ changed but no test did.\nVERDICT: findings T1"})
    else:
        emit({"type": "text", "text": "Every source change comes with test changes.\nVERDICT: no findings"})


main()
