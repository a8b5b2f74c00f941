"""Which servers this bridge serves when several bridges share one PostgreSQL database.

Each server id is a lease: a PostgreSQL session-level advisory lock, all held on one connection
of their own (not the store's: a lock lives exactly as long as the connection that took it, so
a bridge that dies, even by SIGKILL, or loses its database connection, lets go of every server
at once, and the server closes that session on its side). Every ``poll_s`` this bridge tries
to take each server it does not hold (``pg_try_advisory_lock``, never waiting) and checks its
connection is alive; a server taken is served from the next handshake on. When the connection
is found dead every lease is gone: the bridge stops serving at once and drops those servers'
links (close code 4005), so their plugins move on to the bridge that takes them.

The link asks ``held(server_id)`` at every handshake (``bridge.link.handler.ServerTable``);
a plugin that reaches a bridge not holding its server is refused with 4005 and tries its next
bridge address. So each server is served by exactly one bridge at a time, as far as
PostgreSQL's sessions say; the one window is a bridge whose database connection died without
its knowing yet (a cut network): the database ends that session after its keepalives fail, the
bridge notices at its next check (the same keepalives on its side), and another bridge can
take the server in between. ``docs/operations.md`` says how to size those timeouts.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from bridge.app.network.network import Network
from bridge.control import ControlPlane
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.store.archive import Fence
from bridge.store.database import PostgresDatabase, Transaction
from bridge.store.deadline import WATCHDOG
from bridge.store.lease_table import SCHEMA as LEASE_SCHEMA
from bridge.store.lease_table import TABLE
from bridge.store.migrations import migrate

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

POLL_S = 1.0
"""How often the leases held are renewed, free ones tried and the lease connection checked
(``storage.lease_renew_s``)."""
TTL_S = 5.0
"""How long a lease lasts unrenewed (``storage.lease_ttl_s``): a bridge that stops renewing
(hung, paused, cut off from the database while its session lives on) loses its servers that long
after its last renewal, and stops serving them by then itself. More than ``POLL_S`` plus
``DEADLINE_S``, so a slow poll does not lose them."""
LOCK_NAMESPACE = b"mineclaw-server-lease"
CONNECT_TIMEOUT_S = 5
DEADLINE_S = 3.0
"""The longest one poll of the lease connection may take (its check and each try;
``storage.lease_deadline_s``), measured by the bridge (``bridge.store.deadline``): a lease
backend that hangs would otherwise hold the poll, and with it the taking of free servers and
this bridge's shutdown, for as long as it hangs."""
# The lease connection notices a silent database within seconds, not the system's minutes.
_KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}


LossCause = Literal["database lost", "lease lost"]
"""Why a bridge stopped serving a server: its lease connection failed or hung (``database
lost``: whether another bridge serves it now is for the plugin's next try to find out), or
another bridge took the lease after this one missed renewing it (``lease lost``)."""

CLOSE_REASONS: dict[LossCause, str] = {
    "database lost": "database lost: this bridge lost its database; try the next",
    "lease lost": "lease lost: another bridge took this server; try the next",
}
"""The link's close reason (4005) for each cause: the plugin's log says what happened."""

ASKER_REASONS: dict[LossCause, str] = {
    "database lost": "the bridge lost its database",
    "lease lost": "another bridge took over this server",
}
"""What the asker of a turn cut by the loss is told (``errors.provider_failure``'s reason)."""


class LeaseError(StoreError):
    """The lease connection could not be opened or was lost."""


class LeaseLost(StoreError):
    """A turn's archive write refused: its bridge no longer holds the server's lease."""


def lock_key(server_id: str, epoch: int = 0) -> int:
    """The advisory lock key of a server's lease at ``epoch``: 64 bits of a keyed hash (a signed
    bigint, as PostgreSQL takes it), so other applications' locks on the database never
    collide. The holder of an epoch holds its lock for as long as its session lives: a bridge
    that can take it knows that holder is gone."""
    name = server_id if epoch == 0 else f"{server_id}\n{epoch}"
    digest = hashlib.blake2b(name.encode(), digest_size=8, person=LOCK_NAMESPACE[:16])
    return int.from_bytes(digest.digest(), "big", signed=True)


