"""Parity of one migrated batch against the legacy export.

    python3 checks/parity.py --batch invoices [--sample N --seed S]
    python3 checks/parity.py --probe

Exits 0 only when every row of the batch matches the legacy value. It fails (non-zero) on a
mismatch, when the legacy export or the target is missing (environment), when the target is
not the migration of export-v1 (identity), and when any assertion could not be made (a
skipped assertion is a failure, not a pass).
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "legacy" / "export-v1"
sys.path.insert(0, str(ROOT / "src"))
sys.dont_write_bytecode = True  # importing the target must not change the source it verifies

BATCHES = {
    "invoices": ("invoices.csv", "ledger.invoices",
                 lambda module, row: (module.total_cents(int(row["net_cents"]), row["tax_rate"]),
                                      int(row["total_cents"]))),
    "payments": ("payments.csv", "ledger.payments",
                 lambda module, row: (module.eur_cents(int(row["amount_cents"]), row["currency"]),
                                      int(row["eur_cents"]))),
    "credit-notes": ("credit_notes.csv", "ledger.credit_notes",
                     lambda module, row: (module.signed_cents(int(row["amount_cents"])), int(row["signed_cents"]))),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", choices=sorted(BATCHES))
    parser.add_argument("--probe", action="store_true", help="only check the legacy export is reachable")
    parser.add_argument("--sample", type=int, help="check a random sample of this many rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (EXPORT / "schema.sql").is_file():
        print(f"parity: ENVIRONMENT legacy export not found at {EXPORT}")
        return 2
    if args.probe:
        print("parity: export-v1 reachable")
        return 0
    if args.batch is None:
        parser.error("--batch is required")
    filename, module_name, compare = BATCHES[args.batch]
    import importlib

    import ledger

    if getattr(ledger, "MIGRATED_FROM", None) != "export-v1":
        print(f"parity: IDENTITY target says it migrates {getattr(ledger, 'MIGRATED_FROM', None)!r}, not export-v1")
        return 3
    module = importlib.import_module(module_name)
    rows = list(csv.DictReader((EXPORT / filename).open()))
    if args.sample:
        rows = random.Random(args.seed).sample(rows, min(args.sample, len(rows)))
    mismatches, skipped = [], []
    for row in rows:
        try:
            got, want = compare(module, row)
        except (NotImplementedError, KeyError) as error:
            skipped.append(f"row {row['id']}: {type(error).__name__}: {error}")
            continue
        if got != want:
            mismatches.append(f"row {row['id']}: migrated {got}, legacy {want}")
    for line in mismatches + skipped:
        print(f"  {line}")
    if skipped:
        print(f"parity: FAIL {args.batch}: {len(skipped)} assertion(s) skipped of {len(rows)}")
        return 1
    if mismatches:
        print(f"parity: FAIL {args.batch}: {len(mismatches)} mismatch(es) in {len(rows)} rows")
        return 1
    print(f"parity: PASS {args.batch}: {len(rows)} rows match export-v1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
