"""Headless Chromium for the console's browser tests: Debian's ``chromium`` (``make install``)
driven by Playwright's Python API through ``executable_path``; Playwright's own browser
download is never used. Screenshots go to ``docs/console/`` (docs/console.md shows them)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"
WAIT_MS = 60_000


def chromium_path() -> Path:
    if not CHROMIUM.exists():
        found = shutil.which("chromium")
        if found is None:
            pytest.fail("the console's browser tests need Debian's chromium: make install")
        return Path(found)
    return CHROMIUM


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium_path()), headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


async def new_page(browser: Browser) -> tuple[Page, list[str]]:
    """A page in a fresh context (its own cookies) and the console errors it logs (a CSP
    violation shows there)."""
    context = await browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(WAIT_MS)
    page = await context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


async def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
