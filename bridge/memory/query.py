"""A question turned into the keyword query of the memory index.

Both indexes take the same words: each run of letters or digits of the question, folded to
lower case, common English words left out, at most `MAX_TERMS` of them (the longest first:
short words say least), any of them matching (OR); the ranking (BM25, ``ts_rank_cd``) weighs
the rarer words up. Nothing of the player's text is passed as query syntax: each term is
plain letters and digits, quoted for FTS5, and written as a plain lexeme for PostgreSQL.
"""

from __future__ import annotations

import re

MAX_TERMS = 16
MIN_TERM_CHARS = 2
_WORD = re.compile(r"[^\W_]+")
# Words that match nearly every note and say nothing of what is asked: left out, so "where is
# my base?" does not recall every memory that holds "is".
STOP_WORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have he her his"
    " how i if in into is it its me my no not of on or our she so than that the their them then"
    " there these they this to us was we were what when where which who whom why will with"
    " would you your about any all".split()
)


def terms_of(question: str) -> tuple[str, ...]:
    """The distinct terms of ``question`` the index is asked for (empty: nothing to find)."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(question.casefold()):
        word = match.group()
        if word in STOP_WORDS:
            continue
        if len(word) >= MIN_TERM_CHARS or not word.isascii():
            seen.setdefault(word[:64], None)
    words = sorted(seen, key=len, reverse=True)[:MAX_TERMS]
    return tuple(words)


def words_of(text: str) -> list[str]:
    """Every run of letters or digits of ``text``, folded (how a memory's words are counted
    when candidates are ranked; the indexes' tokenizers split the same way)."""
    words: list[str] = _WORD.findall(text.casefold())
    return words


def fts5_query(terms: tuple[str, ...], owners: tuple[str, ...]) -> str:
    """``text : ("a" OR "b") AND owner : ("o…" OR "oserver")``: each term a quoted FTS5
    string (a term holds no quote to escape; an owner token is letters and digits)."""
    words = " OR ".join(f'"{term}"' for term in terms)
    owned = " OR ".join('"' + owner.replace('"', '""') + '"' for owner in owners)
    return f"text : ({words}) AND owner : ({owned})"


def tsquery(terms: tuple[str, ...]) -> str:
    """``'a' | 'b'`` for PostgreSQL's ``to_tsquery('simple', ...)``."""
    return " | ".join(f"'{term}'" for term in terms)
