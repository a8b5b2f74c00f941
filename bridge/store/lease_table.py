"""The table of a network's server leases (``bridge.app.server_leases``), created by the
migrations like every other table.

One row per server id: the bridge holding it (``holder``, one name per process start), the
*epoch* it took it at (one more with every take) and when the lease ends unless renewed
(``expires_at``, by the database's clock). Only a PostgreSQL store has leases: SQLite serves
one bridge. Version 1 is the table bridges created themselves before it was migrated, taken
over as it is (``IF NOT EXISTS``).
"""

from __future__ import annotations

from bridge.store.migrations import Migration, Schema

TABLE = "mineclaw_server_leases"

SCHEMA = Schema(
    "server_leases",
    (
        Migration.portable(
            1,
            "server leases: holder, epoch, expiry",
            f"CREATE TABLE IF NOT EXISTS {TABLE} (server_id TEXT PRIMARY KEY,"
            " holder TEXT NOT NULL, epoch BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)",
        ),
    ),
)
