"""The audit log: one SQLite table and one JSON-lines file, written by a dedicated thread.

Why a writer thread, and why it writes on an interval: `record` is called from the event loop,
in the middle of turns and chat verdicts. A SQLite commit is usually tens of microseconds in
WAL mode, but now and then one triggers a checkpoint that fsyncs, and on a shared disk that
took tens of milliseconds in our measurements, stalling every chat verdict behind it. A writer
thread woken for every event costs the loop too, in another way: each wake-up makes the two
threads hand the GIL back and forth, which measured a p99 of milliseconds per `record`. So the
thread wakes every ``write_interval`` seconds (or when the queue is half full, or on
`flush`/`close`) and writes everything queued as one transaction and one file append.

`record` sits on the turn's hot path (about five events a turn), so it does only what must
happen at the call: it refuses a bad kind (the kinds that passed are remembered) and fields
that are not plain JSON, by encoding them with one prepared C encoder, and appends the text to
a deque (no lock: `deque.append` is atomic). Masking credential-looking values is the writer's
work: a few substring tests on the encoded text tell whether any name or value *could* need it
(a credential name segment, or a string starting with ``Bearer ``, in any case), and only then
does the writer decode, mask and encode again. The stored text is the same as masking first.

When the queue is full (the disk has stalled for a long time), `record` waits up to
``put_timeout`` seconds and then raises `AuditError`: an audit event is never dropped silently.
The database runs with ``synchronous=NORMAL``. What a process kill can lose is the events of
the last interval not yet written; the table never holds a torn batch (one transaction per
batch), while the JSON-lines file may end in a torn line after a kill, so the table is the
authoritative copy.
"""

from __future__ import annotations

import collections
import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import re2

from bridge.errors import StoreError
from bridge.store.audit_sink import JSONValue
from bridge.store.redaction import mask_secrets

AUDIT_DB_FILE_NAME = "audit.sqlite3"
AUDIT_JSONL_FILE_NAME = "audit.jsonl"

_KIND = re2.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){0,7}")
_MAX_KIND_CHARS = 64
_BATCH_MAX = 256
# Kinds are constants in the code, so a few hundred cover every producer; the bound only keeps
# a misbehaving caller from growing the set without end.
_KNOWN_KINDS_MAX = 1024
_known_kinds: set[str] = set()

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    fields_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_kind ON audit_events (kind, seq);
"""

# One encoder for every event: `json.dumps` with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True).encode

# Found in an encoded event wherever `mask_secrets` could change something: every credential
# name contains one of these once lower-cased (a segment, or a pair joined by "_" or "-"), and a
# masked value starts with "Bearer " right after its opening quote. A hit only means "look
# closer"; a miss is a proof, since the encoder escapes none of these characters (the tests
# derive every name shape from `bridge.store.redaction`). Plain substring tests on the
# lower-cased text: a few microseconds, where a case-insensitive `re` alternation takes ten
# times that, and RE2 gives up the GIL on every call (on the event loop, a wait to get it back
# whenever another thread runs).
_MASK_HINTS = (
    *("token", "secret", "passwd", "password", "authorization", "apikey", "credential"),
    *("cookie", '"bearer '),
    *(f"{first}{joint}key" for first in ("api", "private", "access") for joint in "_-"),
)


def _may_need_mask(fields_json: str) -> bool:
    lowered = fields_json.lower()
    return any(hint in lowered for hint in _MASK_HINTS)


class AuditError(StoreError):
    """An audit event was refused (bad kind, not JSON) or could not be written."""


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One stored audit event, as read back."""

    seq: int
    at: datetime
    kind: str
    fields: dict[str, JSONValue]


@dataclass(frozen=True, slots=True)
class _Pending:
    at: datetime
    kind: str
    fields_json: str
    may_need_mask: bool

    def stored_fields(self) -> str:
        if not self.may_need_mask:
            return self.fields_json
        return _encode(mask_secrets(json.loads(self.fields_json)))


@dataclass(frozen=True, slots=True)
class _Stop:
    """Queued by `close`: everything before it is written, then the writer ends."""


@dataclass(frozen=True, slots=True)
class _Mark:
    """Queued by `flush`: set once everything queued before it is written."""

    reached: threading.Event


