"""One interface over the bridge's two database backends: SQLite (embedded, the default) and
PostgreSQL (a shared server, for a network of servers).

Repositories (the archive, the audit log, and every table added later) are written once against
`Database`. The SQL they pass uses ``?`` placeholders and the common subset of both dialects;
where the dialects differ (an auto-increment key), a migration gives each its own statement.

Each `Database` holds one connection, shared under a lock: repository calls come from worker
threads (the engine runs archive writes in the store's own pool, ``bridge.executors``) and the
audit writer.
Every failure leaves as `DatabaseError`, a `StoreError`, with the backend's reason.

A PostgreSQL connection can be lost at any time (the server restarts, a network drops, an idle
connection is cut). A transaction that finds its connection dead at ``BEGIN`` starts again on a
new one, since nothing of it was sent. One that loses it later fails with `DatabaseError`; the
connection is dropped and the next call opens a new one. Such a failure is not retried here:
whether the commit reached the server is unknown, and whether a write may be repeated is the
repository's decision (an archived turn is refused twice by its unique id, an audit batch is
counted lost).
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bridge.errors import StoreError
from bridge.store.deadline import WATCHDOG, Guard

if TYPE_CHECKING:
    import psycopg

Dialect = Literal["sqlite", "postgresql"]
Params = Sequence[Any]
Row = tuple[Any, ...]

CONNECT_TIMEOUT_S = 10
"""How long opening a PostgreSQL connection may take before the start (or a write) fails."""
STATEMENT_TIMEOUT_MS = 8_000
"""The longest one PostgreSQL statement may run (or wait for a lock) before the server fails it:
a turn's commit must end, in an error if need be, rather than hold its lane for good."""
DEADLINE_S = 10.0
"""The longest one PostgreSQL transaction (or read) may take, measured by the bridge itself:
a backend that hangs (paused, stuck) never fires its own ``statement_timeout``, and keepalives
see a healthy peer. Past it the connection's socket is shut down (``bridge.store.deadline``),
the operation fails and the next one opens a new connection. Longer than
``STATEMENT_TIMEOUT_MS``, so a statement the server can still stop ends with its clean error."""
# A server that stops answering without closing the connection (a dead host, a dropped
# network) is noticed by TCP keepalives and the kernel's unacknowledged-data timeout instead of
# after the system default of many minutes. The DSN may set any of these itself.
_CONNECTION_DEFAULTS: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 15,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}


class DatabaseError(StoreError):
    """A statement, a transaction or a connection failed. ``duplicate``: a unique key refused
    the row (the caller may report it as "already stored")."""

    def __init__(self, message: str, *, duplicate: bool = False) -> None:
        super().__init__(message)
        self.duplicate = duplicate


class DatabaseUnreachable(DatabaseError):
    """No connection could be made: nothing answered, the server is starting or shutting
    down, or the network failed. Trying again later may work (``serve`` waits at start);
    a refusal by the server (a wrong password, a missing database) is a plain
    ``DatabaseError``."""


def caused_by_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised because of, a ``DatabaseUnreachable`` (the openers
    wrap it in errors that name what they were opening)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, DatabaseUnreachable):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


_NOT_READY = ("starting up", "shutting down", "in recovery mode", "not yet accepting")


def _unreachable(exc: Exception) -> bool:
    # Class 08 is a connection failure, 57P03 "the database system is starting up", 57P01 an
    # administrator shutdown. A failed connect often carries no SQLSTATE at all; then libpq's
    # text tells: a server that answered says FATAL (a wrong password, no such database),
    # which waiting cannot mend unless it said it is not ready yet.
    state = getattr(exc, "sqlstate", None)
    if state is not None:
        return state.startswith("08") or state in ("57P03", "57P01")
    text = str(exc)
    return "FATAL:" not in text or any(words in text for words in _NOT_READY)


class Transaction(ABC):
    """Statements inside one transaction; committed when the ``with`` block ends normally."""

    @abstractmethod
    def execute(self, sql: str, params: Params = ()) -> None: ...

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Params]) -> None: ...

    @abstractmethod
    def query(self, sql: str, params: Params = ()) -> list[Row]: ...

    @abstractmethod
    def lift_deadline(self) -> None:
        """No client-side deadline for the rest of this transaction (a migration may rightly
        take long, or wait for another bridge's)."""


