"""PostgreSQL going wrong under the stores: a DSN that reaches nothing, a wrong password, a
connection cut while the bridge runs, the server stopped and started again. Each is a clear
`StoreError` or a recovery, never a crash, a hang or a lost completed turn."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bridge.control.budgets_config import BudgetsConfig
from bridge.errors import StoreError
from bridge.policy.budgets import Budgets, periods_at
from bridge.store import database as database_module
from bridge.store.archive import ArchivedTurn, TurnArchive
from bridge.store.database import PostgresDatabase
from bridge.store.target import StorageTarget
from bridge.store.usage import SERVER, UsageLedger
from bridge.turns.ports import PlayerRef
from tests.postgres_server import BRIDGE_ROLE, PostgresServer, start_postgres
from tests.storage_backends import Backend

T0 = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def turn(turn_id: str) -> ArchivedTurn:
    return ArchivedTurn(
        turn_id=turn_id,
        session_id="s1",
        player="Alex",
        started_at=T0,
        ended_at=T0,
        model_ref="m/x",
        control_version="1",
        items=({"text": turn_id},),
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # nothing listens once the probe is closed


def test_a_dsn_that_reaches_no_server_is_a_clear_error(tmp_path: Path) -> None:
    port = closed_port()
    target = StorageTarget(
        tmp_path, backend="postgresql", dsn=f"postgresql://mc@127.0.0.1:{port}/mc", password="pw"
    )
    with pytest.raises(StoreError) as caught:
        target.open_archive()
    message = str(caught.value)
    assert f"cannot connect to PostgreSQL mc@127.0.0.1:{port}/mc" in message
    assert "turn archive" in message


def test_a_wrong_password_is_refused_without_showing_it(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    name = postgres_server.create_database()
    wrong = "Wr0ng-" + postgres_server.password
    target = StorageTarget(
        tmp_path, backend="postgresql", dsn=postgres_server.dsn(name), password=wrong
    )
    with pytest.raises(StoreError, match="password authentication failed") as caught:
        target.open_audit()
    assert wrong not in str(caught.value) and postgres_server.password not in str(caught.value)
    assert BRIDGE_ROLE in str(caught.value)


def test_a_database_that_does_not_exist_is_named(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    target = StorageTarget(
        tmp_path,
        backend="postgresql",
        dsn=postgres_server.dsn("no_such_database"),
        password=postgres_server.password,
    )
    with pytest.raises(StoreError, match='database "no_such_database" does not exist'):
        target.open_archive()


def test_cut_connections_are_replaced_and_nothing_is_lost(postgres_only: Backend) -> None:
    backend = postgres_only
    with backend.archive() as archive, backend.audit(write_interval=3600.0) as log:
        archive.append(turn("t1"))
        log.record("turn.start", {"n": 1})
        log.flush()
        assert backend.cut_connections() == 2  # the archive's and the audit writer's
        archive.append(turn("t2"))
        log.record("turn.start", {"n": 2})
        log.flush()
        assert [t.turn_id for t in archive.all_turns()] == ["t1", "t2"]
        assert [e.fields for e in log.events()] == [{"n": 1}, {"n": 2}]


def test_a_stopped_server_fails_writes_cleanly_and_they_work_again_after_it_returns(
    tmp_path: Path,
) -> None:
    server = start_postgres()  # its own server: this test stops it
    try:
        name = server.create_database()
        target = StorageTarget(
            tmp_path / "data", backend="postgresql", dsn=server.dsn(name), password=server.password
        )
        backend = Backend(target, server, name)
        with backend.archive() as archive, backend.audit(write_interval=3600.0) as log:
            archive.append(turn("before"))
            log.record("turn.start", {"n": 1})
            log.flush()
            server.stop()
            with pytest.raises(StoreError, match="cannot archive turn during"):
                archive.append(turn("during"))
            with pytest.raises(StoreError, match="cannot read the turn archive"):
                archive.all_turns()
            log.record("turn.start", {"n": 2})  # never raises, never waits for the server
            log.flush()
            server.start()
            archive.append(turn("after"))
            log.record("turn.end", {"n": 3})
            log.flush()
            assert [t.turn_id for t in archive.all_turns()] == ["before", "after"]
            events = log.events()
        assert [(e.kind, e.fields.get("n")) for e in events] == [
            ("turn.start", 1),
            ("audit.lost", None),
            ("turn.end", 3),
        ]
        assert events[1].fields["records"] == 1
        lines = (tmp_path / "data" / "audit.jsonl").read_text().splitlines()
        assert len(lines) == 3
    finally:
        server.remove()


def test_a_server_that_never_answers_fails_the_start_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database_module, "CONNECT_TIMEOUT_S", 2)  # libpq's least
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the handshake; nothing ever answers
        port = silent.getsockname()[1]
        target = StorageTarget(
            tmp_path, backend="postgresql", dsn=f"postgresql://mc@127.0.0.1:{port}/mc"
        )
        with pytest.raises(StoreError, match=f"cannot connect to PostgreSQL mc@127.0.0.1:{port}"):
            target.open_archive()


def test_a_write_stuck_behind_a_lock_fails_and_the_next_one_works(
    postgres_only: Backend,
) -> None:
    backend = postgres_only
    assert backend.server is not None and backend.dbname is not None
    with backend.archive():
        pass  # the tables exist
    database = PostgresDatabase(
        backend.server.dsn(backend.dbname),
        password=backend.server.password,
        statement_timeout_ms=300,
    )
    with TurnArchive(database) as archive, backend.server.admin(backend.dbname) as holder:
        holder.execute("BEGIN")
        holder.execute("LOCK TABLE turns IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(StoreError, match="statement timeout"):
            archive.append(turn("stuck"))
        holder.execute("COMMIT")
        archive.append(turn("free"))
        assert [t.turn_id for t in archive.all_turns()] == ["free"]


def test_a_backend_that_hangs_fails_the_write_at_the_deadline_and_the_next_one_works(
    postgres_only: Backend,
) -> None:
    # A paused backend never fires its own statement_timeout and its kernel answers the
    # keepalives: before the client-side deadline the write waited for as long as it was paused.
    backend = postgres_only
    assert backend.server is not None and backend.dbname is not None
    database = PostgresDatabase(
        backend.server.dsn(backend.dbname), password=backend.server.password, deadline_s=1.0
    )
    with TurnArchive(database) as archive:
        archive.append(turn("before"))
        ((pid,),) = database.query("SELECT pg_backend_pid()")
        failures: list[BaseException] = []

        def write() -> None:
            try:
                archive.append(turn("during"))
            except BaseException as exc:
                failures.append(exc)

        os.kill(pid, signal.SIGSTOP)
        try:
            writer = threading.Thread(target=write)
            writer.start()
            writer.join(60)
            assert not writer.is_alive(), "the write hung with its backend"
        finally:
            os.kill(pid, signal.SIGCONT)
        assert len(failures) == 1 and isinstance(failures[0], StoreError), failures
        assert "no answer within 1 s (the bridge's deadline)" in str(failures[0])
        archive.append(turn("after"))  # on a new connection
        assert [t.turn_id for t in archive.all_turns()] == ["before", "after"]


def patient_database(backend: Backend) -> PostgresDatabase:
    """A database whose own deadline would never fire during a test."""
    assert backend.server is not None and backend.dbname is not None
    return PostgresDatabase(
        backend.server.dsn(backend.dbname), password=backend.server.password, deadline_s=600
    )


@contextlib.contextmanager
def backend_paused(database: PostgresDatabase) -> Iterator[None]:
    """The backend of ``database``'s connection paused (SIGSTOP) for the block."""
    ((pid,),) = database.query("SELECT pg_backend_pid()")
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_turns_commit_is_cut_at_its_own_deadline_not_the_databases(
    postgres_only: Backend,
) -> None:
    # The next question of a lane waits for its turn's commit: with a hung backend it waited
    # the whole transaction deadline (10 s; the stalled-backend failover row took 10.1 s).
    database = patient_database(postgres_only)
    with TurnArchive(database, commit_deadline_s=0.5) as archive:
        archive.append(turn("before"))
        with backend_paused(database), pytest.raises(StoreError, match=r"no answer within 0\.5 s"):
            archive.append(turn("during"))
        archive.append(turn("after"))
        assert [t.turn_id for t in archive.all_turns()] == ["before", "after"]


