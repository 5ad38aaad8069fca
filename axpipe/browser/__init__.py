"""A real headless browser for evidence (DESIGN §17): Debian's Chromium driven by Playwright.

:mod:`chromium` finds the browser and launches it with no network beyond the machine,
:mod:`app` starts the application a ``[found]`` criterion is checked on and stops its
process group afterwards, :mod:`steps` runs a criterion's declared steps and keeps a
screenshot and the console log.

Why Playwright and not Selenium with ``chromium-driver`` (measured: docs/report.md): when
axpipe itself is killed, Playwright's driver sees its pipe close and takes the browser
with it, while chromedriver and its browser stay behind; a crashed page is reported as a
crash and the browser stays usable for the next criterion; its errors name the selector
and what was awaited. It is pointed at the system's Chromium (``executable_path``), so
nothing is downloaded.
"""
