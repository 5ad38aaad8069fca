"""Finding Chromium and launching it headless, for a check or for a test.

The browser is the system's (Debian's ``chromium`` package): Playwright's own download
cannot be fetched everywhere, and a package the system updates is one less thing to pin.
``AXPIPE_CHROMIUM`` names another executable. Every launch resolves no host but
``localhost`` and ``127.0.0.1``: Chromium otherwise looks up Google's servers at start-up,
and a check must not depend on (or leak to) the network.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from axpipe.errors import EnvironmentNotReady

if TYPE_CHECKING:  # Playwright costs ~250 ms to import: only browser checks and reports pay it
    from playwright.sync_api import Browser

ENV = "AXPIPE_CHROMIUM"
# The real binary first: /usr/bin/chromium is a shell wrapper that adds extension flags.
CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "chromium", "chromium-browser")
LOCAL_HOSTS = ("localhost", "127.0.0.1")
FLAGS = ("--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run", "--disable-sync", "--disable-quic", "--no-default-browser-check", "--disable-extensions",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1")
INSTALL_HINT = "install Debian's `chromium` package (apt-get install chromium) or set AXPIPE_CHROMIUM"


class BrowserNotReady(EnvironmentNotReady):
    """No browser, or no driver library: nothing was started (exit 5)."""


def find() -> Path | None:
    """The Chromium executable to use, or None when there is none."""
    named = os.environ.get(ENV)
    candidates = (named,) if named else CANDIDATES
    for candidate in candidates:
        path = candidate if os.sep in candidate else shutil.which(candidate)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return Path(path)
    return None


def executable() -> Path:
    """The executable, or :class:`BrowserNotReady` saying what to install. Checked before
    Playwright starts: its own error for a missing browser leaves temporary folders behind."""
    found = find()
    if found is None:
        named = os.environ.get(ENV)
        where = f"{ENV}={named} is not an executable file" if named else f"none of {', '.join(CANDIDATES)} exists"
        raise BrowserNotReady(f"no Chromium to check in: {where}; {INSTALL_HINT}")
    return found


@contextmanager
def browser() -> Iterator[Browser]:
    """A headless Chromium for the block; closed (and its processes gone) afterwards."""
    path = executable()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        raise BrowserNotReady(f"the browser driver library is missing ({error}); "
                              "install it with `pip install 'axpipe[browser]'`") from error
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(path), headless=True, args=list(FLAGS))
        try:
            yield launched
        finally:
            launched.close()