def test_a_turns_usage_record_is_cut_at_its_own_deadline_not_the_databases(
    postgres_only: Backend,
) -> None:
    # A turn's end waits for its usage record: with the ledger's backend hung it waited the
    # whole transaction deadline, and the stalled-backend failover row took 10.2 s (issue 50).
    database = patient_database(postgres_only)
    periods = periods_at(T0, ZoneInfo("UTC"))

    def add(tokens: int) -> None:
        ledger.add(
            player_uuid=None, player_name=None, periods=periods, tokens=tokens, estimated=False
        )

    with UsageLedger(database, record_deadline_s=0.5) as ledger:
        add(1)
        with backend_paused(database), pytest.raises(StoreError, match=r"no answer within 0\.5 s"):
            add(2)
        add(4)


def test_a_deadline_lets_go_of_the_other_idle_connections_to_that_server(
    postgres_only: Backend,
) -> None:
    # A paused server process stalls every backend: before, each repository's next write
    # (the archive's, then the usage ledger's, then the session's) waited out its own deadline.
    backend = postgres_only
    assert backend.server is not None and backend.dbname is not None
    dsn, password = backend.server.dsn(backend.dbname), backend.server.password
    first = PostgresDatabase(dsn, password=password, deadline_s=1.0)
    other = PostgresDatabase(dsn, password=password, deadline_s=3600.0)
    try:
        pids = [db.query("SELECT pg_backend_pid()")[0][0] for db in (first, other)]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(StoreError, match="the bridge's deadline"):
                first.query("SELECT 1")
            answers: list[object] = []
            reader = threading.Thread(target=lambda: answers.append(other.query("SELECT 2")))
            reader.start()
            reader.join(60)
            assert not reader.is_alive(), "the other connection waited on its paused backend"
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        assert answers == [[(2,)]]
    finally:
        first.close()
        other.close()