class AuditLog:
    """The SQLite + JSON-lines audit sink. Implements `bridge.store.audit_sink.AuditSink`.

    Keyword-only settings: ``queue_size`` (events waiting for the writer, default 10 000),
    ``put_timeout`` (seconds `record` waits on a full queue before raising, default 2.0),
    ``write_interval`` (seconds between the writer's rounds, default 0.05). ``clock`` gives the
    event time (UTC now by default).
    """

    def __init__(
        self,
        db_path: Path,
        jsonl_path: Path,
        *,
        queue_size: int = 10_000,
        put_timeout: float = 2.0,
        write_interval: float = 0.05,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._db_path = db_path
        self._jsonl_path = jsonl_path
        self._put_timeout = put_timeout
        self._clock = clock
        self._queue_size = max(1, queue_size)
        self._queue: collections.deque[_Pending | _Stop | _Mark] = collections.deque()
        self._wake_at = max(1, queue_size // 2)
        # Taken by the writer after each batch and by a `record` waiting for room: only the
        # full-queue path ever waits on it.
        self._room = threading.Condition()
        self._wake = threading.Event()
        self._write_interval = write_interval
        self._closed = False
        self._failure: BaseException | None = None
        self._read_lock = threading.Lock()
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            jsonl_path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            self._jsonl = jsonl_path.open("a", encoding="utf-8")
        except (sqlite3.Error, OSError) as exc:
            raise AuditError(f"cannot open the audit log at {db_path}: {exc}") from exc
        self._writer = threading.Thread(target=self._write_loop, name="audit-writer", daemon=True)
        self._writer.start()

    @classmethod
    def in_data_dir(cls, data_dir: Path, **settings: Any) -> AuditLog:
        return cls(data_dir / AUDIT_DB_FILE_NAME, data_dir / AUDIT_JSONL_FILE_NAME, **settings)

    def record(self, kind: str, fields: dict[str, JSONValue]) -> None:
        """Queue one event. Raises `AuditError` for a bad kind, non-JSON fields or a dead log."""
        if self._closed:
            raise AuditError(f"audit log is closed (event {kind!r})")
        if self._failure is not None:
            raise AuditError(f"audit writer failed: {self._failure}") from self._failure
        if kind not in _known_kinds:
            if len(kind) > _MAX_KIND_CHARS or not _KIND.fullmatch(kind):
                raise AuditError(f"audit event kind {kind!r} is not a dotted lowercase name")
            if len(_known_kinds) < _KNOWN_KINDS_MAX:
                _known_kinds.add(kind)
        if not isinstance(fields, dict):
            raise AuditError(f"audit event {kind!r}: fields must be a JSON object")
        try:
            fields_json = _encode(fields)
        except (TypeError, ValueError) as exc:
            raise AuditError(f"audit event {kind!r}: fields are not plain JSON: {exc}") from exc
        pending = _Pending(self._clock(), kind, fields_json, _may_need_mask(fields_json))
        if len(self._queue) >= self._queue_size:
            self._wait_for_room(kind)
        self._queue.append(pending)
        if len(self._queue) >= self._wake_at:
            self._wake.set()

    def _wait_for_room(self, kind: str) -> None:
        self._wake.set()
        with self._room:
            if not self._room.wait_for(
                lambda: len(self._queue) < self._queue_size, self._put_timeout
            ):
                raise AuditError(f"audit queue full for {self._put_timeout}s (event {kind!r})")

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued event is written, or raise `AuditError` after `timeout`."""
        if self._closed:
            return
        mark = _Mark(threading.Event())
        self._queue.append(mark)
        self._wake.set()
        if not mark.reached.wait(timeout):
            raise AuditError(f"audit log did not drain within {timeout}s")
        if self._failure is not None:
            raise AuditError(f"audit writer failed: {self._failure}") from self._failure

    def events(self, kind: str | None = None) -> list[AuditEvent]:
        """Stored events (of one kind, or all), oldest first. Queued ones appear after `flush`."""
        query = "SELECT seq, at, kind, fields_json FROM audit_events"
        params: tuple[str, ...] = ()
        if kind is not None:
            query += " WHERE kind = ?"
            params = (kind,)
        with self._read_lock:
            try:
                rows = self._conn.execute(query + " ORDER BY seq", params).fetchall()
            except sqlite3.Error as exc:
                raise AuditError(f"cannot read the audit log: {exc}") from exc
        return [
            AuditEvent(seq, datetime.fromisoformat(at), kind_, json.loads(fields_json))
            for seq, at, kind_, fields_json in rows
        ]

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, stop the writer and close both files."""
        if self._closed:
            return
        self._closed = True
        self._queue.append(_Stop())
        self._wake.set()
        self._writer.join(timeout)
        with self._read_lock:
            self._conn.close()
        self._jsonl.close()
        if self._writer.is_alive():
            raise AuditError(f"audit writer did not stop within {timeout}s")

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write_loop(self) -> None:
        while True:
            self._wake.wait(self._write_interval)
            self._wake.clear()
            if self._drain():
                return

    def _drain(self) -> bool:
        """Write everything queued, in batches; True once the stop sentinel was taken."""
        while True:
            batch: list[_Pending] = []
            marks: list[_Mark] = []
            stop = False
            while len(batch) < _BATCH_MAX and not stop:
                try:
                    item = self._queue.popleft()
                except IndexError:
                    break
                if isinstance(item, _Pending):
                    batch.append(item)
                elif isinstance(item, _Mark):
                    marks.append(item)
                else:
                    stop = True
            try:
                if batch and self._failure is None:
                    self._write_batch(batch)
            except (sqlite3.Error, OSError, ValueError) as exc:
                # Later `record` calls raise; draining goes on so `flush` never hangs.
                self._failure = exc
            finally:
                for mark in marks:
                    mark.reached.set()
                with self._room:
                    self._room.notify_all()
            if stop:
                return True
            if len(batch) < _BATCH_MAX:
                return False

    def _write_batch(self, batch: list[_Pending]) -> None:
        rows = [
            (event.at.astimezone(UTC).isoformat(), event.kind, event.stored_fields())
            for event in batch
        ]
        with self._read_lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    "INSERT INTO audit_events (at, kind, fields_json) VALUES (?, ?, ?)", rows
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        lines = "".join(
            f'{{"at":{json.dumps(at)},"kind":{json.dumps(kind)},"fields":{fields}}}\n'
            for at, kind, fields in rows
        )
        self._jsonl.write(lines)
        self._jsonl.flush()
