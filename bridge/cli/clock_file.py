"""The budgets' wall clock for ``serve``: the real one, or (tests only) a time read from a file.

When ``MINECLAW_CLOCK_FILE`` names a file, every reading of the clock reads the file: one
ISO-8601 timestamp with a time zone (``2026-12-03T23:59:00+00:00``). An end-to-end test moves
a running bridge past midnight by rewriting the file, without waiting a day. A file that is
missing or unreadable is an error at start, and at a later reading falls back to the real time
with a log line, so a broken test setup is loud and a running bridge keeps working.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from bridge.errors import ConfigError

CLOCK_FILE_ENV = "MINECLAW_CLOCK_FILE"

log = logging.getLogger(__name__)


def _read(path: Path) -> datetime:
    text = path.read_text(encoding="utf-8").strip()
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment


def budget_clock(environ: Mapping[str, str]) -> Callable[[], datetime]:
    """The clock named by the environment; raises ``ConfigError`` for an unreadable file."""
    name = environ.get(CLOCK_FILE_ENV)
    if not name:
        return lambda: datetime.now(UTC)
    path = Path(name)
    try:
        _read(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{CLOCK_FILE_ENV}={name}: not a readable timestamp: {exc}") from exc

    def now() -> datetime:
        try:
            return _read(path)
        except (OSError, ValueError) as exc:
            log.error("%s: %s; using the real time", CLOCK_FILE_ENV, exc)
            return datetime.now(UTC)

    return now
