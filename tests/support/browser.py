"""A headless browser page for tests: Playwright's Python package driving Debian's Chromium.

We never run `playwright install` (no browser downloads here): the package ships its own driver and
we point it at /usr/bin/chromium. Without either, browser tests skip with the reason, unless
TG_REQUIRE_BROWSER=1 (CI), where a missing browser fails them instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.async_api import Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}

# Read at import: the autouse `clean_environ` fixture removes every TG_* variable before a test runs.
REQUIRE_BROWSER = os.environ.get("TG_REQUIRE_BROWSER") == "1"


def missing_browser() -> str | None:
    """Why no browser test can run here, or None when one can."""
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install playwright; no `playwright install` needed)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


def skip_unless_browser() -> None:
    """Skip the calling test when there is no browser; fail it instead under TG_REQUIRE_BROWSER=1."""
    reason = missing_browser()
    if reason is None:
        return
    if REQUIRE_BROWSER or os.environ.get("TG_REQUIRE_BROWSER") == "1":
        pytest.fail(f"a browser is required (TG_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


@contextlib.asynccontextmanager
async def browser_page() -> AsyncIterator[Page]:
    """A fresh Chromium (its own throwaway profile) and one page; closed on exit.

    Uncaught script errors on the page are collected in `page.script_errors` (a list of str),
    so a test can assert the page ran cleanly.
    """
    skip_unless_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport=VIEWPORT)
            page.script_errors = []
            page.on("pageerror", lambda error: page.script_errors.append(str(error)))
            yield page
        finally:
            await browser.close()
