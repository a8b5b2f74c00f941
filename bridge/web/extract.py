"""Readable text out of an HTML page, with trafilatura.

trafilatura keeps the main content (headings, paragraphs, lists, tables, links as Markdown with
absolute URLs) and drops scripts, styles, navigation, sidebars and footers. Judged against
readability-lxml + markdownify on the pages under ``tests/web/pages`` (see docs/tools.md):
readability kept a documentation page's top bar, lost a forum thread's title and left links
relative; trafilatura did none of that and is one library, so it is kept. A page with too
little main content for its heuristics falls back to trafilatura's whole-page text. Never a
regular expression over HTML.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None
    text: str


def extract_html(html: str, url: str) -> Extracted:
    """The page's title and main text as Markdown-like plain text."""
    # Imported on first use: trafilatura pulls in a date parser the bridge needs only here.
    import trafilatura
    from trafilatura.metadata import extract_metadata

    if not html.strip():
        return Extracted(None, "")
    text = trafilatura.extract(
        html,
        url=url,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_comments=False,
        include_images=False,
        favor_recall=True,
        deduplicate=False,
    )
    if not text:
        text = trafilatura.html2txt(html) or ""
    metadata = extract_metadata(html, default_url=url)
    title = metadata.title if metadata is not None else None
    return Extracted(title or None, text.strip())
