"""The migration demo's agent: a scripted migrator for the ledger sample, batch by batch.

It does what a careful migrator would on this sample, deterministically:

- ``invoices``: already migrated; it changes nothing.
- ``payments``: the legacy export rounds converted amounts half to even; it fixes the
  rounding mode in ``src/ledger/payments.py``.
- ``credit-notes``: the legacy sign convention is undocumented, so no honest migration is
  possible here. Once a parity receipt shows the failure, it reports the goal blocked with
  that receipt as evidence (``AXPIPE_BLOCKED_FILE``) instead of guessing.

    LEDGER_BATCH=payments python3 -m axpipe.samples.agents.ledger_migrator PROMPT_FILE
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    prompt = Path(argv[0]).read_text(encoding="utf-8") if argv else ""
    batch = os.environ.get("LEDGER_BATCH", "")
    usage = os.environ.get("AXPIPE_USAGE_FILE")
    if usage:
        Path(usage).write_text(json.dumps({"tokens": 800 + len(prompt) // 4}), encoding="utf-8")
    if batch == "payments":
        module = Path("src/ledger/payments.py")
        text = module.read_text(encoding="utf-8")
        fixed = text.replace("ROUND_HALF_UP", "ROUND_HALF_EVEN")
        if fixed != text:
            module.write_text(fixed, encoding="utf-8")
            print("ledger_migrator: payments now round half to even, as export-v1 does")
        return 0
    if batch == "credit-notes":
        receipts = re.findall(r"receipt (r-[0-9a-f]+)", prompt)
        if not receipts:
            print("ledger_migrator: credit notes need the legacy sign convention; waiting for parity evidence")
            return 0
        blocked = {
            "kind": "missing-requirement",
            "reason": "export-v1 does not document the sign convention of credit notes",
            "external_change": "finance documents the legacy sign convention for credit notes",
            "evidence": receipts[:1],
            "no_independent_work": True,
        }
        Path(os.environ["AXPIPE_BLOCKED_FILE"]).write_text(json.dumps(blocked), encoding="utf-8")
        print("ledger_migrator: blocked on the credit note sign convention")
        return 0
    print(f"ledger_migrator: nothing to migrate for batch {batch!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
