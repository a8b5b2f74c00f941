"""Opening the stores ``config.yml``'s ``storage`` section names (wiring: control -> store)."""

from __future__ import annotations

from pathlib import Path

from bridge.control import ControlPlane
from bridge.errors import StoreError
from bridge.store.archive import DATA_DIR_NAME, TurnArchive
from bridge.store.audit import AuditLog
from bridge.store.target import StorageTarget, open_stores


def storage_target(plane: ControlPlane, config_dir: Path) -> StorageTarget:
    storage = plane.config.storage
    return StorageTarget(
        data_dir=config_dir / DATA_DIR_NAME,
        backend=storage.backend,
        dsn=storage.dsn,
        password=storage.password_value,
    )


def open_storage(plane: ControlPlane, config_dir: Path) -> tuple[TurnArchive, AuditLog]:
    """The archive and the audit log, migrated. Raises `StoreError` naming the setting to look
    at when PostgreSQL cannot be reached or refuses the bridge."""
    target = storage_target(plane, config_dir)
    try:
        return open_stores(target)
    except StoreError as exc:
        if target.backend != "postgresql":
            raise
        # The password is among the plane's secrets: no message shows it, whatever the driver
        # put in its text.
        raise type(exc)(
            plane.redact(f"config.yml: storage.dsn (backend postgresql): {exc}")
        ) from exc
