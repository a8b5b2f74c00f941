"""Conversations kept in the store (`bridge.conversations.keeper`), on SQLite and PostgreSQL:
a bridge that takes over a server serves its players' conversations as the last one did, a
number is never given twice across bridges, a deleted conversation's turns are never restored,
and a file of the bridges before the store is imported."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from bridge.conversations.keeper import ConversationKeeper
from bridge.conversations.shelf import first
from bridge.store.player_state import PlayerState
from bridge.store.sessions import SessionRecords
from bridge.turns.lanes import private_lane_id
from tests.storage_backends import Backend

ALEX = "00000000-0000-4000-8000-00000000a1e0"
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def keepers(backend: Backend) -> tuple[ConversationKeeper, ConversationKeeper, list[PlayerState]]:
    one, two = backend.target.open_player_state(), backend.target.open_player_state()
    return (
        ConversationKeeper(one, private_lane_id),
        ConversationKeeper(two, private_lane_id),
        [one, two],
    )


async def test_a_takeover_serves_the_players_conversations_as_the_last_bridge_did(
    backend: Backend,
) -> None:
    a, b, stores = keepers(backend)
    try:
        assert b.lane_id(ALEX) == private_lane_id(ALEX)  # B read Alex before: cached
        started = await a.change(ALEX, lambda shelf: shelf.start("nether", NOW, 10))
        await a.change(ALEX, lambda shelf: shelf.start("redstone", NOW, 10))
        await a.change(ALEX, lambda shelf: shelf.switch(started.id))
        b.forget()  # B takes the server over
        shelf = b.shelf(ALEX)
        assert [(c.id, c.title) for c in shelf.state.conversations] == [
            ("1", None),
            ("2", "nether"),
            ("3", "redstone"),
        ]
        assert shelf.state.active == "2" and b.lane_id(ALEX) == private_lane_id(ALEX) + "-2"
    finally:
        for store in stores:
            store.close()


async def test_numbers_are_never_given_twice_across_bridges(backend: Backend) -> None:
    a, b, stores = keepers(backend)
    try:
        a.shelf(ALEX), b.shelf(ALEX)  # both cached conversation 1 alone
        made = await asyncio.gather(
            a.change(ALEX, lambda shelf: shelf.start(None, NOW, 10).id),
            b.change(ALEX, lambda shelf: shelf.start(None, NOW, 10).id),
        )
        assert sorted(made) == ["2", "3"]
        deleted = await b.change(ALEX, lambda shelf: shelf.delete("3", NOW))
        assert deleted is not None
        again = await a.change(ALEX, lambda shelf: shelf.start(None, NOW, 10).id)
        assert again == "4"  # 3 was deleted on B: never given again
    finally:
        for store in stores:
            store.close()


async def test_a_deleted_conversations_turns_are_never_restored(backend: Backend) -> None:
    a, b, stores = keepers(backend)
    records = SessionRecords(stores[0].database)
    try:
        made = await a.change(ALEX, lambda shelf: shelf.start("secret plans", NOW, 10))
        lane = a.lane_of(ALEX, made.id)
        records.session_started(lane, "s-secret", NOW)
        await b.change(ALEX, lambda shelf: shelf.delete(made.id, NOW))
        assert records.current_session(lane) is None
        # Even a shelf set back to an old number cannot reopen it.
        fresh = await a.change(ALEX, lambda shelf: shelf.start(None, NOW, 10))
        assert fresh.id != made.id and records.current_session(a.lane_of(ALEX, fresh.id)) is None
    finally:
        for store in stores:
            store.close()


async def test_a_change_holds_in_memory_while_the_store_is_gone(backend: Backend) -> None:
    a, _, stores = keepers(backend)
    try:
        a.shelf(ALEX)
        stores[0].database.close()
        made = await a.change(ALEX, lambda shelf: shelf.start(None, NOW, 10))
        assert a.lane_id(ALEX) == a.lane_of(ALEX, made.id)
        a.forget()  # not saved: kept
        assert a.shelf(ALEX).state.active == made.id
    finally:
        stores[1].close()


def test_a_file_is_imported_unless_the_player_is_already_stored(backend: Backend) -> None:
    a, b, stores = keepers(backend)
    try:
        old = first(NOW)
        old.conversations[0].title = "from the file"
        assert a.import_players({ALEX: old}) == 1
        assert b.import_players({ALEX: first(NOW)}) == 0
        assert b.shelf(ALEX).active.title == "from the file"
    finally:
        for store in stores:
            store.close()


async def test_a_full_default_pool_does_not_hold_a_players_conversations(backend: Backend) -> None:
    """The keeper reads and saves in the bridge's STORE pool, as the archive does: a default
    pool filled by slow work elsewhere (a stalled web fetch's thread, say) does not hold them."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(1))
    release = threading.Event()
    held = asyncio.ensure_future(asyncio.to_thread(release.wait))
    a, _, stores = keepers(backend)
    try:
        async with asyncio.timeout(30):
            await a.refresh(ALEX)
            made = await a.change(ALEX, lambda shelf: shelf.start("nether", NOW, 10).id)
        assert made == "2"
    finally:
        release.set()
        await held
        for store in stores:
            store.close()
