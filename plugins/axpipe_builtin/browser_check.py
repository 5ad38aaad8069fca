"""The ``browser`` check kind: a ``[found]`` criterion checked on the running app in a real
headless Chromium (DESIGN §17).

The recipe's ``app:`` (or the check's own ``app``) is started, the steps run in a page, and
one screenshot of where the steps ended is kept with the console log in the check's
artifacts folder (a goal's receipt lists them; ``qa-report.md`` names the screenshot). A
step that fails is a failed check, with its screenshot. What keeps the check from running
at all (no browser, no driver library, malformed steps, an app that never answers, a
crashed page) is an error: no evidence either way. The app's process group is stopped
afterwards whatever happened.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import field
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from axpipe import interfaces
from axpipe.browser import app as apps
from axpipe.browser import chromium, steps
from axpipe.recipe.schema import App
from axpipe.records import record

DEFAULT_STEP_TIMEOUT = 5.0


@record
class BrowserParams:
    """Parameters of the ``browser`` check kind."""

    steps: list[Any] = field(default_factory=list, metadata={
        "doc": "what to do and see: open, click, fill, press, expect_text, expect_no_console_errors"})
    app: App | None = field(default=None, metadata={"doc": "the app to start (default: the recipe's `app:`)"})
    step_timeout: float = field(default=DEFAULT_STEP_TIMEOUT, metadata={
        "doc": "seconds each step may wait for its element or text", "min": 0.1, "max": 600.0})


def _error(summary: str, **extra: Any) -> interfaces.CheckOutcome:
    return interfaces.CheckOutcome(interfaces.CheckStatus.ERROR, summary, **extra)


class BrowserCheck:
    """Passes when every step holds in the page."""

    params_schema = BrowserParams
    needs_command = False
    medium: ClassVar[str] = "browser"  # qa-report.md says `browser` (axpipe.unit.closing)
    recipe_defaults: ClassVar[dict[str, str]] = {"app": "app"}

    def describe(self, params: BrowserParams) -> str:
        parsed, _ = steps.parse(params.steps)
        return "in a browser: " + "; ".join(step.describe() for step in parsed)

    def param_problems(self, params: BrowserParams) -> list[tuple[str, str]]:
        """Malformed steps, found when the recipe is composed (axpipe.recipe.rules)."""
        return steps.parse(params.steps)[1]

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        params: BrowserParams = request.params
        started = time.monotonic()
        parsed, problems = steps.parse(params.steps)
        if problems:  # refused when the recipe was composed; a contract frozen before that still says why
            return _error(f"check {request.check_id}: " + steps.describe_problems(problems))
        if params.app is None:
            return _error(f"check {request.check_id}: a browser check needs an `app` (here, or the recipe's `app:`)")
        host = urlsplit(params.app.url).hostname
        if host not in chromium.LOCAL_HOSTS:
            return _error(f"check {request.check_id}: app.url {params.app.url!r} is not on this machine: the browser "
                          f"resolves only {', '.join(chromium.LOCAL_HOSTS)} (no network for evidence)")
        try:
            chromium.executable()
        except chromium.BrowserNotReady as error:
            return _error(f"check {request.check_id}: {error.message}", missing_program="chromium")
        folder = request.artifacts_dir or request.cwd / ".axpipe" / "artifacts"
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)
        name = f"qa-{re.sub(r'[^A-Za-z0-9._-]+', '-', request.check_id)}-{stamp}"
        screenshot, console_log, app_log = (folder / f"{name}.png", folder / f"{name}-console.txt",
                                            folder / f"{name}-app.log")
        app = params.app
        try:
            with apps.running(app.command, cwd=request.cwd, env=request.env, ready=app.ready or app.url,
                              timeout=float(app.ready_timeout), log=app_log), chromium.browser() as browser:
                outcome = steps.run(browser, parsed, base_url=app.url, timeout=params.step_timeout,
                                    screenshot=screenshot)
        except apps.AppNotReady as error:
            return _error(f"check {request.check_id}: {error}", details={"artifacts": [str(app_log)]},
                          duration=time.monotonic() - started)
        except chromium.BrowserNotReady as error:
            return _error(f"check {request.check_id}: {error.message}", missing_program="chromium")
        console_log.write_text("\n".join([*outcome.done, "", "console:", *outcome.console]) + "\n",
                               encoding="utf-8")
        artifacts = [str(path) for path in (outcome.screenshot, console_log, app_log) if path is not None]
        tail = "\n".join([*outcome.done, *([outcome.failure] if outcome.failure else [])])
        duration = time.monotonic() - started
        details = {"artifacts": artifacts, "steps": outcome.done, "console": outcome.console}
        if outcome.crashed:
            return _error(f"check {request.check_id}: {outcome.failure or 'the page crashed'}", output_tail=tail,
                          duration=duration, details=details)
        if outcome.failure is not None:
            return interfaces.CheckOutcome(interfaces.CheckStatus.FAILED, outcome.failure, output_tail=tail,
                                           duration=duration, details=details)
        return interfaces.CheckOutcome(interfaces.CheckStatus.PASSED, f"{len(parsed)} step(s) held in the browser",
                                       output_tail=tail, duration=duration, details=details)



