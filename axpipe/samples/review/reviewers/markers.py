"""A scripted reviewer: flags added lines that leave debugging markers behind.

Usage: python3 reviewers/markers.py PROMPT_FILE. It reads the diff from the prompt (the
```diff block axpipe renders), prints what it looked at, and ends with one verdict line.
"""

import re
import sys

# Built from pieces so that this file, when it is itself under review, does not match.
MARKERS = re.compile(r"\b(" + "|".join(["breakpoint\\(\\)", "pdb" + r"\.set_trace", "TO" + "DO", "FIX" + "ME"]) + r")")


def added_lines(prompt):
    inside = False
    current = None
    for line in prompt.splitlines():
        if line.startswith("```diff"):
            inside = True
            continue
        if inside and line.startswith("```"):
            break
        if not inside:
            continue
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else line[4:]
        elif line.startswith("+") and not line.startswith("+++"):
            yield current, line[1:]


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        prompt = handle.read()
    findings = []
    count = 0
    for path, text in added_lines(prompt):
        count += 1
        if MARKERS.search(text):
            findings.append((f"M{len(findings) + 1}", path, text.strip()))
    print(f"Read {count} added line(s).")
    for finding_id, path, text in findings:
        print(f"{finding_id}: {path}: a debugging marker is left in: {text}")
    if findings:
        print("VERDICT: findings " + ", ".join(finding_id for finding_id, _, _ in findings))
    else:
        print("VERDICT: no findings")


main()
