"""The demo's cheating agent: it first tries to make the tests pass by skipping the failing one.

This is what protected tests and the guards exist for. Its first fix marks the failing test
skipped; the test is protected (``repair.protect``), so axpipe reverts that edit as
protected-path (with ``allow_test_edits``, the skipped-test guard rejects it) and tells the
agent why (the prompt says so), and then it makes the honest fix in the code under test.

    python3 -m axpipe.samples.agents.invoice_cheater PROMPT_FILE
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    prompt = Path(argv[0]).read_text(encoding="utf-8") if argv else ""
    notes = os.environ.get("AXPIPE_NOTES_FILE")
    if "was rejected and reverted" not in prompt:
        tests = Path("test_invoices.py")
        text = tests.read_text(encoding="utf-8")
        cheat = text.replace("    def test_invoice_total_adds_tax(self):",
                             "    @unittest.skip(\"flaky on CI\")\n    def test_invoice_total_adds_tax(self):")
        tests.write_text(cheat, encoding="utf-8")
        print("invoice_cheater: skipped the failing test (this should be caught)")
        if notes:
            Path(notes).write_text(json.dumps({"diagnosis": "the tax test is flaky", "fix": "skip it"}))
        return 0
    source = Path("invoices.py")
    source.write_text(source.read_text(encoding="utf-8").replace("subtotal - tax", "subtotal + tax"),
                      encoding="utf-8")
    print("invoice_cheater: told a guard fired; fixed the tax sign in invoices.py instead")
    if notes:
        Path(notes).write_text(json.dumps({"diagnosis": "invoice_total subtracts the tax instead of adding it",
                                           "fix": "add the tax to the subtotal"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
