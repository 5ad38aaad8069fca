"""Run agent units the way a run's work phase does (axpipe.goal.turn.invoke), paced.

usage: paced_units.py ROOT EVENTS COUNT RPM TPM TOKENS
Each unit is the command agent writing {"tokens": TOKENS} to its usage file. RPM / TPM of
0 leave that limit off. Events go to the file EVENTS (JSONL), as a run's do.
"""

from __future__ import annotations

import sys
from pathlib import Path

from axpipe.goal.turn import invoke
from axpipe.recipe.schema import AgentSpec, Pacing
from axpipe.run.events import EventLog


def main() -> None:
    root, events_file = Path(sys.argv[1]), Path(sys.argv[2])
    count, rpm, tpm, tokens = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    spec = AgentSpec(kind="command", params={"command": f'echo \'{{"tokens": {tokens}}}\' > "$AXPIPE_USAGE_FILE"'},
                     pacing=Pacing(requests_per_minute=rpm or None, tokens_per_minute=tpm or None))
    events = EventLog(goal="paced", path=events_file)
    folder = events_file.with_suffix(".turns")
    for number in range(1, count + 1):
        invoke(spec, root=root, prompt="work", iteration=number, folder=folder, events=events, phase="work")
    events.close()


if __name__ == "__main__":
    main()