class ServerLeases:
    """``servers``: the ids to lease (read at every poll, so a reload adds servers).
    ``on_lost``: awaited with each server whose lease this bridge lost, and why."""

    def __init__(
        self,
        dsn: str,
        *,
        password: str | None,
        servers: Callable[[], Iterable[str]],
        on_lost: Callable[[str, LossCause], Awaitable[None]],
        poll_s: float = POLL_S,
        ttl_s: float = TTL_S,
        deadline_s: float = DEADLINE_S,
        application_name: str = "mineclaw-bridge-leases",
    ) -> None:
        self._dsn = dsn
        self._password = password
        self._servers = servers
        self._on_lost = on_lost
        self.poll_s = poll_s
        self.deadline_s = deadline_s
        self._application_name = application_name
        self._conn: psycopg.Connection[Any] | None = None
        # Held by the worker thread around every use of the connection: closing waits for a
        # poll still running there (a cancelled await does not stop its thread).
        self._thread_lock = threading.Lock()
        self._closing = False
        self._epochs: dict[str, int] = {}
        """The servers this bridge holds, each with the epoch it took it at."""
        self._valid_until = 0.0
        """Until when (``time.monotonic``) the leases held count as this bridge's: the last
        renewal that succeeded, from before it was sent, plus ``ttl_s``. The database lets
        another bridge take them only after its own clock passed the same time after it
        received that renewal, so this bridge stops first."""
        self.ttl_s = ttl_s
        self.holder = f"{application_name}:{uuid.uuid4()}"
        """This bridge's name in the lease table (one per process start)."""
        self._task: asyncio.Task[None] | None = None
        self.acquired = asyncio.Event()
        """Set whenever a lease was taken (tests and logs wait for it)."""

    def held(self, server_id: str) -> bool:
        """Whether this bridge serves ``server_id`` now: its lease held and renewed within
        ``ttl_s`` (a bridge resumed after a pause serves nothing until it renewed)."""
        return server_id in self._epochs and time.monotonic() < self._valid_until

    def epoch(self, server_id: str) -> int | None:
        """The epoch this bridge holds ``server_id`` at, or None when it does not serve it."""
        return self._epochs.get(server_id) if self.held(server_id) else None

    def fence(self, server_id: str) -> Fence:
        """The archive fence of a turn of ``server_id``: inside the turn's transaction, the
        lease row must still name this bridge at the epoch held now. ``FOR SHARE`` makes a
        takeover wait for this commit, so a turn is committed only while its bridge holds the
        server, and one finished after a takeover is refused (issue 39)."""
        holder = self.holder

        def check(tx: Transaction) -> None:
            epoch = self.epoch(server_id)  # when the turn is written, not when it started
            rows = (
                []
                if epoch is None
                else tx.query(
                    f"SELECT 1 FROM {TABLE} WHERE server_id = ? AND holder = ? AND epoch = ?"
                    " FOR SHARE",
                    (server_id, holder, epoch),
                )
            )
            if not rows:
                raise LeaseLost(
                    f"server {server_id}: this bridge no longer holds its lease (another bridge"
                    " took it); the turn is not archived"
                )

        return check

    @property
    def servers_held(self) -> frozenset[str]:
        return frozenset(s for s in self._epochs if self.held(s))

    async def start(self) -> None:
        """Connect and take what is free now; raises ``LeaseError`` when the database cannot
        be reached (the bridge then does not start: serving without leases could serve a
        server twice)."""
        await run_in(Pool.LEASES, self._locked_connect)
        await run_in(Pool.LEASES, self._create_table)
        await self.poll()
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop polling and let go of every lease (closing the connection releases them)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self._epochs.clear()
        await run_in(Pool.LEASES, self._close_connection)

    def _close_connection(self) -> None:
        with self._thread_lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            try:
                await self.poll()
            except Exception:  # never let the lease loop die: the next poll tries again
                log.exception("server leases: poll failed")

    async def poll(self) -> None:
        wanted = list(dict.fromkeys(self._servers()))
        sent_at = time.monotonic()
        held = dict(self._epochs)
        try:
            renewed, taken = await run_in(Pool.LEASES, self._take, wanted, held)
        except LeaseError as exc:
            await self._lose(sorted(self._epochs), str(exc), "database lost")
            return
        lost = sorted(set(held) - renewed)
        for server_id in lost:
            self._epochs.pop(server_id, None)
        for server_id, epoch in taken.items():
            self._epochs[server_id] = epoch
            log.info(
                "server %s: lease taken (epoch %d); this bridge serves it now", server_id, epoch
            )
        if self._epochs:
            self._valid_until = sent_at + self.ttl_s
        if lost:
            await self._lose(
                lost, "another bridge took them after this one missed renewing", "lease lost"
            )
        if taken:
            self.acquired.set()

    async def _lose(self, lost: list[str], why: str, cause: LossCause) -> None:
        for server_id in lost:
            self._epochs.pop(server_id, None)
        if lost:
            log.error("server leases lost (%s): no longer serving %s", why, ", ".join(lost))
        for server_id in lost:
            await self._on_lost(server_id, cause)

    # ---- blocking parts, in a worker thread

    def _locked_connect(self) -> None:
        with self._thread_lock:
            self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        if self._closing:
            raise LeaseError("the leases are closed")
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        if conn is not None:
            conn.close()  # broken: closed here, not left to the garbage collector
            self._conn = None
        settings: dict[str, Any] = {
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": self._application_name,
            "autocommit": True,
            **_KEEPALIVES,
        }
        if self._password is not None:
            settings["password"] = self._password
        try:
            self._conn = psycopg.connect(self._dsn, **settings)
        except psycopg.Error as exc:
            raise LeaseError(f"cannot open the lease connection: {_first_line(exc)}") from exc
        return self._conn

    def _create_table(self) -> None:
        """The lease table, migrated like every other table (two bridges starting together:
        one migrates, the other waits for it and finds nothing to do)."""
        try:
            database = PostgresDatabase(
                self._dsn,
                password=self._password,
                application_name=self._application_name,
                deadline_s=max(self.deadline_s, 10.0),
            )
        except StoreError as exc:
            raise LeaseError(f"cannot create the lease table: {exc}") from exc
        try:
            migrate(database, LEASE_SCHEMA)
        except StoreError as exc:
            raise LeaseError(f"cannot create the lease table: {exc}") from exc
        finally:
            database.close()

    def _take(self, wanted: list[str], held: dict[str, int]) -> tuple[set[str], dict[str, int]]:
        """Check the connection, renew what is held, then try each wanted server not held;
        the servers renewed and those taken (with their epochs)."""
        with self._thread_lock:
            if self._closing:
                return set(), {}
            return self._take_locked(wanted, held)

    def _take_locked(
        self, wanted: list[str], held: dict[str, int]
    ) -> tuple[set[str], dict[str, int]]:
        import psycopg

        had_connection = self._conn is not None and not self._conn.broken
        fired = False
        try:
            conn = self._connect()
            with WATCHDOG.guard(conn.fileno(), self.deadline_s) as guard:
                try:
                    return self._poll_connection(conn, wanted, held, had_connection)
                finally:
                    fired = guard.fired
        except psycopg.Error as exc:
            conn_now, self._conn = self._conn, None
            if conn_now is not None:
                conn_now.close()
            if fired:
                raise LeaseError(
                    f"the lease connection gave no answer within {self.deadline_s:g} s"
                ) from exc
            raise LeaseError(_first_line(exc)) from exc
        except LeaseError:
            conn_now, self._conn = self._conn, None
            if conn_now is not None:
                conn_now.close()
            raise

    def _poll_connection(
        self,
        conn: psycopg.Connection[Any],
        wanted: list[str],
        held: dict[str, int],
        had_connection: bool,
    ) -> tuple[set[str], dict[str, int]]:
        if had_connection:
            conn.execute("SELECT 1")  # alive: our locks are still ours
        elif held:
            # A new connection holds none of the old one's locks.
            raise LeaseError("the lease connection was replaced")
        renewed: set[str] = set()
        if held:
            rows = conn.execute(
                f"UPDATE {TABLE} SET expires_at = clock_timestamp() + make_interval(secs => %s)"
                " WHERE holder = %s AND server_id = ANY(%s) RETURNING server_id, epoch",
                (self.ttl_s, self.holder, list(held)),
            ).fetchall()
            renewed = {server_id for server_id, epoch in rows if held.get(server_id) == epoch}
        taken: dict[str, int] = {}
        for server_id in wanted:
            if server_id in held:
                continue
            epoch = self._try_take(conn, server_id)
            if epoch is not None:
                taken[server_id] = epoch
        return renewed, taken

    def _try_take(self, conn: psycopg.Connection[Any], server_id: str) -> int | None:
        """Take ``server_id`` when its lease is free: never taken, expired (its holder stopped
        renewing: hung, paused, cut off), or its holder's session is gone (the lock of its epoch
        can be had: it died, or let go). The epoch goes up by one with every take."""
        row = conn.execute(
            f"SELECT epoch, expires_at < clock_timestamp() FROM {TABLE} WHERE server_id = %s",
            (server_id,),
        ).fetchone()
        ttl = self.ttl_s
        if row is None:
            inserted = conn.execute(
                f"INSERT INTO {TABLE} (server_id, holder, epoch, expires_at) VALUES"
                " (%s, %s, 1, clock_timestamp() + make_interval(secs => %s))"
                " ON CONFLICT (server_id) DO NOTHING RETURNING epoch",
                (server_id, self.holder, ttl),
            ).fetchone()
            return self._hold(conn, server_id, inserted)
        epoch, expired = int(row[0]), bool(row[1])
        gone = False
        if not expired:
            locked = conn.execute(
                "SELECT pg_try_advisory_lock(%s)", (lock_key(server_id, epoch),)
            ).fetchone()
            gone = bool(locked and locked[0])
            if not gone:
                return None
        try:
            updated = conn.execute(
                f"UPDATE {TABLE} SET holder = %s, epoch = epoch + 1,"
                " expires_at = clock_timestamp() + make_interval(secs => %s)"
                " WHERE server_id = %s AND epoch = %s RETURNING epoch",
                (self.holder, ttl, server_id, epoch),
            ).fetchone()
        finally:
            if gone:
                conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(server_id, epoch),))
        return self._hold(conn, server_id, updated)

    @staticmethod
    def _hold(conn: psycopg.Connection[Any], server_id: str, row: Any) -> int | None:
        if row is None:
            return None  # another bridge took it first
        epoch = int(row[0])
        conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(server_id, epoch),))
        return epoch


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def network_leases(
    network: Network, plane: ControlPlane, drop: Callable[[str, str], Awaitable[None]]
) -> ServerLeases | None:
    """The leases of a bridge whose store is PostgreSQL (``None`` with SQLite: one bridge per
    store, nothing to share). Serves from then on only the servers it holds; ``drop`` closes
    a server's link when its lease is lost (with the close reason of the cause), then its
    running turns are stopped (their askers told when it links here again) and the server's
    context is retired."""
    storage = plane.config.storage
    if storage.backend != "postgresql" or storage.dsn is None:
        return None

    def servers() -> list[str]:
        return [DEFAULT_SERVER_ID, *network.default.runtime.plane.servers.servers]

    async def lost(server_id: str, cause: LossCause) -> None:
        await drop(server_id, CLOSE_REASONS[cause])
        network.cut(server_id, ASKER_REASONS[cause])  # the default server's context stays
        await network.retire(server_id)

    leases = ServerLeases(
        storage.dsn,
        password=storage.password_value,
        servers=servers,
        on_lost=lost,
        poll_s=storage.lease_renew_s,
        ttl_s=storage.lease_ttl_s,
        deadline_s=storage.lease_deadline_s,
    )
    network.serve_only(leases.held)
    network.fence_archives(leases.fence)
    return leases
