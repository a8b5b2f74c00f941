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
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from bridge.app.network import Network
from bridge.control import ControlPlane
from bridge.errors import StoreError
from bridge.link.protocol import DEFAULT_SERVER_ID
from bridge.store.deadline import WATCHDOG

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

POLL_S = 1.0
"""How often free leases are tried and the lease connection checked."""
LOCK_NAMESPACE = b"mineclaw-server-lease"
CONNECT_TIMEOUT_S = 5
DEADLINE_S = 3.0
"""The longest one poll of the lease connection may take (its check and each try), measured by
the bridge (``bridge.store.deadline``): a lease backend that hangs would otherwise hold the poll,
and with it the taking of free servers and this bridge's shutdown, for as long as it hangs."""
# The lease connection notices a silent database within seconds, not the system's minutes.
_KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,
}


class LeaseError(StoreError):
    """The lease connection could not be opened or was lost."""


def lock_key(server_id: str) -> int:
    """The advisory lock key of a server: 64 bits of a keyed hash of its id (a signed bigint,
    as PostgreSQL takes it), so other applications' locks on the database never collide."""
    digest = hashlib.blake2b(server_id.encode(), digest_size=8, person=LOCK_NAMESPACE[:16])
    return int.from_bytes(digest.digest(), "big", signed=True)


class ServerLeases:
    """``servers``: the ids to lease (read at every poll, so a reload adds servers).
    ``on_lost``: awaited with each server whose lease this bridge lost."""

    def __init__(
        self,
        dsn: str,
        *,
        password: str | None,
        servers: Callable[[], Iterable[str]],
        on_lost: Callable[[str], Awaitable[None]],
        poll_s: float = POLL_S,
        application_name: str = "mineclaw-bridge-leases",
    ) -> None:
        self._dsn = dsn
        self._password = password
        self._servers = servers
        self._on_lost = on_lost
        self.poll_s = poll_s
        self._application_name = application_name
        self._conn: psycopg.Connection[Any] | None = None
        # Held by the worker thread around every use of the connection: closing waits for a
        # poll still running there (a cancelled await does not stop its thread).
        self._thread_lock = threading.Lock()
        self._closing = False
        self._held: set[str] = set()
        self._task: asyncio.Task[None] | None = None
        self.acquired = asyncio.Event()
        """Set whenever a lease was taken (tests and logs wait for it)."""

    def held(self, server_id: str) -> bool:
        return server_id in self._held

    @property
    def servers_held(self) -> frozenset[str]:
        return frozenset(self._held)

    async def start(self) -> None:
        """Connect and take what is free now; raises ``LeaseError`` when the database cannot
        be reached (the bridge then does not start: serving without leases could serve a
        server twice)."""
        await asyncio.to_thread(self._locked_connect)
        await self.poll()
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop polling and let go of every lease (closing the connection releases them)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self._held.clear()
        await asyncio.to_thread(self._close_connection)

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
        try:
            taken = await asyncio.to_thread(self._take, wanted)
        except LeaseError as exc:
            lost = sorted(self._held)
            self._held.clear()
            if lost:
                log.error("server leases lost (%s): no longer serving %s", exc, ", ".join(lost))
            for server_id in lost:
                await self._on_lost(server_id)
            return
        for server_id in taken:
            self._held.add(server_id)
            log.info("server %s: lease taken; this bridge serves it now", server_id)
        if taken:
            self.acquired.set()

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

    def _take(self, wanted: list[str]) -> list[str]:
        """Check the connection, then try each wanted server not held; the ones taken."""
        with self._thread_lock:
            if self._closing:
                return []
            return self._take_locked(wanted)

    def _take_locked(self, wanted: list[str]) -> list[str]:
        import psycopg

        had_connection = self._conn is not None and not self._conn.broken
        fired = False
        try:
            conn = self._connect()
            with WATCHDOG.guard(conn.fileno(), DEADLINE_S) as guard:
                try:
                    return self._poll_connection(conn, wanted, had_connection=had_connection)
                finally:
                    fired = guard.fired
        except psycopg.Error as exc:
            conn_now, self._conn = self._conn, None
            if conn_now is not None:
                conn_now.close()
            if fired:
                raise LeaseError(
                    f"the lease connection gave no answer within {DEADLINE_S:g} s"
                ) from exc
            raise LeaseError(_first_line(exc)) from exc
        except LeaseError:
            conn_now, self._conn = self._conn, None
            if conn_now is not None:
                conn_now.close()
            raise

    def _poll_connection(
        self, conn: psycopg.Connection[Any], wanted: list[str], *, had_connection: bool
    ) -> list[str]:
        if had_connection:
            conn.execute("SELECT 1")  # alive: our locks are still ours
        elif self._held:
            # A new connection holds none of the old one's locks.
            raise LeaseError("the lease connection was replaced")
        taken = []
        for server_id in wanted:
            if server_id in self._held:
                continue
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(server_id),)).fetchone()
            if row is not None and row[0]:
                taken.append(server_id)
        return taken


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def network_leases(
    network: Network, plane: ControlPlane, drop: Callable[[str], Awaitable[None]]
) -> ServerLeases | None:
    """The leases of a bridge whose store is PostgreSQL (``None`` with SQLite: one bridge per
    store, nothing to share). Serves from then on only the servers it holds; ``drop`` closes
    a server's link when its lease is lost, then the server's context is retired."""
    storage = plane.config.storage
    if storage.backend != "postgresql" or storage.dsn is None:
        return None

    def servers() -> list[str]:
        return [DEFAULT_SERVER_ID, *network.default.runtime.plane.servers.servers]

    async def lost(server_id: str) -> None:
        await drop(server_id)
        await network.retire(server_id)

    leases = ServerLeases(
        storage.dsn, password=storage.password_value, servers=servers, on_lost=lost
    )
    network.serve_only(leases.held)
    return leases
