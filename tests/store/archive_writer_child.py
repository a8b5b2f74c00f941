"""Child process for the kill-safety test: archives turns forever, acknowledging each commit.

Run as ``python archive_writer_child.py DB_PATH FIRST_INDEX``, or with ``DB_PATH`` a
``postgresql://`` DSN (its password in the environment variable ``MINECLAW_TEST_DB_PASSWORD``).
After each committed turn it prints the turn id on stdout and flushes, so the parent knows which
turns must survive a kill.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from bridge.store.archive import ArchivedTurn, TurnArchive
from bridge.store.database import Database, PostgresDatabase

ITEMS_PER_TURN = 300


def expected_items(turn_id: str) -> tuple[dict[str, object], ...]:
    return tuple(
        {"type": "message", "turn": turn_id, "position": position, "text": "x" * (position % 50)}
        for position in range(ITEMS_PER_TURN)
    )


def make_turn(index: int) -> ArchivedTurn:
    turn_id = f"turn-{index:06d}"
    now = datetime.now(UTC)
    return ArchivedTurn(
        turn_id=turn_id,
        session_id=f"session-{index // 10}",
        player="Steve",
        started_at=now,
        ended_at=now,
        model_ref="local/test",
        control_version="v1",
        items=expected_items(turn_id),  # type: ignore[arg-type]
    )


def main() -> None:
    where, first = sys.argv[1], int(sys.argv[2])
    database: Path | Database = Path(where)
    if where.startswith("postgresql://"):
        database = PostgresDatabase(where, password=os.environ["MINECLAW_TEST_DB_PASSWORD"])
    with TurnArchive(database) as archive:
        index = first
        while index < first + 5000:  # bounded even if the parent never kills it
            turn = make_turn(index)
            archive.append(turn)
            sys.stdout.write(turn.turn_id + "\n")
            sys.stdout.flush()
            index += 1


if __name__ == "__main__":
    main()
