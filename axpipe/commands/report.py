"""``axpipe report [--out DIR] [--open] [--json] [--since DATE]``."""

from __future__ import annotations

import json
import sys
import webbrowser
from datetime import UTC, date, datetime

from axpipe import workspace
from axpipe.errors import InputError
from axpipe.report import collect, render
from axpipe.store import Store


def _since(value: str | None) -> str:
    """``--since`` as the ISO prefix rows are compared with ('' for everything)."""
    if value is None:
        return ""
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--since: {value!r} is not a date (YYYY-MM-DD) or an ISO date-time") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.isoformat(timespec="microseconds")


def report(*, out: str | None, open_browser: bool, as_json: bool, since: str | None) -> int:
    """Write the HTML report (and ``report.json``) of this project; print where it is."""
    root = workspace.find_root()
    cutoff = _since(since)
    folder = workspace.output_path(out, "--out", folder=True) if out else workspace.state_dir(root) / "report"
    path = workspace.store_path(root)
    if not path.is_file():
        raise InputError(f"no axpipe state in {root}: nothing has run here yet (start with `axpipe run recipe=NAME`)")
    with Store(path) as store:
        data = collect.collect(store, root, since=cutoff)
    if as_json:
        json.dump(data, sys.stdout, ensure_ascii=False)  # one line: the C encoder (indent is 4x slower)
        sys.stdout.write("\n")
        return 0
    if out is None:
        workspace.ensure_state_dir(root)  # .axpipe/ stays out of git
    index = render.write(data, folder)
    sys.stdout.write(f"report: {index}\n")
    if open_browser:
        webbrowser.open(index.as_uri())
    return 0