class Database(ABC):
    """An open database of either backend. Use ``transaction()`` for writes, ``query`` for
    reads; ``close`` when done."""

    dialect: Dialect
    description: str
    """Where the data is, for messages: a file path, or the DSN without its password."""
    read_only: bool = False
    """A connection that refuses every write (the console's readers): its schemas are
    checked, never migrated (`bridge.store.migrations.migrate`)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    @abstractmethod
    @contextmanager
    def transaction(self, *, deadline_s: float | None = None) -> Iterator[Transaction]:
        """One transaction, holding the connection until it ends (rolled back on error).
        ``deadline_s``: this transaction's own deadline instead of the database's (a short
        one where a caller waits on it, such as a turn's commit)."""

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        """Rows of one read, outside any explicit transaction."""
        with self.transaction() as tx:
            return tx.query(sql, params)

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# ---- SQLite


class _SqliteTransaction(Transaction):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> None:
        self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        self._conn.executemany(sql, rows)

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def lift_deadline(self) -> None:
        pass  # SQLite runs in this process: nothing of it can hang apart from it


class SqliteDatabase(Database):
    """A SQLite file in WAL mode. ``synchronous``: ``FULL`` (an fsync per commit: the archive)
    or ``NORMAL`` (a power loss may lose the last commits, never tear one: the audit log)."""

    dialect: Dialect = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.path = path
        self.description = str(path)
        self.read_only = read_only
        try:
            if read_only and not path.is_file():  # a reader never creates the file
                raise OSError("no such database file (the bridge makes it at its start)")
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            try:
                if read_only:
                    # The file is in WAL mode already (its writer set it); query_only makes
                    # SQLite refuse every write on this connection, whatever the code asks.
                    self._conn.execute("PRAGMA query_only=ON")
                else:
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    self._conn.execute(f"PRAGMA synchronous={synchronous}")
                self._conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error:
                self._conn.close()
                raise
        except (sqlite3.Error, OSError) as exc:
            raise DatabaseError(f"cannot open {path}: {exc}") from exc

    @contextmanager
    def transaction(self, *, deadline_s: float | None = None) -> Iterator[Transaction]:
        del deadline_s  # SQLite runs in this process: nothing of it can hang apart from it
        with self._lock:
            try:
                # IMMEDIATE takes the write lock at once: two writers never deadlock upgrading.
                # A reader's transaction is a consistent snapshot and takes no write lock.
                self._conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _sqlite_error(exc) from exc
            try:
                yield _SqliteTransaction(self._conn)
                self._conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(exc, sqlite3.Error):
                    raise _sqlite_error(exc) from exc
                raise

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        # Outside a transaction: a read takes no write lock, so a reader in another process
        # (a CLI command beside `serve`) never waits for one or holds one up.
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _sqlite_error(exc) from exc

    def user_version(self) -> int:
        """SQLite's own schema stamp (the archive kept its version there before migrations)."""
        with self._lock:
            try:
                (version,) = self._conn.execute("PRAGMA user_version").fetchone()
            except sqlite3.Error as exc:
                raise _sqlite_error(exc) from exc
        return int(version)

    def set_user_version(self, version: int) -> None:
        with self._lock:
            try:
                self._conn.execute(f"PRAGMA user_version={int(version)}")
            except sqlite3.Error as exc:
                raise _sqlite_error(exc) from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _sqlite_error(exc: sqlite3.Error) -> DatabaseError:
    duplicate = isinstance(exc, sqlite3.IntegrityError) and "UNIQUE constraint" in str(exc)
    return DatabaseError(str(exc), duplicate=duplicate)


# ---- PostgreSQL


def _postgres_sql(sql: str) -> str:
    # psycopg's placeholder is %s, and a literal % must be doubled.
    return sql.replace("%", "%%").replace("?", "%s")


class _PostgresTransaction(Transaction):
    def __init__(self, conn: psycopg.Connection[Any], guard: Guard) -> None:
        self._conn = conn
        self._guard = guard

    def lift_deadline(self) -> None:
        WATCHDOG.lift(self._guard)

    def execute(self, sql: str, params: Params = ()) -> None:
        self._conn.execute(_postgres_sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(_postgres_sql(sql), [tuple(row) for row in rows])

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        return self._conn.execute(_postgres_sql(sql), tuple(params)).fetchall()


def _dsn_keys(dsn: str) -> frozenset[str]:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return frozenset(conninfo_to_dict(dsn))
    except Exception:  # connecting reports the DSN's fault, with its reason
        return frozenset()


def describe_dsn(dsn: str) -> str:
    """``user@host:port/dbname`` of a DSN (URL or ``key=value`` form), never its password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # a DSN psycopg cannot parse is described without its text
        return "an unreadable DSN"
    user = str(parts.get("user") or "")
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or 5432)
    name = str(parts.get("dbname") or user)
    return f"{user + '@' if user else ''}{host}:{port}/{name}"


class PostgresDatabase(Database):
    """A PostgreSQL database reached by ``dsn``. ``password`` is passed apart from the DSN (it
    comes from ``.env``) and never appears in a message. ``synchronous_commit=False`` lets a
    commit return before its WAL reaches the disk (the audit log's ``synchronous=NORMAL``)."""

    dialect: Dialect = "postgresql"

    def __init__(
        self,
        dsn: str,
        *,
        password: str | None = None,
        synchronous_commit: bool = True,
        read_only: bool = False,
        application_name: str = "mineclaw-bridge",
        statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        super().__init__()
        self.deadline_s = deadline_s
        self._dsn = dsn
        self._password = password
        self._synchronous_commit = synchronous_commit
        self.read_only = read_only
        self._application_name = application_name
        self.description = f"PostgreSQL {describe_dsn(dsn)}"
        self._statement_timeout_ms = statement_timeout_ms
        self._given = _dsn_keys(dsn)
        self._conn: psycopg.Connection[Any] | None = None
        self._closed = False
        with self._lock:
            self._connection()  # a wrong DSN or a server that is down fails the start
        _PEERS.add(self)

    def _connection(self) -> psycopg.Connection[Any]:
        import psycopg

        if self._closed:
            raise DatabaseError(f"{self.description}: the database is closed")
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._conn = None
        settings: dict[str, Any] = {
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": self._application_name,
            **_CONNECTION_DEFAULTS,
        }
        settings = {name: value for name, value in settings.items() if name not in self._given}
        settings["autocommit"] = True
        if self._password is not None:
            settings["password"] = self._password
        try:
            conn = psycopg.connect(self._dsn, **settings)
        except psycopg.Error as exc:
            kind = DatabaseUnreachable if _unreachable(exc) else DatabaseError
            raise kind(f"cannot connect to {self.description}: {_first_line(exc)}") from exc
        try:
            # Set per connection, not in the DSN's options: a pooler such as PgBouncer refuses
            # startup options but passes SET.
            conn.execute(f"SET statement_timeout = {int(self._statement_timeout_ms)}")
            if not self._synchronous_commit:
                conn.execute("SET synchronous_commit = off")
            if self.read_only:  # the server refuses every write of this session
                conn.execute("SET default_transaction_read_only = on")
        except psycopg.Error as exc:
            conn.close()
            raise DatabaseError(f"{self.description}: {_first_line(exc)}") from exc
        self._conn = conn
        return conn

    @contextmanager
    def transaction(self, *, deadline_s: float | None = None) -> Iterator[Transaction]:
        import psycopg

        seconds = self.deadline_s if deadline_s is None else deadline_s
        with self._lock:
            conn = self._begin(seconds)
            with WATCHDOG.guard(conn.fileno(), seconds) as guard:
                try:
                    yield _PostgresTransaction(conn, guard)
                    conn.execute("COMMIT")
                except BaseException as exc:
                    if guard.fired:
                        self._drop(conn)
                    elif not self._dropped_if_broken(conn):
                        try:
                            conn.execute("ROLLBACK")
                        except psycopg.Error:
                            self._dropped_if_broken(conn)
                    if isinstance(exc, psycopg.Error):
                        raise self._error(exc, guard, seconds) from exc
                    raise

    def _begin(self, seconds: float) -> psycopg.Connection[Any]:
        """A connection inside a new transaction. A connection found dead at ``BEGIN`` (the
        server restarted, an idle connection was cut) is replaced once: nothing of this
        transaction was sent yet, so trying again on a new one cannot apply anything twice."""
        import psycopg

        for attempt in range(2):
            conn = self._connection()
            with WATCHDOG.guard(conn.fileno(), seconds) as guard:
                try:
                    conn.execute("BEGIN")
                    return conn
                except psycopg.Error as exc:
                    if guard.fired:
                        self._drop(conn)
                        raise self._error(exc, guard, seconds) from exc
                    if not self._dropped_if_broken(conn) or attempt == 1:
                        raise self._error(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _dropped_if_broken(self, conn: psycopg.Connection[Any]) -> bool:
        """Forget ``conn`` when it is lost, so the next call connects again; True if it was."""
        if not (conn.closed or conn.broken):
            return False
        self._drop(conn)
        return True

    def _drop(self, conn: psycopg.Connection[Any]) -> None:
        """Forget and close ``conn`` (lost, or cut by a deadline): the next call connects."""
        if self._conn is conn:
            self._conn = None
        try:
            conn.close()
        except Exception:  # closing a dead connection has nothing left to report
            pass

    def _drop_if_idle(self) -> None:
        """Close this connection unless an operation is using it (then its own deadline
        watches it): the next operation opens a new one, on a new backend."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._conn is not None:
                self._drop(self._conn)
        finally:
            self._lock.release()

    def _error(
        self, exc: BaseException, guard: Guard | None = None, seconds: float | None = None
    ) -> DatabaseError:
        import psycopg

        if guard is not None and guard.fired:
            # The server's backends may all be stuck (a paused or frozen server process):
            # the other repositories' connections to it are let go now, so their next writes
            # (a turn's usage, its session record) open new ones instead of each waiting out
            # a deadline of its own on a backend that hangs.
            for peer in list(_PEERS):
                if peer is not self and peer._dsn == self._dsn:
                    peer._drop_if_idle()
            return DatabaseError(
                f"{self.description}: no answer within {seconds or self.deadline_s:g} s (the"
                " bridge's deadline); the connection was cut and the next operation opens a"
                " new one"
            )
        duplicate = isinstance(exc, psycopg.errors.UniqueViolation)
        return DatabaseError(f"{self.description}: {_first_line(exc)}", duplicate=duplicate)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_PEERS: weakref.WeakSet[PostgresDatabase] = weakref.WeakSet()
"""Every open PostgreSQL database of the process (the archive's, the audit log's, ...)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
