"""What the bridge did, read from the audit log it writes (``data/audit.jsonl``).

The playground shows these records dimmed beside the player's view: the gates, each tool call
with its arguments and result, the whitelist's decision, the tokens a turn used. They are the
real records (already redacted by the bridge), not a second account of the turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

POLL_S = 0.05
"""How often the file is read for new lines (the audit writer's own round is 50 ms)."""
MAX_CHARS = 400

_SKIPPED_FIELDS = frozenset({"server_id", "session_id", "turn_id", "player_uuid", "uuid"})


def describe(line: str) -> str | None:
    """One audit line as one short line of text; None for a line that is not a record."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
        return None
    fields: Any = record.get("fields")
    shown = ""
    if isinstance(fields, dict):
        kept = {k: v for k, v in fields.items() if k not in _SKIPPED_FIELDS}
        shown = " ".join(
            f"{key}={json.dumps(value, ensure_ascii=False, separators=(',', ':'))}"
            for key, value in kept.items()
        )
    text = f"{record['kind']} {shown}".strip()
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


async def follow(path: Path, said: Callable[[str], None]) -> None:
    """Call ``said`` with each record appended to ``path`` from now on, until cancelled."""
    offset = path.stat().st_size if path.exists() else 0
    partial = ""
    while True:
        if path.exists():
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                handle.seek(offset)
                chunk = handle.read()
                offset = handle.tell()
            partial += chunk
            *lines, partial = partial.split("\n")
            for line in lines:
                text = describe(line)
                if text is not None:
                    said(text)
        await asyncio.sleep(POLL_S)