def test_usage_the_ledger_refused_while_its_backend_hung_is_counted_once_it_answers(
    postgres_only: Backend,
) -> None:
    # A turn cut when the store was lost had its usage dropped ("not counted"), though the
    # provider billed every token it served (issue 39). Now it is kept and counted by the next
    # record that reaches the ledger.
    backend = postgres_only
    assert backend.server is not None and backend.dbname is not None
    database = PostgresDatabase(
        backend.server.dsn(backend.dbname), password=backend.server.password, deadline_s=1.0
    )
    config = BudgetsConfig()
    steve = PlayerRef(uuid="11111111-2222-3333-4444-555555555555", name="Steve")
    with UsageLedger(database) as ledger:
        budgets = Budgets(ledger, clock=lambda: T0)
        budgets.record(
            player_uuid=steve.uuid,
            player_name=steve.name,
            tokens=100,
            estimated=False,
            config=config,
        )
        ((pid,),) = database.query("SELECT pg_backend_pid()")
        os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(StoreError, match="1 kept, counted once the store answers"):
                budgets.record(
                    player_uuid=steve.uuid,
                    player_name=steve.name,
                    tokens=30,
                    estimated=True,
                    config=config,
                    purpose="turn.stopped",
                )
        finally:
            os.kill(pid, signal.SIGCONT)
        assert budgets.unrecorded == 1
        # Written when the store answers again (a server linked, or the bridge gives its
        # servers up), without waiting for the next record.
        assert budgets.flush_unrecorded() == 0
        periods = periods_at(T0, config.zone())
        assert ledger.usage(SERVER, periods).day.tokens == 130
        budgets.record(
            player_uuid=steve.uuid,
            player_name=steve.name,
            tokens=5,
            estimated=False,
            config=config,
        )
        assert budgets.unrecorded == 0
        periods = periods_at(T0, config.zone())
        assert ledger.usage(steve.uuid, periods).day.tokens == 135
        assert ledger.usage(SERVER, periods).day.tokens == 135
        assert ledger.by_purpose(steve.uuid, periods)["turn.stopped"].day.tokens == 30
