"""The archive read a page at a time, newest first (the console's conversations), on both
backends: anyone's turns or one player's, by a cursor, with their items."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bridge.store.archive import ArchivedTurn
from tests.storage_backends import Backend

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _turn(n: int, player: str) -> ArchivedTurn:
    return ArchivedTurn(
        turn_id=f"t-{n}",
        session_id="s1",
        player=player,
        started_at=T0 + timedelta(minutes=n),
        ended_at=T0 + timedelta(minutes=n, seconds=5),
        model_ref="openai/gpt-x",
        control_version="1",
        items=(
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": "ok"},
        ),
    )


def test_pages_newest_first_by_cursor(backend: Backend) -> None:
    with backend.archive() as archive:
        for n in range(7):
            archive.append(_turn(n, "Steve" if n % 2 else "Alex"))
        first, older = archive.page(player=None, before=None, limit=3)
        assert [t.turn_id for t in first] == ["t-6", "t-5", "t-4"]
        assert first[0].items[0] == {"role": "user", "content": "question 6"}
        assert older is not None
        second, older = archive.page(player=None, before=older, limit=3)
        assert [t.turn_id for t in second] == ["t-3", "t-2", "t-1"]
        last, older = archive.page(player=None, before=older, limit=3)
        assert [t.turn_id for t in last] == ["t-0"] and older is None
        steve, more = archive.page(player="Steve", before=None, limit=10)
        assert [t.turn_id for t in steve] == ["t-5", "t-3", "t-1"] and more is None
        assert archive.page(player="Nobody", before=None, limit=10) == ([], None)
