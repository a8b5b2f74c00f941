"""The stores one ``serve`` process opens where ``config.yml``'s ``storage`` says: the archive
and audit log, the usage ledger, the Function reviews and the memories, their schemas migrated.
Opened together or not at all: when one cannot be opened, those opened before it are closed
again before the error goes up."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from bridge.app.serving.storage_settings import (
    open_memories,
    open_storage,
    open_usage,
    storage_target,
)
from bridge.control import ControlPlane
from bridge.functions.review_state import ReviewBook
from bridge.memory.store import MemoryStore
from bridge.store.archive import TurnArchive
from bridge.store.audit import AuditLog
from bridge.store.usage import UsageLedger


@dataclass(frozen=True, slots=True)
class ProcessStores:
    archive: TurnArchive
    audit: AuditLog
    usage: UsageLedger
    reviews: ReviewBook
    memories: MemoryStore

    def close(self) -> None:
        self.reviews.close()
        self.memories.close()
        self.usage.close()
        self.audit.close()
        self.archive.close()


def open_stores(plane: ControlPlane, config_dir: Path) -> ProcessStores:
    """Raises ``StoreError`` (or ``ConfigError``) with nothing left open."""
    with contextlib.ExitStack() as opened:
        archive, audit = open_storage(plane, config_dir)
        opened.callback(archive.close)
        opened.callback(audit.close)
        usage = open_usage(plane, config_dir)
        opened.callback(usage.close)
        reviews = ReviewBook(storage_target(plane, config_dir).open_reviews())
        opened.callback(reviews.close)
        memories = open_memories(plane, config_dir)
        opened.pop_all()  # all open: the caller closes them
    return ProcessStores(archive, audit, usage, reviews, memories)
