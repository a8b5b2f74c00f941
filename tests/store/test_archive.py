"""The turn archive on both backends: a real SQLite file, a real PostgreSQL database."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import JsonValue

from bridge.errors import StoreError
from bridge.store.archive import ArchivedTurn, TurnArchive, default_archive_path
from tests.storage_backends import Backend

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def turn(turn_id: str, session: str = "s1", items: tuple[JsonValue, ...] = ()) -> ArchivedTurn:
    return ArchivedTurn(
        turn_id=turn_id,
        session_id=session,
        player="Alex",
        started_at=T0,
        ended_at=T0 + timedelta(seconds=2),
        model_ref="openai/gpt-x",
        control_version="cp-7",
        items=items or ({"type": "message", "role": "user", "text": f"hi from {turn_id}"},),
    )


def test_default_path_is_data_folder_inside_config(tmp_path: Path) -> None:
    archive = TurnArchive.in_config_dir(tmp_path)
    with archive:
        assert archive.path == tmp_path / "data" / "archive.sqlite3"
    assert default_archive_path(tmp_path).is_file()


def test_round_trip_is_lossless(backend: Backend) -> None:
    items: tuple[JsonValue, ...] = (
        {"type": "message", "text": "Grüße <red>§ \u0000 \U0001f600", "n": [1, 2.5, None, True]},
        {"type": "tool_call", "name": "run_command", "arguments": '{"command": "time set day"}'},
        "a bare string item",
    )
    original = turn("t1", items=items)
    with backend.archive() as archive:
        archive.append(original)
    with backend.archive() as reopened:
        assert reopened.all_turns() == [original]


def test_turns_are_read_per_session_in_order(backend: Backend) -> None:
    with backend.archive() as archive:
        for turn_id, session in [("a", "s1"), ("b", "s2"), ("c", "s1"), ("d", "s2")]:
            archive.append(turn(turn_id, session))
        assert [t.turn_id for t in archive.turns_of("s1")] == ["a", "c"]
        assert [t.turn_id for t in archive.turns_of("s2")] == ["b", "d"]
        assert archive.turns_of("nobody") == []
        assert archive.session_ids() == ["s1", "s2"]


def test_turns_are_read_per_player_across_sessions(backend: Backend) -> None:
    with backend.archive() as archive:
        archive.append(turn("a", "s1"))
        archive.append(turn("b", "s2").model_copy(update={"player": "Steve"}))
        archive.append(turn("c", "s3"))
        assert [t.turn_id for t in archive.turns_of_player("Alex")] == ["a", "c"]
        assert [t.turn_id for t in archive.turns_of_player("Steve")] == ["b"]


def test_uses_wal_journal(tmp_path: Path) -> None:
    with TurnArchive(tmp_path / "a.db"):
        mode = sqlite3.connect(tmp_path / "a.db").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)


def test_duplicate_turn_is_refused_and_first_copy_kept(backend: Backend) -> None:
    with backend.archive() as archive:
        archive.append(turn("t1"))
        with pytest.raises(StoreError, match="t1 is already archived"):
            archive.append(turn("t1", items=("other",)))
        assert archive.all_turns() == [turn("t1")]


def test_naive_timestamp_is_refused_without_writing(backend: Backend) -> None:
    naive = turn("t1").model_copy(update={"started_at": datetime(2026, 1, 1)})
    with backend.archive() as archive:
        with pytest.raises(StoreError, match="timezone"):
            archive.append(naive)
        assert archive.all_turns() == []


def test_non_json_item_is_refused_without_partial_turn(backend: Backend) -> None:
    bad = turn("t1").model_copy(update={"items": ({"ok": 1}, {"nan": float("nan")})})
    with backend.archive() as archive:
        with pytest.raises(StoreError, match="t1: an item is not plain JSON"):
            archive.append(bad)
        archive.append(turn("t2"))
        assert [t.turn_id for t in archive.all_turns()] == ["t2"]


def test_failure_inside_the_transaction_rolls_back_the_header(backend: Backend) -> None:
    with backend.archive() as archive:
        archive.append(turn("t1"))
    # A trigger makes the third item row fail after the header and two items are inserted.
    backend.refuse_inserts("turn_items", "NEW.position = 2", "disk says no", which="state")
    with backend.archive() as archive:
        with pytest.raises(StoreError, match="disk says no"):
            archive.append(turn("t2", items=("a", "b", "c", "d")))
        assert [t.turn_id for t in archive.all_turns()] == ["t1"]
        archive.append(turn("t3", items=("a", "b")))
        assert [t.turn_id for t in archive.all_turns()] == ["t1", "t3"]


def test_incomplete_turn_on_disk_is_reported_not_returned(backend: Backend) -> None:
    with backend.archive() as archive:
        archive.append(turn("t1", items=("a", "b")))
    backend.execute("DELETE FROM turn_items WHERE position = 1")
    with backend.archive() as archive:
        with pytest.raises(StoreError, match="turn t1 has 1 items, expected 2"):
            archive.all_turns()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="archive schema is at version 99, newer than this bridge"):
        TurnArchive(path)


def test_unopenable_path_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot open the turn archive at .*file"):
        TurnArchive(blocker / "a.db")


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="a.db"):
        TurnArchive(path)


def test_lone_surrogates_are_replaced_on_the_way_in_and_on_the_way_out(backend: Backend) -> None:
    with backend.archive() as archive:
        # A writer other than the engine: the turn is still stored, with U+FFFD for the half.
        archive.append(turn("t1", items=({"kind": "assistant_text", "text": "a\ud800b"},)))
    # An archive row holding the escape (another tool, an older bridge) ...
    backend.execute(
        "UPDATE turn_items SET item_json ="
        """ '{"kind": "assistant_text", "text": "x\\udc00y", "\\ud83d\\ude00": 1}'"""
        " WHERE turn_id = 't1'"
    )
    with backend.archive() as archive:
        # ... reads back as valid text; an escaped pair stays the character it encodes.
        [stored] = archive.all_turns()
    assert stored.items == ({"kind": "assistant_text", "text": "x\ufffdy", "\U0001f600": 1},)


def test_an_item_with_a_lone_surrogate_is_stored_replaced(backend: Backend) -> None:
    with backend.archive() as archive:
        archive.append(turn("t1", items=({"text": "a\ud800b", "\udfff": ["\ud800"]},)))
        [stored] = archive.all_turns()
    assert stored.items == ({"text": "a\ufffdb", "\ufffd": ["\ufffd"]},)


def test_a_turn_is_found_by_the_question_it_answered(backend: Backend) -> None:
    # The plugin's id of a kept question (protocol 1.5, asks) is archived with its turn, in
    # the same commit: a bridge sent the question again finds it answered already.
    asked = turn("t1").model_copy(update={"ask": "q-1"})
    with backend.archive() as archive:
        archive.append(asked)
        archive.append(turn("t2"))
    with backend.archive() as reopened:
        assert reopened.turn_of_ask("q-1") == asked
        assert reopened.turn_of_ask("q-2") is None
        assert [t.ask for t in reopened.all_turns()] == ["q-1", None]


def test_a_question_is_archived_once_whichever_bridge_ran_it(backend: Backend) -> None:
    first = turn("t1").model_copy(update={"ask": "q-1"})
    with backend.archive() as archive:
        archive.append(first)
        with pytest.raises(StoreError, match="question q-1 is already archived"):
            archive.append(turn("t2").model_copy(update={"ask": "q-1"}))
        archive.append(turn("t3"))  # turns without a question id never collide
        archive.append(turn("t4"))
        assert [t.turn_id for t in archive.all_turns()] == ["t1", "t3", "t4"]
