"""The console's query values, parsed where they arrive: anything a browser (or anyone) can
type gets a 400 naming the field, never a 500. ``str.isdigit`` takes ``²`` and ``٣``, a
19-digit number passes SQLite's 64 bits, and a date near year 1 or 9999 with an offset has no
UTC form: each was a traceback."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge.console.security import Refused

MAX_ROW_NUMBER = 2**63 - 1  # SQLite's and PostgreSQL's BIGINT
_ASCII_DIGITS = frozenset("0123456789")


def whole_number(text: str, field: str, what: str, *, most: int = MAX_ROW_NUMBER) -> int:
    """``text`` as a whole number from 0 to ``most`` written in ASCII digits, or a 400."""
    if not text or len(text) > len(str(most)) or not set(text) <= _ASCII_DIGITS:
        raise Refused(400, f"{field}: not {what}")
    number = int(text)
    if number > most:
        raise Refused(400, f"{field}: not {what}")
    return number


def moment(text: str, field: str) -> datetime:
    """``text`` as an aware date and time (UTC when it names no offset), or a 400."""
    refused = Refused(400, f"{field}: not a date and time (2026-12-04 or 2026-12-04T21:30)")
    if not text.isascii():
        raise refused
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)  # fails here, not in the query, when it has no UTC form
    except (ValueError, OverflowError):
        raise refused from None
