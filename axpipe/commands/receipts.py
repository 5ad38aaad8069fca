"""``axpipe receipts verify``: check a folder of review receipts (DESIGN §9)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from axpipe.duration import DurationError, parse_duration
from axpipe.errors import ExitCode, InputError
from axpipe.evidence import interpreter
from axpipe.interfaces import ReceiptRequest


def parse_names(value: str | None, flag: str) -> list[str] | None:
    """``a,b,c`` → ``["a", "b", "c"]``; None stays None. Blank or repeated names are input errors."""
    if value is None:
        return None
    names = [part.strip() for part in value.split(",")]
    if not all(names):
        raise InputError(f"{flag}: {value!r} has an empty name; write names separated by commas, e.g. a,b")
    bad = [name for name in names if "/" in name or name in (".", "..")]
    if bad:
        raise InputError(f"{flag}: {', '.join(bad)} is not a reviewer folder name")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(f"{flag}: {', '.join(repeated)} named twice")
    return names


def verify_receipts(*, root: str, reviewers: str | None, test_dir: str, test_adapter: str | None,
                    timeout: str, as_json: bool, python: str | None = None) -> int:
    """Verify the receipts under ``root``; exit 0 when there is no problem, 1 when there are."""
    # deferred: ~10 modules and subprocess load only when this action needs them
    from axpipe.plugin import registry
    from axpipe.review import receipts_text, revisions

    names = parse_names(reviewers, "--reviewers")
    try:
        seconds = parse_duration(timeout)
    except DurationError as error:
        raise InputError(f"--timeout: {error}") from error
    if not test_dir.strip() or test_dir.startswith("/") or ".." in Path(test_dir).parts:
        raise InputError(f"--test-dir: {test_dir!r} must be a folder inside the repository, e.g. tests")
    # an unknown name is an input error listing the others
    if test_adapter is not None and not registry.load("axpipe.test_adapters", test_adapter).suffixes:
        raise InputError(f"--test-adapter: test adapter '{test_adapter}' runs no named tests (it narrows the "
                         "gate's test commands only)")
    root_path = Path(root).resolve()
    if not root_path.is_dir():
        raise InputError(f"--root: {root} is not a folder")
    workspace = revisions.project_root(Path.cwd())  # where `review round` put the receipts' paths
    if python is not None:
        interpreter.find(workspace, python, named_by="--python")  # missing: input error, nothing runs
    verifier = registry.load("axpipe.receipt_verifiers", "cli-review")
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run.pipeline import sigterm_interrupts

    with sigterm_interrupts():  # SIGTERM or SIGHUP: the regression tests' processes end with us (exit 130)
        report = verifier.verify(ReceiptRequest(root=root_path, workspace=workspace, reviewers=names,
                                                test_dir=test_dir.strip("/"), test_adapter=test_adapter,
                                                timeout=seconds, python=python))
    if as_json:
        json.dump(receipts_text.to_json(report, root), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(receipts_text.render(report, root))
    return int(ExitCode.OK if report.ok else ExitCode.FAILED)
