"""A browser paging the console's audit log until its stdin closes (for bench.console_bench).

Headless Chromium (Debian's, through Playwright's ``executable_path``) logs in with the link
given on the command line, then loads filtered audit pages and follows "Older events" from
each, as an owner reading the log would, only without pausing. Prints the number of pages it
loaded when it stops.

Run by the bench: ``python -m bench.console_pager chromium|http|elsewhere URL LINK PACE``.
``http``: the same pages through a plain HTTP client; ``elsewhere``: Chromium loading copies
of them from a static server of its own (the browser's cost to the machine, not the console's).
"""

from __future__ import annotations

import itertools
import re
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
FILTERS: tuple[dict[str, str], ...] = (
    {},
    {"player": "player7"},
    {"tool": "tool3"},
    {"outcome": "deny"},
    {"kind": "run_command.decision"},
    {"player": "player42", "kind": "tool.invoke"},
    {"since": "2026-11-20", "until": "2026-11-21"},
)
OLDER_PER_FILTER = 3


def main(argv: list[str]) -> int:
    how, url, link, pace = argv
    stop = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()  # the bench closes it to stop the pager
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    if how == "http":
        return _http(url, link, stop, float(pace))
    if how == "elsewhere":
        return _elsewhere(url, link, stop)
    pages = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        page.goto(link)
        page.wait_for_url(f"{url}/functions")
        print("ready", flush=True)
        for chosen in itertools.cycle(FILTERS):
            if stop.is_set():
                break
            page.goto(f"{url}/audit?{urlencode(chosen)}")
            pages += 1
            for _ in range(OLDER_PER_FILTER):
                older = page.locator("#older")
                if stop.is_set() or older.count() == 0:
                    break
                older.click()
                page.wait_for_load_state()
                pages += 1
        browser.close()
    print(pages, flush=True)
    return 0


def _http(url: str, link: str, stop: threading.Event, pace: float) -> int:
    """The same pages fetched by a plain HTTP client, not rendered: what the console itself
    costs, without a browser's own work on the machine. ``pace``: pages a second (0: as fast
    as the console answers)."""
    pages = 0
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=60.0) as client:
        client.get(link.removeprefix(url)).raise_for_status()
        print("ready", flush=True)
        for chosen in itertools.cycle(FILTERS):
            if stop.is_set():
                break
            params: dict[str, str] = dict(chosen)
            for _ in range(OLDER_PER_FILTER + 1):
                if pace > 0:  # the schedule of a steady reader, not a sleep after each page
                    stop.wait(max(0.0, started + pages / pace - time.monotonic()))
                if stop.is_set():
                    break
                answer = client.get("/audit", params=params)
                pages += 1
                older = re.search(r'href="/audit\?[^"]*before=(\d+)[^"]*" id="older"', answer.text)
                if stop.is_set() or older is None:
                    break
                params["before"] = older.group(1)
    print(pages, flush=True)
    return 0


def _elsewhere(url: str, link: str, stop: threading.Event) -> int:
    """The control: Chromium loading the same pages at the same pace from a static server of
    this process, not from the bridge. The machine carries the browser's work, the bridge
    serves nothing: what is left of the slowdown is the browser's, not the console's."""
    folder = Path(tempfile.mkdtemp(prefix="console-pager-"))
    with httpx.Client(base_url=url, timeout=60.0) as client:
        client.get(link.removeprefix(url)).raise_for_status()
        for n, chosen in enumerate(FILTERS):
            html = client.get("/audit", params=chosen).text
            (folder / f"page{n}.html").write_text(html.replace('id="older"', ""), "utf-8")
        (folder / "static").mkdir()
        (folder / "static" / "console.css").write_text(client.get("/static/console.css").text)

    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Not a line per page."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    pages = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        print("ready", flush=True)
        for n in itertools.cycle(range(len(FILTERS))):
            if stop.is_set():
                break
            for _ in range(OLDER_PER_FILTER + 1):
                page.goto(f"{base}/page{n}.html")
                pages += 1
        browser.close()
    server.shutdown()
    print(pages, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
