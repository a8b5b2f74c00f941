"""Extraction on the saved pages: the main content stays (headings, lists, tables, code, links
made absolute), the boilerplate goes (navigation, sidebars, banners, footers, scripts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.web.content import MediaType, decode
from bridge.web.extract import extract_html

PAGES = Path(__file__).parent / "pages"

CASES = {
    # Titles are trafilatura's: the page's own, without the site's name.
    "wiki_article.html": (
        "Blast Furnace",
        [
            "# Blast Furnace",
            "## Obtaining",
            "twice as fast as a furnace",
            "[furnace](https://wiki.example/Furnace)",
            "Raw iron, raw gold and raw copper",
            "5 iron ingots, 1 furnace, 3 smooth stone",
        ],
        ["Accept all", "Recent changes", "Upload file", "Privacy policy", "track(", "ads"],
    ),
    "plugin_docs.html": (
        "Configuration",
        ["# Configuration", "warmup-seconds: 3", "default-limit", "need a restart"],
        ["Discord", "Edit this page", "_docsearch"],
    ),
    "forum_thread.html": (
        "Villagers not restocking after update?",
        ["stopped restocking", "doDaylightCycle", "That was it – a plugin"],
        ["Register", "Iron farm stopped", "Terms and rules"],
    ),
    "landing.html": ("Minecraft hosting", ["Servers from 2 GB."], []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_main_content_stays_and_the_boilerplate_goes(name: str) -> None:
    title, kept, dropped = CASES[name]
    decoded = decode((PAGES / name).read_bytes(), MediaType.parse("text/html"), "html")
    extracted = extract_html(decoded.text, f"https://wiki.example/{name}")
    assert extracted.title == title
    for snippet in kept:
        assert snippet in extracted.text, (snippet, extracted.text)
    for snippet in dropped:
        assert snippet not in extracted.text, (snippet, extracted.text)
    if name == "forum_thread.html":
        assert decoded.charset == "windows-1252"  # found by the <meta charset> prescan


def test_an_empty_page_is_empty_text() -> None:
    assert extract_html("   ", "https://wiki.example/") == extract_html("", "https://x.example/")
