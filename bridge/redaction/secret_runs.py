"""Configured secrets found by any long enough run of their characters, not only whole.

A secret leaks in pieces as well as whole: a console line that prints a key's tail
(``...k3y-tail``), a tool that cuts a value, a player who quotes three words of a four-word
passphrase. So every run of at least ``MIN_RUN`` characters of a configured secret is a match,
wherever it sits, and the match is grown to everything of the secret around it.

How: each secret (its whitespace collapsed to single spaces, so a passphrase wrapped over two
lines or typed with two spaces is still the same) is cut into its ``MIN_RUN``-character pieces,
and one RE2 alternation of all pieces (a whitespace in a piece matching any run of whitespace)
finds the first piece in a text in linear time. The piece found names the secrets and offsets
it comes from; the match is then extended both ways along each of them.

A secret shorter than ``MIN_RUN`` is only ever matched whole (`bridge.redaction` does that);
a run shorter than ``MIN_RUN`` is too common to redact (``password`` is in many passphrases).

The streaming side: `held_tail` says how much of a text that is still arriving must wait,
because it could be the beginning of a run that only the next characters complete.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import re2

MIN_RUN = 12
"""The shortest run of a secret's characters that is redacted on its own."""

_WHITESPACE = " \t\n\r\f\v"
_WHITESPACE_RUN = re.compile(f"[{_WHITESPACE}]+")
_RE2_WHITESPACE_RUN = r"[ \t\n\r\f\v]+"
_MAX_MEM = 64 << 20  # an alternation of a few thousand pieces (a long PEM key) fits easily


def normal(value: str) -> str:
    """``value`` with every run of whitespace as one space (kept at the ends)."""
    return _WHITESPACE_RUN.sub(" ", value)


def _flexible(piece: str) -> str:
    return _RE2_WHITESPACE_RUN.join(re2.escape(part) for part in piece.split(" "))


class SecretRuns:
    """The configured secrets of one redactor, searched by their runs."""

    def __init__(self, values: Iterable[str], *, min_run: int = MIN_RUN) -> None:
        self._min_run = min_run
        everything = {normal(value).strip() for value in values}
        self._all = tuple(sorted((v for v in everything if v), key=len, reverse=True))
        self._long = tuple(v for v in self._all if len(v) >= min_run)
        self._short = tuple(v for v in self._all if len(v) < min_run)
        pieces: dict[str, list[tuple[int, int]]] = {}
        for index, secret in enumerate(self._long):
            for offset in range(len(secret) - min_run + 1):
                pieces.setdefault(secret[offset : offset + min_run], []).append((index, offset))
        self._pieces = pieces
        # Every character of a secret (whitespace as the space `normal` makes of it): a tail
        # ending in any other character is in no secret, at any length.
        self._chars = frozenset("".join(self._all))
        self._regexp: Any = None
        if pieces:
            options = re2.Options()
            options.never_capture = True
            options.max_mem = _MAX_MEM
            self._regexp = re2.compile("|".join(_flexible(p) for p in pieces), options)

    def __bool__(self) -> bool:
        return self._regexp is not None

    def found_in(self, text: str) -> bool:
        return self._regexp is not None and self._regexp.search(text) is not None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where runs of the secrets are, each as long as the secret around it allows."""
        if self._regexp is None:
            return []
        found: list[tuple[int, int]] = []
        position = 0
        while position < len(text):
            match = self._regexp.search(text, position)
            if match is None:
                break
            start, end = match.span()
            for index, offset in self._pieces.get(normal(match.group(0)), ()):
                secret = self._long[index]
                grown_start = _back(text, start, secret, offset)
                grown_end = _forward(text, end, secret, offset + self._min_run)
                start, end = min(start, grown_start), max(end, grown_end)
            position = end
            # A space of the secret at either end of the run is the text's, not the secret's.
            while start < end and text[start] in _WHITESPACE:
                start += 1
            while end > start and text[end - 1] in _WHITESPACE:
                end -= 1
            found.append((start, end))
        return found

    def held_tail(self, text: str) -> int:
        """How many characters at the end of a still-growing ``text`` to hold back: the
        longest tail, shorter than a run, that more characters could turn into a match (the
        beginning of a run of a long secret, or of a short secret whole). A tail of a full
        run's length is a match already and is redacted where it stands.

        Every tail ends in the text's last character, so one that no secret holds ends the
        search at once: the usual case on a stream's frames, which end after a whitespace
        (`bridge.redaction.complete_words`) while keys and tokens have none."""
        if not text or normal(text[-1]) not in self._chars:
            return 0
        held = 0
        for length in range(1, min(len(text), self._min_run - 1) + 1):
            tail = normal(text[-length:])
            room = self._min_run - len(tail)  # a run beginning here needs this much more
            if any(tail in secret[: len(secret) - room] for secret in self._long) or any(
                secret.startswith(tail) for secret in self._short
            ):
                held = length
        return held


def _back(text: str, start: int, secret: str, offset: int) -> int:
    """How far before ``start`` the text goes on matching ``secret`` before ``offset``."""
    while offset > 0 and start > 0:
        wanted = secret[offset - 1]
        if wanted == " ":
            if text[start - 1] not in _WHITESPACE:
                break
            while start > 0 and text[start - 1] in _WHITESPACE:
                start -= 1
        elif text[start - 1] != wanted:
            break
        else:
            start -= 1
        offset -= 1
    return start


def _forward(text: str, end: int, secret: str, offset: int) -> int:
    """How far past ``end`` the text goes on matching ``secret`` from ``offset``."""
    while offset < len(secret) and end < len(text):
        wanted = secret[offset]
        if wanted == " ":
            if text[end] not in _WHITESPACE:
                break
            while end < len(text) and text[end] in _WHITESPACE:
                end += 1
        elif text[end] != wanted:
            break
        else:
            end += 1
        offset += 1
    return end
