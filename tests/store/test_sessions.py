"""The session records on both backends (a real SQLite file, a real PostgreSQL database): lane
starts, compactions and open prompts, kept across reopening."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bridge.errors import StoreError
from bridge.store.migrations import SchemaTooNewError
from bridge.store.sessions import CompactionRecord, SessionRecords
from tests.storage_backends import Backend

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_the_latest_start_of_each_lane_is_its_current_session(backend: Backend) -> None:
    with backend.archive() as archive:
        records = SessionRecords(archive.database)
        assert records.current_session("public") is None
        records.session_started("public", "s-1", NOW)
        records.session_started("ai-x", "ai-x.s-9", NOW)
        records.session_started("public", "s-2", NOW)
    with backend.archive() as archive:
        reopened = SessionRecords(archive.database)
        assert reopened.current_session("public") == "s-2"
        assert reopened.current_session("ai-x") == "ai-x.s-9"


def test_the_last_compaction_of_a_session_is_kept(backend: Backend) -> None:
    with backend.archive() as archive:
        records = SessionRecords(archive.database)
        assert records.last_compaction("s-1") is None
        records.compacted(CompactionRecord("s-1", "first", "t-3"), NOW)
        records.compacted(CompactionRecord("s-1", "second", "t-7"), NOW)
        records.compacted(CompactionRecord("s-2", "other", "t-9"), NOW)
        assert records.last_compaction("s-1") == CompactionRecord("s-1", "second", "t-7")


def test_open_prompts_are_taken_once_and_closed_ones_are_gone(backend: Backend) -> None:
    with backend.archive() as archive:
        records = SessionRecords(archive.database)
        records.prompt_opened("p1", {"target": "Alex", "command": "give Alex bread"}, NOW)
        records.prompt_opened("p2", {"target": "Bob"}, NOW)
        records.prompt_closed("p2")
    with backend.archive() as archive:
        reopened = SessionRecords(archive.database)
        [left] = reopened.take_open_prompts()
        assert (left.prompt_id, left.fields["target"], left.opened_at) == ("p1", "Alex", NOW)
        assert reopened.take_open_prompts() == []


def test_a_newer_schema_is_refused(backend: Backend) -> None:
    with backend.archive() as archive:
        SessionRecords(archive.database)
    backend.execute(
        "INSERT INTO schema_migrations (schema_name, version, description, applied_at)"
        " VALUES ('sessions', 99, 'from the future', '2030-01-01')"
    )
    with backend.archive() as archive, pytest.raises(SchemaTooNewError):
        SessionRecords(archive.database)


def test_a_naive_timestamp_is_refused(backend: Backend) -> None:
    with backend.archive() as archive:
        records = SessionRecords(archive.database)
        with pytest.raises(StoreError):
            records.session_started("public", "s-1", datetime(2026, 1, 1))
