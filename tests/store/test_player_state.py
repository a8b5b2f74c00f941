"""The per-player state in the store (`bridge.store.player_state`), on SQLite and PostgreSQL:
two bridges (two connections) see one player's conversations, numbers are never given twice,
a deleted conversation's lane is tombstoned, offers and owed lines are taken once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bridge.store.player_state import (
    MAX_OWED_PER_PLAYER,
    PlayerState,
    ShelfChanged,
    StoredConversation,
    StoredShelf,
)
from bridge.store.sessions import SessionRecords
from tests.storage_backends import Backend

ALEX = "00000000-0000-4000-8000-00000000a1e0"
T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def first_shelf() -> StoredShelf:
    return StoredShelf(1, 2, (StoredConversation(1, None, T0, None),))


def test_a_shelf_saved_by_one_bridge_is_read_by_another(backend: Backend) -> None:
    one, two = backend.target.open_player_state(), backend.target.open_player_state()
    try:
        assert one.shelf(ALEX) is None
        version = one.save_shelf(ALEX, first_shelf())
        shelf = two.shelf(ALEX)
        assert shelf is not None and shelf.version == version == 1
        started = StoredShelf(
            2, 3, (*shelf.conversations, StoredConversation(2, "redstone", T0, T0)), version
        )
        two.save_shelf(ALEX, started)
        again = one.shelf(ALEX)
        assert again is not None
        assert (again.active, again.next_id, again.version) == (2, 3, 2)
        assert [(c.id, c.title, c.last_active) for c in again.conversations] == [
            (1, None, None),
            (2, "redstone", T0),
        ]
    finally:
        one.close()
        two.close()


def test_a_shelf_read_before_another_bridges_change_is_refused(backend: Backend) -> None:
    one, two = backend.target.open_player_state(), backend.target.open_player_state()
    try:
        one.save_shelf(ALEX, first_shelf())
        read_by_one, read_by_two = one.shelf(ALEX), two.shelf(ALEX)
        assert read_by_one is not None and read_by_two is not None
        # Both give number 2: the second to save must read again, and then gets 3.
        mine = StoredConversation(2, "one", T0, None)
        one.save_shelf(ALEX, StoredShelf(2, 3, (*read_by_one.conversations, mine), 1))
        with pytest.raises(ShelfChanged):
            two.save_shelf(
                ALEX,
                StoredShelf(
                    2, 3, (*read_by_two.conversations, StoredConversation(2, "two", T0, None)), 1
                ),
            )
        fresh = two.shelf(ALEX)
        assert fresh is not None and fresh.next_id == 3
    finally:
        one.close()
        two.close()


def test_a_deleted_conversation_is_never_numbered_again_and_its_lane_is_tombstoned(
    backend: Backend,
) -> None:
    state = backend.target.open_player_state()
    records = SessionRecords(state.database)
    try:
        two = StoredConversation(2, "gone", T0, None)
        state.save_shelf(ALEX, StoredShelf(2, 3, (*first_shelf().conversations, two)))
        records.session_started("private-lane-2", "s-old", T0)
        assert records.current_session("private-lane-2") == "s-old"
        # Deleted: the shelf names conversation 1 alone; a stale next_id does not go back.
        state.save_shelf(
            ALEX, StoredShelf(1, 2, first_shelf().conversations, 1), ["private-lane-2"]
        )
        shelf = state.shelf(ALEX)
        assert shelf is not None
        assert [c.id for c in shelf.conversations] == [1] and shelf.next_id == 3
        assert records.current_session("private-lane-2") is None
        # Saving the deleted number again does not bring it back.
        state.save_shelf(ALEX, StoredShelf(1, 2, (*shelf.conversations, two), shelf.version))
        assert [c.id for c in (state.shelf(ALEX) or shelf).conversations] == [1]
    finally:
        state.close()


def test_persona_choices_and_listen_optouts(backend: Backend) -> None:
    state = backend.target.open_player_state()
    try:
        state.import_persona_choices({ALEX: "pirate"})
        state.import_persona_choices({ALEX: "ignored: already chosen"})
        assert state.persona_choice(ALEX) == "pirate"
        state.choose_persona(ALEX, None)
        assert state.persona_choices() == {}
        state.import_listen_optouts(frozenset({ALEX}))
        state.import_listen_optouts(frozenset({ALEX}))
        assert state.listen_optouts() == {ALEX}
        state.set_listen_optout(ALEX, False)
        assert state.listen_optouts() == frozenset()
    finally:
        state.close()


def test_a_retry_offer_is_taken_once_whichever_bridge_asks(backend: Backend) -> None:
    one, two = backend.target.open_player_state(), backend.target.open_player_state()
    try:
        offer = {"question": "how do I craft a piston?", "lane": "public"}
        expires = T0 + timedelta(minutes=30)
        one.offer_retry("lobby", ALEX, offer, expires)
        assert two.take_retry("survival", ALEX, T0) is None  # another server's
        assert two.take_retry("lobby", ALEX, T0) == (offer, expires)
        assert one.take_retry("lobby", ALEX, T0) is None
        two.put_back_retry("lobby", ALEX, offer, expires)
        assert one.take_retry("lobby", ALEX, T0 + timedelta(minutes=31)) is None  # expired
    finally:
        one.close()
        two.close()


def test_owed_lines_are_delivered_once_and_bounded_per_player(backend: Backend) -> None:
    one, two = backend.target.open_player_state(), backend.target.open_player_state()
    try:
        lines = [("lobby", ALEX, {"text": f"line {n}"}) for n in range(MAX_OWED_PER_PLAYER + 5)]
        one.owe(lines, T0)
        one.owe([("survival", ALEX, {"text": "elsewhere"})], T0)
        taken = two.take_owed("lobby")
        # The newest are kept; the survival line counts towards the player's bound too.
        assert len(taken) == MAX_OWED_PER_PLAYER - 1
        assert taken[-1].line == {"text": f"line {MAX_OWED_PER_PLAYER + 4}"}
        assert one.take_owed("lobby") == []
        assert [o.line for o in one.take_owed("survival")] == [{"text": "elsewhere"}]
    finally:
        one.close()
        two.close()


def test_state_survives_a_reopen(backend: Backend) -> None:
    with backend.target.open_state() as database:
        PlayerState(database).save_shelf(ALEX, first_shelf())
    state = backend.target.open_player_state()
    try:
        assert state.shelf(ALEX) is not None
    finally:
        state.close()
