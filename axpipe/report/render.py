"""Writing the report: one HTML page per goal, repair, gate and schedule, an overview, and
the same data as ``report.json``.

The pages are static and self-contained: CSS inline, the trend as inline SVG, links
relative to the report folder, no script and nothing fetched from the network, so they
read the same from ``file://``, an archived CI artifact or a web server.

HTML gets its own jinja2 environment with autoescaping on. The shared environment
(:mod:`axpipe.templates`) renders prompts and Markdown, which must not be escaped; here every
value comes from the store or from files agents wrote and must be.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from axpipe.evidence.bytecode import evidence_prefix
from axpipe.report import trend

if TYPE_CHECKING:  # jinja2 costs ~80 ms to import: only `axpipe report` pays it
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"
_STATUS_CLASS = {
    "passed": "good", "complete": "good", "succeeded": "good", "resolved": "good", "ok": "good",
    "failed": "bad", "error": "bad", "blocked": "bad", "unresolved": "bad", "input-error": "bad",
    "stale": "warn", "missing": "warn", "budget_limited": "warn", "paused": "warn", "skipped": "warn",
    "cancelled": "warn", "not-terminal": "warn", "bounced": "warn", "quarantined": "bad",
    "running": "info", "active": "info", "fired": "info", "queued": "info",
}


def _environment() -> jinja2.Environment:
    import jinja2

    # Compiling the templates is a fifth of the report's time: keep them compiled in the
    # user's cache folder, keyed by the templates' contents and jinja2's version.
    cache = evidence_prefix().parent / "jinja"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        bytecode: jinja2.BytecodeCache | None = jinja2.FileSystemBytecodeCache(str(cache))
    except OSError:
        bytecode = None  # a read-only home: compile every time
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, bytecode_cache=bytecode)
    env.filters["state"] = lambda status: _STATUS_CLASS.get(str(status), "")
    env.filters["short"] = lambda digest: (str(digest)[:12] if digest else "-")
    env.filters["pretty"] = lambda data: json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    return env


def _write(path: Path, text: str) -> None:
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(text, encoding="utf-8")
    scratch.replace(path)


def write(data: dict[str, Any], out: Path) -> Path:
    """Write every page of ``data`` into ``out``; the overview's path."""
    out.mkdir(parents=True, exist_ok=True)
    env = _environment()
    common = {"data": data, "state_root": Path(data["project"]) / ".axpipe"}

    def page(template: str, name: str, **context: Any) -> None:
        _write(out / name, env.get_template(template).render(**common, **context))

    page("index.html.j2", "index.html", trend_svg=trend.svg(data["trend"]))
    for goal in data["goals"]:
        page("goal.html.j2", goal["page"], goal=goal, links=_links(out, data["project"]))
    for repair in data["repairs"]:
        page("repair.html.j2", repair["page"], repair=repair)
    for gate in data["gates"]:
        page("gate.html.j2", gate["page"], gate=gate, links=_links(out, data["project"]))
    for task in data["schedules"]:
        page("schedule.html.j2", task["page"], task=task)
    # Without indent: json then uses its C encoder, 4x faster on a large project.
    _write(out / "report.json", json.dumps(data, ensure_ascii=False) + "\n")
    return out / "index.html"


def _links(out: Path, project: str) -> Any:
    """A filter turning a file the evidence names (a log, a screenshot) into a link relative
    to the report folder, so it opens from ``file://`` and keeps working if both move together."""
    state = Path(project) / ".axpipe"

    def link(path: str | None) -> str | None:
        if not path:
            return None
        target = Path(path) if os.path.isabs(path) else state / path
        return os.path.relpath(target, out) if target.exists() else None

    return link
