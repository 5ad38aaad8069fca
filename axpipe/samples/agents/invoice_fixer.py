"""The demo's agent: a codemod that fixes the invoice sample the way a careful person would.

It reads the prompt (as any agent must), then edits ``invoices.py`` in the current
directory: the tax is added instead of subtracted, and the unused import goes. It reports
the tokens a real assistant would have spent, so the demo shows budget accounting too.

    python3 -m axpipe.samples.agents.invoice_fixer PROMPT_FILE
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    prompt = Path(argv[0]).read_text(encoding="utf-8") if argv else os.environ.get("AXPIPE_PROMPT_FILE", "")
    source = Path("invoices.py")
    if not source.is_file():
        print("invoice_fixer: no invoices.py here; nothing to fix")
        return 1
    text = source.read_text(encoding="utf-8")
    fixed = text.replace("total = subtotal - tax", "total = subtotal + tax").replace("import os\n", "")
    if fixed == text:
        print("invoice_fixer: invoices.py already has both fixes")
    else:
        source.write_text(fixed, encoding="utf-8")
        print("invoice_fixer: tax is now added to the subtotal; removed the unused import")
    usage = os.environ.get("AXPIPE_USAGE_FILE")
    if usage:
        Path(usage).write_text(json.dumps({"tokens": 350 + len(prompt) // 4}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
