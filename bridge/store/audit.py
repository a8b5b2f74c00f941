"""The audit log: one database table and one JSON-lines file, written by a dedicated thread.

The table lives in ``<config>/data/audit.sqlite3`` by default, or in the PostgreSQL database
``storage`` in ``config.yml`` names (`bridge.store.database`); the JSON-lines copy is always a
local file beside the configuration.

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
Before masking, the writer passes every event's fields through the redactor set with
`redact_with` (the serving process sets the control plane's): secret values and secret-shaped
text are replaced in whole field values, whatever the field is called.

Nothing here is ever fatal to the bridge, because a turn refuses to start without its
audit record. `record` never waits: when the queue is full (the disk has stalled for a long
time, or something records in a flood) the event is counted, not queued, and once there is room
again one ``audit.dropped`` record says how many of which kinds were dropped and when. A write
that fails is retried record by record, so one record SQLite refuses costs only itself, not the
other players' events of its batch; what still fails is counted, and the next write that
succeeds is preceded by one ``audit.lost`` record with the count and the first reason. A
summary that cannot be written is not a lost event of its own: its count goes back to be
summarised again, so once the table takes rows it holds every dropped event's count exactly
once. Since start, `dropped_events` and `lost_events` count both kinds of loss (the metrics and
``/mineclaw status`` show them). Text
that no UTF-8 encoder accepts (an unpaired surrogate, say in a tool name the model made up) is
stored with each such code point written as the visible escape ``\\udXXX``.

The database runs with ``synchronous=NORMAL`` (on PostgreSQL ``synchronous_commit=off``, the
same promise: a crash may lose the last commits, never tear one). What a process kill can lose
is the events of the last interval not yet written; the table never holds a torn batch (one
transaction per batch), while the JSON-lines file may end in a torn line after a kill, so the
table is the authoritative copy.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import re2

from bridge.errors import StoreError
from bridge.redaction import SECRET_PAIRS, SECRET_SEGMENTS
from bridge.store.audit_facets import facet_indexes
from bridge.store.audit_sink import JSONValue
from bridge.store.database import Database, DatabaseError
from bridge.store.migrations import Migration, Schema, open_migrated
from bridge.store.redaction import mask_secrets
from bridge.unicode_text import escape_surrogates, has_surrogate

log = logging.getLogger(__name__)

AUDIT_DB_FILE_NAME = "audit.sqlite3"
AUDIT_JSONL_FILE_NAME = "audit.jsonl"

_KIND = re2.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){0,7}")
_MAX_KIND_CHARS = 64
_BATCH_MAX = 256
# Kinds are constants in the code, so a few hundred cover every producer; the bound only keeps
# a misbehaving caller from growing the set without end.
_KNOWN_KINDS_MAX = 1024
_known_kinds: set[str] = set()

_BY_KIND = "CREATE INDEX IF NOT EXISTS audit_by_kind ON audit_events (kind, seq)"
_COLUMNS = "at TEXT NOT NULL, kind TEXT NOT NULL, fields_json TEXT NOT NULL"

SCHEMA = Schema(
    "audit",
    (
        # The table an older bridge made is taken over as it is (IF NOT EXISTS).
        Migration(
            1,
            "audit events",
            sqlite=(
                "CREATE TABLE IF NOT EXISTS audit_events"
                f" (seq INTEGER PRIMARY KEY AUTOINCREMENT, {_COLUMNS})",
                _BY_KIND,
            ),
            postgresql=(
                f"CREATE TABLE IF NOT EXISTS audit_events (seq BIGSERIAL PRIMARY KEY, {_COLUMNS})",
                _BY_KIND,
            ),
        ),
        # The console pages by player, tool, server, outcome and time through these
        # (bridge.store.audit_facets); an existing log is indexed once, at the upgrade.
        Migration(
            2,
            "audit facet and time indexes",
            sqlite=facet_indexes("sqlite"),
            postgresql=facet_indexes("postgresql"),
        ),
    ),
)

# One encoder for every event: `json.dumps` with options builds a new one per call.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True).encode

# Found in an encoded event wherever `mask_secrets` could change something: every credential
# name contains one of these once lower-cased (a segment, or a pair joined by "_" or "-"), and a
# masked value starts with "Bearer " right after its opening quote. A hit only means "look
# closer"; a miss is a proof, since the encoder escapes none of these characters (the tests
# derive every name shape from `bridge.redaction`). Plain substring tests on the
# lower-cased text: a few microseconds, where a case-insensitive `re` alternation takes ten
# times that, and RE2 gives up the GIL on every call (on the event loop, a wait to get it back
# whenever another thread runs).
_MASK_HINTS = (
    *SECRET_SEGMENTS,
    '"bearer ',
    *(f"{first}{joint}{second}" for first, second in SECRET_PAIRS for joint in "_-"),
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

    def row(self, redact: Callable[[Any], Any] | None = None) -> _Row:
        fields = self.fields_json
        if has_surrogate(fields):
            # No UTF-8 encoder takes a surrogate code point (nor the redactor's RE2): written
            # as visible escapes first, the event keeps the evidence and still redacts and
            # writes, instead of failing its whole batch.
            fields = escape_surrogates(fields)
        if redact is not None:
            try:
                parsed = json.loads(fields)
                cleaned = redact(parsed)
            except Exception:  # an event that cannot be redacted is not stored as it came
                fields = _encode({"redaction_failed": True})
            else:
                if cleaned is not parsed or self.may_need_mask:
                    fields = _encode(mask_secrets(cleaned))
        elif self.may_need_mask:
            fields = _encode(mask_secrets(json.loads(fields)))
        return (_iso(self.at), self.kind, fields)


@dataclass(frozen=True, slots=True)
class _Stop:
    """Queued by `close`: everything before it is written, then the writer ends."""


@dataclass(frozen=True, slots=True)
class _Mark:
    """Queued by `flush`: set once everything queued before it is written."""

    reached: threading.Event


_WRITE_ERRORS = (StoreError, OSError, ValueError)
_MAX_REASON_CHARS = 300

_Row = tuple[str, str, str]
"""(at, kind, fields_json) as stored."""


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@dataclass(slots=True)
class _Tally:
    """Events counted instead of written, with the first and last time one was."""

    records: int = 0
    announced: int = 0
    """Of ``records``, how many a log line already reported (a summary given back is not)."""
    jsonl_lines: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    first_at: datetime | None = None
    last_at: datetime | None = None

    def count(self, at: datetime, *, kind: str | None = None, records: int = 1) -> None:
        self.records += records
        if kind is not None:
            self.kinds[kind] = self.kinds.get(kind, 0) + records
        self.first_at = self.first_at or at
        self.last_at = at

    def merge(self, earlier: _Tally) -> None:
        """Take back a tally that could not be written, as if counted before this one."""
        self.records += earlier.records
        self.announced += earlier.announced
        self.jsonl_lines += earlier.jsonl_lines
        for kind, count in earlier.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + count
        self.reason = self.reason or earlier.reason
        self.first_at = earlier.first_at or self.first_at
        self.last_at = self.last_at or earlier.last_at

    def times(self) -> dict[str, JSONValue]:
        assert self.first_at is not None and self.last_at is not None
        return {"first_at": _iso(self.first_at), "last_at": _iso(self.last_at)}


class AuditLog:
    """The database + JSON-lines audit sink. Implements `bridge.store.audit_sink.AuditSink`.

    ``database``: a SQLite file path (opened with ``synchronous=NORMAL``) or an open `Database`
    of either backend, which the log then owns and closes.

    Keyword-only settings: ``queue_size`` (events waiting for the writer, default 10 000; past
    it events are counted and summarised, not queued), ``write_interval`` (seconds between the
    writer's rounds, default 0.05). ``clock`` gives the event time (UTC now by default).
    """

    def __init__(
        self,
        database: Path | Database,
        jsonl_path: Path,
        *,
        queue_size: int = 10_000,
        write_interval: float = 0.05,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._jsonl_path = jsonl_path
        self._clock = clock
        self._queue_size = max(1, queue_size)
        self._queue: collections.deque[_Pending | _Stop | _Mark] = collections.deque()
        self._wake_at = max(1, queue_size // 2)
        self._wake = threading.Event()
        self._write_interval = write_interval
        self._closed = False
        # Events `record` dropped on a full queue: counted under the lock (producers may be on
        # several threads), summarised by the writer in its next batch.
        self._dropped = _Tally()
        self._dropped_lock = threading.Lock()
        # Events the writer could not store: only the writer thread touches this.
        self._lost = _Tally()
        self.dropped_events = 0
        """Events dropped on a full queue since start (each is in an `audit.dropped` count)."""
        self.lost_events = 0
        """Events the table refused since start (each is in an `audit.lost` count)."""
        self._read_lock = threading.Lock()
        self._redact: Callable[[Any], Any] | None = None
        self._db = open_migrated(
            database, SCHEMA, label="audit log", synchronous="NORMAL", error=AuditError
        )
        try:
            jsonl_path.parent.mkdir(parents=True, exist_ok=True)
            self._jsonl: TextIO | None = jsonl_path.open("a", encoding="utf-8")
        except OSError as exc:
            self._db.close()
            raise AuditError(f"cannot open the audit log at {jsonl_path}: {exc}") from exc
        self._writer = threading.Thread(target=self._write_loop, name="audit-writer", daemon=True)
        self._writer.start()

    @classmethod
    def in_data_dir(cls, data_dir: Path, **settings: Any) -> AuditLog:
        return cls(data_dir / AUDIT_DB_FILE_NAME, data_dir / AUDIT_JSONL_FILE_NAME, **settings)

    def redact_with(self, redact: Callable[[Any], Any] | None) -> None:
        """Pass every event's fields (a JSON object) through ``redact`` before it is stored;
        ``redact`` returns its argument itself when nothing changed. Runs in the writer."""
        self._redact = redact

    def record(self, kind: str, fields: dict[str, JSONValue]) -> None:
        """Queue one event; never waits. Raises `AuditError` only for a caller's mistake: a bad
        kind, fields that are not a JSON object of plain JSON, or a closed log."""
        if self._closed:
            raise AuditError(f"audit log is closed (event {kind!r})")
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
        at = self._clock()
        if len(self._queue) >= self._queue_size:
            # Waiting here would stall the event loop for as long as the disk does; the count
            # is written as one `audit.dropped` record instead.
            with self._dropped_lock:
                self._dropped.count(at, kind=kind)
                self.dropped_events += 1
            self._wake.set()
            return
        self._queue.append(_Pending(at, kind, fields_json, _may_need_mask(fields_json)))
        if len(self._queue) >= self._wake_at:
            self._wake.set()

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued event is written (or counted as lost), or raise `AuditError`
        after `timeout`."""
        if self._closed:
            return
        mark = _Mark(threading.Event())
        self._queue.append(mark)
        self._wake.set()
        if not mark.reached.wait(timeout):
            raise AuditError(f"audit log did not drain within {timeout}s")

    def events(self, kind: str | None = None) -> list[AuditEvent]:
        """Stored events (of one kind, or all), oldest first. Queued ones appear after `flush`."""
        query = "SELECT seq, at, kind, fields_json FROM audit_events"
        params: tuple[str, ...] = ()
        if kind is not None:
            query += " WHERE kind = ?"
            params = (kind,)
        with self._read_lock:
            try:
                rows = self._db.query(query + " ORDER BY seq", params)
            except DatabaseError as exc:
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
            self._db.close()
        if self._jsonl is not None:
            self._jsonl.close()
        if self._writer.is_alive():
            raise AuditError(f"audit writer did not stop within {timeout}s")

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- the writer thread

    def _write_loop(self) -> None:
        while True:
            self._wake.wait(self._write_interval)
            self._wake.clear()
            try:
                if self._drain():
                    return
            except Exception:  # pragma: no cover - a bug here must not end the writer
                log.exception("audit writer round failed")

    def _drain(self) -> bool:
        """Write everything queued, in batches; True once the stop sentinel was taken."""
        while True:
            batch: list[_Row] = []
            dropped = self._take_dropped()
            if dropped is not None:
                batch.append(dropped[0])
            marks: list[_Mark] = []
            stop = False
            taken = 0
            while taken < _BATCH_MAX and not stop:
                try:
                    item = self._queue.popleft()
                except IndexError:
                    break
                if isinstance(item, _Pending):
                    batch.append(item.row(self._redact))
                    taken += 1
                elif isinstance(item, _Mark):
                    marks.append(item)
                else:
                    stop = True
            try:
                if batch:
                    summary = None if dropped is None else dropped[0]
                    stored = self._store(batch, summary)
                    if dropped is not None and not any(row is summary for row in stored):
                        self._give_back_dropped(dropped[1])
                    self._append_jsonl(stored)
            finally:
                for mark in marks:
                    mark.reached.set()
            if stop:
                return True
            if taken < _BATCH_MAX:
                return False

    def _give_back_dropped(self, tally: _Tally) -> None:
        """The summary row of `tally` was not stored: summarised again with the next drops."""
        with self._dropped_lock:
            self._dropped.merge(tally)

    def _take_dropped(self) -> tuple[_Row, _Tally] | None:
        with self._dropped_lock:
            dropped, self._dropped = self._dropped, _Tally()
        if not dropped.records:
            return None
        if dropped.records > dropped.announced:  # a given-back summary was announced already
            fresh = dropped.records - dropped.announced
            log.warning("audit queue was full: %d events dropped and summarised", fresh)
            dropped.announced = dropped.records
        fields: dict[str, JSONValue] = {
            "records": dropped.records,
            "kinds": dict(sorted(dropped.kinds.items())),
            **dropped.times(),
        }
        return (_iso(self._clock()), "audit.dropped", _encode(fields)), dropped

    def _store(self, rows: list[_Row], summary: _Row | None = None) -> list[_Row]:
        """Insert ``rows``; the ones stored. A failing batch is retried row by row, so one row
        the database refuses costs only itself; what fails is counted in ``self._lost``, except
        the `audit.dropped` ``summary``, which the caller gives back to be written later."""
        lost = self._lost_row()
        try:
            self._insert(rows if lost is None else [lost, *rows])
        except _WRITE_ERRORS as exc:
            self._note_failure(exc)
        else:
            self._recovered()
            return rows if lost is None else [lost, *rows]
        stored: list[_Row] = []
        for row in rows:
            try:
                self._insert([row])
            except _WRITE_ERRORS as exc:
                if row is not summary:  # a summary is given back, not lost (`_drain`)
                    self._lost.count(self._clock())
                    self.lost_events += 1
                self._note_failure(exc)
            else:
                stored.append(row)
        if not (self._lost.records or self._lost.jsonl_lines):
            self._lost = _Tally()  # a passing fault: every row went in on its own
        lost = self._lost_row()
        if stored and lost is not None:
            # The log works again for other rows: record the loss now, not at the next batch.
            try:
                self._insert([lost])
            except _WRITE_ERRORS:
                pass
            else:
                self._recovered()
                stored.append(lost)
        return stored

    def _insert(self, rows: list[_Row]) -> None:
        with self._read_lock, self._db.transaction() as tx:
            tx.executemany(
                "INSERT INTO audit_events (at, kind, fields_json) VALUES (?, ?, ?)", rows
            )

    def _append_jsonl(self, rows: list[_Row]) -> None:
        if not rows:
            return
        lines = "".join(
            f'{{"at":{json.dumps(at)},"kind":{json.dumps(kind)},"fields":{fields}}}\n'
            for at, kind, fields in rows
        )
        try:
            if self._jsonl is None:
                self._jsonl = self._jsonl_path.open("a", encoding="utf-8")
            self._jsonl.write(lines)
            self._jsonl.flush()
        except _WRITE_ERRORS as exc:
            # The table holds these rows; only the copy misses them. Reopen on the next write.
            self._lost.jsonl_lines += len(rows)
            self._lost.count(self._clock(), records=0)
            self._note_failure(exc)
            if self._jsonl is not None:
                with contextlib.suppress(*_WRITE_ERRORS):
                    self._jsonl.close()
                self._jsonl = None

    def _note_failure(self, exc: BaseException) -> None:
        if not self._lost.reason:
            self._lost.reason = f"{type(exc).__name__}: {exc}"[:_MAX_REASON_CHARS]
            log.error(
                "audit log cannot write (%s); events are counted and the count recorded once "
                "writing works again",
                self._lost.reason,
            )

    def _lost_row(self) -> _Row | None:
        lost = self._lost
        if not (lost.records or lost.jsonl_lines):
            return None
        fields: dict[str, JSONValue] = {
            "records": lost.records,
            "jsonl_lines": lost.jsonl_lines,
            "reason": lost.reason,
            **lost.times(),
        }
        return (_iso(self._clock()), "audit.lost", _encode(fields))

    def _recovered(self) -> None:
        if self._lost.reason:
            log.warning(
                "audit log writes again; %d events and %d copy lines were lost",
                self._lost.records,
                self._lost.jsonl_lines,
            )
        self._lost = _Tally()
