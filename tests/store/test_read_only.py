"""The console's readers (`StorageTarget(read_only=True)`): connections that refuse every
write, check the schemas instead of migrating them, and never create a database file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bridge.errors import StoreError
from bridge.memory.store import MemoryStore
from bridge.store.audit_pages import AuditFilter
from bridge.store.target import StorageTarget
from tests.storage_backends import Backend


def test_every_reader_the_console_opens_reads_and_refuses_writes(backend: Backend) -> None:
    writer = backend.target
    reviews, audit = writer.open_reviews(), writer.open_audit()
    usage, archive, memories = writer.open_usage(), writer.open_archive(), None
    try:
        memories = MemoryStore(writer.open_state())
        audit.record("tool.invoke", {"player": "Alex"})
        audit.flush()
        reader = dataclasses.replace(writer, read_only=True)
        opened = [
            reader.open_reviews(),
            reader.open_audit_pages(),
            reader.open_usage(),
            reader.open_archive(),
            MemoryStore(reader.open_state()),
        ]
        seen_reviews, pages = opened[0], opened[1]
        try:
            assert seen_reviews.reviewed() == reviews.reviewed()
            shown = pages.page(AuditFilter(player="Alex"), before=None, limit=5)
            assert len(shown.events) == 1
            with pytest.raises(StoreError), seen_reviews._db.transaction() as tx:
                tx.execute("DELETE FROM function_reviews")
        finally:
            for one in opened:
                one.close()
    finally:
        for store in (reviews, audit, usage, archive, memories):
            if store is not None:
                store.close()


def test_a_reader_never_creates_nor_migrates(tmp_path: Path) -> None:
    reader = StorageTarget(tmp_path, read_only=True)
    with pytest.raises(StoreError, match="no such database file"):
        reader.open_audit_pages()
    assert not (tmp_path / "audit.sqlite3").exists()
    StorageTarget(tmp_path).open_archive().close()  # the archive's tables, not the reviews'
    with pytest.raises(StoreError, match="the bridge migrates it"):
        reader.open_reviews()
