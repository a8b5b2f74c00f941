"""Opening the stores ``config.yml``'s ``storage`` section names (wiring: control -> store)."""

from __future__ import annotations

from pathlib import Path

from bridge.control import ControlPlane
from bridge.errors import StoreError
from bridge.memory.store import MemoryStore
from bridge.store.archive import DATA_DIR_NAME, TurnArchive
from bridge.store.audit import AuditLog
from bridge.store.target import StorageTarget, open_stores
from bridge.store.usage import UsageLedger


def storage_target(plane: ControlPlane, config_dir: Path) -> StorageTarget:
    storage = plane.config.storage
    return StorageTarget(
        data_dir=config_dir / DATA_DIR_NAME,
        backend=storage.backend,
        dsn=storage.dsn,
        password=storage.password_value,
        deadline_s=storage.deadline_s,
        statement_timeout_ms=round(storage.statement_timeout_s * 1000),
        commit_deadline_s=storage.commit_deadline_s,
    )


def open_storage(plane: ControlPlane, config_dir: Path) -> tuple[TurnArchive, AuditLog]:
    """The archive and the audit log, migrated. Raises `StoreError` naming the setting to look
    at when PostgreSQL cannot be reached or refuses the bridge."""
    target = storage_target(plane, config_dir)
    try:
        return open_stores(target)
    except StoreError as exc:
        raise _located(plane, target, exc) from exc


def open_usage(plane: ControlPlane, config_dir: Path) -> UsageLedger:
    """The usage ledger token budgets count in, migrated, in the same storage."""
    target = storage_target(plane, config_dir)
    try:
        return target.open_usage()
    except StoreError as exc:
        raise _located(plane, target, exc) from exc


def open_memories(plane: ControlPlane, config_dir: Path) -> MemoryStore:
    """The memories (`bridge.memory`), migrated, on their own connection to the state database
    (the archive's file on SQLite, the one database on PostgreSQL): a recall never waits
    behind an archive write."""
    target = storage_target(plane, config_dir)
    try:
        return MemoryStore(target.open_state())
    except StoreError as exc:
        raise _located(plane, target, exc) from exc


def _located(plane: ControlPlane, target: StorageTarget, exc: StoreError) -> StoreError:
    """The error to raise: a PostgreSQL one names ``storage.dsn``; an SQLite one is kept."""
    if target.backend != "postgresql":
        return exc
    # The password is among the plane's secrets: no message shows it, whatever the driver put
    # in its text.
    return type(exc)(plane.redact(f"config.yml: storage.dsn (backend postgresql): {exc}"))
