"""Readable text out of an HTML page: trafilatura first, plain text from the tree when it is
cut off.

trafilatura keeps the main content (headings, paragraphs, lists, tables, links as Markdown with
absolute URLs) and drops scripts, styles, navigation, sidebars and footers. Judged against
readability-lxml + markdownify on the pages under ``tests/web/pages`` (see docs/tools.md):
readability kept a documentation page's top bar, lost a forum thread's title and left links
relative; trafilatura did none of that and is one library, so it is kept. A page with too
little main content for its heuristics falls back to trafilatura's whole-page text. Never a
regular expression over HTML.

trafilatura is worse than linear on some shapes (a one-row table of 1 MB takes minutes), so it
only ever runs in an extraction worker process that is killed at the fetch's deadline
(``bridge.web.extraction_pool``), on at most ``MAIN_INPUT_CHARS`` characters. ``plain_text`` is
the fallback the worker makes first: one pass of lxml's parser and one walk of the tree, linear
in the page's size.
"""

from __future__ import annotations

from dataclasses import dataclass

MAIN_INPUT_CHARS = 2_000_000
"""The most characters of a page trafilatura is given (the rest is cut before parsing)."""
MAX_TITLE_CHARS = 300

# Elements whose text is no reading matter: code, styles, metadata, embedded documents.
_SKIPPED = ("script", "style", "noscript", "template", "head", "iframe", "object", "svg")
# Elements that start a new line in the plain text, so words of two blocks never run together.
_BLOCKS = (
    "p", "div", "br", "li", "tr", "table", "ul", "ol", "dl", "dt", "dd",
    "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "section", "article",
    "header", "footer", "nav", "aside", "main", "form", "hr", "figure", "figcaption",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Extracted:
    title: str | None
    text: str


def extract_html(html: str, url: str) -> Extracted:
    """The page's title and main text as Markdown-like plain text (trafilatura)."""
    # Imported on first use: trafilatura pulls in a date parser the bridge needs only here.
    import trafilatura
    from trafilatura.metadata import extract_metadata

    html = html[:MAIN_INPUT_CHARS]
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
    return Extracted(_title(title), text.strip())


def plain_text(html: str) -> Extracted:
    """The page's ``<title>`` and the text of its body, one line per block: linear in the
    page's size (lxml's parser, then C-level passes over the tree), for when trafilatura is
    cut off."""
    from lxml import etree
    from lxml import html as lxml_html

    if not html.strip():
        return Extracted(None, "")
    try:
        root = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):  # nothing parseable (only a comment, say)
        return Extracted(None, "")
    title = root.findtext(".//title")
    etree.strip_elements(root, *_SKIPPED, with_tail=False)
    # Block elements start and end a line, cells are set apart by a space: words of two
    # blocks never run together, and inline markup (<b>w</b>orld) stays one word.
    for element in root.iter(*_BLOCKS):
        element.text = "\n" + (element.text or "")
        element.tail = "\n" + (element.tail or "")
    for element in root.iter("td", "th"):
        element.tail = " " + (element.tail or "")
    text = etree.tostring(root, method="text", encoding="unicode")
    lines = (" ".join(line.split()) for line in text.splitlines())
    return Extracted(_title(title), "\n".join(line for line in lines if line))


def _title(title: str | None) -> str | None:
    if not title:
        return None
    return " ".join(title.split())[:MAX_TITLE_CHARS] or None
