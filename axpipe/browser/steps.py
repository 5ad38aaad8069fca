"""A ``[found]`` criterion's steps: declared in the recipe, checked before the browser
starts, run one by one in a page, each failure named by its step.

Steps (one-key mappings, in order)::

    - open: /form                  # a path on the app's url, or a localhost URL
    - fill: {selector: "#name", value: Ada}
    - click: "button[type=submit]"
    - press: {selector: "#name", key: Enter}   # selector optional: the focused element
    - expect_text: Hello, Ada       # or {text: ..., selector: ...}
    - expect_no_console_errors: true

The page's console errors and uncaught exceptions are recorded all along; a request for
``/favicon.ico`` that fails is ignored (browsers ask for it on their own) and the log says so.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from axpipe.records import record

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page

ACTIONS = ("open", "click", "fill", "press", "expect_text", "expect_no_console_errors")


@record
class Step:
    action: str
    selector: str | None = None
    value: str | None = None

    def describe(self) -> str:
        if self.action == "fill":
            return f"fill {self.selector!r} with {self.value!r}"
        if self.action == "press":
            return f"press {self.value} in {self.selector!r}" if self.selector else f"press {self.value}"
        if self.action == "expect_text":
            return f"expect text {self.value!r}" + (f" in {self.selector!r}" if self.selector else "")
        if self.action == "expect_no_console_errors":
            return "expect no console errors"
        return f"{self.action} {self.selector or self.value!r}"


def parse(raw: list[Any]) -> tuple[list[Step], list[tuple[str, str]]]:
    """The steps, and a ``(where, problem)`` per step that is not one of the forms above."""
    steps: list[Step] = []
    problems: list[tuple[str, str]] = []
    if not raw:
        problems.append(("steps", "a browser check needs at least one step"))
    for index, item in enumerate(raw):
        where = f"steps[{index}]"
        if not isinstance(item, dict) or len(item) != 1:
            problems.append((where, f"a step is a mapping with one key, one of {', '.join(ACTIONS)}"))
            continue
        [(action, argument)] = item.items()
        step = _step(str(action), argument)
        if isinstance(step, str):
            problems.append((where, f"{action} {step}"))
        else:
            steps.append(step)
    return steps, problems


def describe_problems(problems: list[tuple[str, str]]) -> str:
    return "; ".join(f"{where}: {problem}" for where, problem in problems)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _step(action: str, argument: Any) -> Step | str:
    if action not in ACTIONS:
        return f"is not a step; the steps are {', '.join(ACTIONS)}"
    if action in ("open", "click"):
        return Step(action, selector=argument if action == "click" else None,
                    value=argument if action == "open" else None) if _text(argument) else "needs a non-empty text"
    if action == "expect_no_console_errors":
        return Step(action) if argument is True else "takes `true`"
    if action == "expect_text" and _text(argument):
        return Step(action, value=argument)
    if not isinstance(argument, dict):
        return "needs a mapping" + (" or a text" if action == "expect_text" else "")
    keys = {"fill": ("selector", "value"), "press": ("key",), "expect_text": ("text",)}[action]
    optional = {"fill": (), "press": ("selector",), "expect_text": ("selector",)}[action]
    unknown = sorted(set(argument) - set(keys) - set(optional))
    missing = [key for key in keys if not _text(argument.get(key))]
    if unknown or missing:
        return "; ".join([*(f"unknown key {key!r}" for key in unknown), *(f"needs `{key}`" for key in missing)])
    value = argument.get("value") if action == "fill" else argument.get("key") or argument.get("text")
    return Step(action, selector=argument.get("selector"), value=str(value))


@record
class Outcome:
    """How the steps went: the failure (None when all held), what each step did, the console."""

    failure: str | None
    done: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    crashed: bool = False
    screenshot: Path | None = None


def run(browser: Browser, steps: list[Step], *, base_url: str, timeout: float, screenshot: Path) -> Outcome:
    """Run ``steps`` in a new page; a screenshot of where it ended is kept at ``screenshot``."""
    from playwright.sync_api import Error

    outcome = Outcome(None)
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1024, "height": 768})

    def on_console(message: ConsoleMessage) -> None:
        url = str(message.location.get("url", ""))
        ignored = message.type == "error" and url.endswith("/favicon.ico")
        outcome.console.append(f"{message.type}: {message.text}" + (" (ignored: the favicon)" if ignored else ""))
        if message.type == "error" and not ignored:
            errors.append(message.text)

    def on_error(error: Exception) -> None:
        outcome.console.append(f"uncaught: {error}")
        errors.append(f"uncaught {error}")

    def on_crash(_: Page) -> None:
        outcome.crashed = True

    page.on("console", on_console)
    page.on("pageerror", on_error)
    page.on("crash", on_crash)
    for number, step in enumerate(steps, start=1):
        label = f"step {number} ({step.describe()})"
        try:
            problem = _perform(page, step, base_url=base_url, timeout=timeout, errors=errors)
        except (Error, AssertionError) as error:
            problem = _explain(step, error, timeout, crashed=outcome.crashed)
        if problem is not None:
            outcome.failure = f"{label}: {problem}"
            break
        outcome.done.append(f"{label}: ok")
    if not outcome.crashed:
        try:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
            outcome.screenshot = screenshot
        except Error as error:
            outcome.console.append(f"no screenshot: {error.message.splitlines()[0]}")
    return outcome


def _perform(page: Page, step: Step, *, base_url: str, timeout: float, errors: list[str]) -> str | None:
    from playwright.sync_api import expect

    ms = timeout * 1000
    if step.action == "open":
        url = urljoin(base_url, step.value or "")
        response = page.goto(url, timeout=ms)
        if response is not None and response.status >= 400:
            return f"{url} answered HTTP {response.status}"
    elif step.action == "click":
        page.click(str(step.selector), timeout=ms)
    elif step.action == "fill":
        page.fill(str(step.selector), str(step.value), timeout=ms)
    elif step.action == "press":
        if step.selector:
            page.press(step.selector, str(step.value), timeout=ms)
        else:
            page.keyboard.press(str(step.value))
    elif step.action == "expect_text":
        expect(page.locator(step.selector or "body").first).to_contain_text(str(step.value), timeout=ms)
    elif errors:
        return f"{len(errors)} console error(s): " + " | ".join(errors[:5])
    return None


def _explain(step: Step, error: Exception, timeout: float, *, crashed: bool) -> str:
    """What went wrong, in words naming the element, not Playwright's call log."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if crashed or "crash" in str(error).lower():
        return "the page crashed"
    if isinstance(error, PlaywrightTimeout) and step.selector and step.action in ("click", "fill", "press"):
        return f"no element matches {step.selector!r} within {timeout:g} s"
    if isinstance(error, AssertionError) and step.action == "expect_text":
        where = f"{step.selector!r}" if step.selector else "the page"
        return f"{where} does not show {step.value!r} within {timeout:g} s"
    first = str(error).strip().splitlines()
    return first[0] if first else type(error).__name__
