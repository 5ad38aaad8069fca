"""A loop tick's command that holds its tick open until a test releases it.

``tick_gate.py DIR`` appends ``started <tick> <pid>`` to ``DIR/log`` (the tick number is
``AXPIPE_LOOP_TICK``), waits until ``DIR/release-<tick>`` or ``DIR/release-all`` exists,
then appends ``finished <tick>`` and exits 0. It lets a test keep a tick running for as
long as it needs to observe the loop from another process, without timing guesses.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def main() -> int:
    folder = Path(sys.argv[1])
    tick = os.environ["AXPIPE_LOOP_TICK"]
    log = folder / "log"
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"started {tick} {os.getpid()}\n")
    while not (folder / f"release-{tick}").exists() and not (folder / "release-all").exists():
        time.sleep(0.02)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"finished {tick}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
