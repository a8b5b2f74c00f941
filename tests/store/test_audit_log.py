"""The audit log: SQLite table and JSON-lines file, written by its own thread."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.store.audit import AuditError, AuditLog
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.store.redaction import MASK

FIXED = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def open_log(tmp_path: Path, **settings: object) -> AuditLog:
    return AuditLog.in_data_dir(tmp_path / "data", clock=lambda: FIXED, **settings)


def jsonl_lines(tmp_path: Path) -> list[dict[str, JSONValue]]:
    text = (tmp_path / "data" / "audit.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_is_an_audit_sink(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        sink: AuditSink = log
        sink.record("turn.start", {"turn_id": "t1"})
        log.flush()
        assert [e.kind for e in log.events()] == ["turn.start"]


def test_events_land_in_table_and_jsonl_in_order(tmp_path: Path) -> None:
    kinds = ["turn.start", "tool.call", "command.dispatch", "approval.answer", "turn.end"]
    with open_log(tmp_path) as log:
        for index, kind in enumerate(kinds):
            log.record(kind, {"turn_id": "t1", "index": index, "player": "Älex"})
        log.flush()
        events = log.events()
        assert [e.kind for e in events] == kinds
        assert [e.fields["index"] for e in events] == list(range(5))
        assert all(e.at == FIXED for e in events)
        assert [e.kind for e in log.events("tool.call")] == ["tool.call"]
    lines = jsonl_lines(tmp_path)
    assert [line["kind"] for line in lines] == kinds
    assert lines[0] == {
        "at": FIXED.isoformat(),
        "kind": "turn.start",
        "fields": {"index": 0, "player": "Älex", "turn_id": "t1"},
    }


def test_close_writes_everything_still_queued(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for index in range(2000):
        log.record("function.invoke", {"index": index})
    log.close()
    assert [line["fields"] for line in jsonl_lines(tmp_path)] == [{"index": i} for i in range(2000)]
    conn = sqlite3.connect(tmp_path / "data" / "audit.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM audit_events").fetchone() == (2000,)
    conn.close()


def test_survives_reopen_and_appends(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        log.record("turn.start", {"n": 1})
    with open_log(tmp_path) as log:
        log.record("turn.end", {"n": 2})
        log.flush()
        assert [e.kind for e in log.events()] == ["turn.start", "turn.end"]
    assert [line["kind"] for line in jsonl_lines(tmp_path)] == ["turn.start", "turn.end"]


def test_secret_named_fields_are_masked_everywhere(tmp_path: Path) -> None:
    fields: dict[str, JSONValue] = {
        "api_key": "sk-live-123",
        "headers": {"Authorization": "Bearer abc", "X-Trace": "ok"},
        "access_token": "tok",
        "note": "bearer xyz",
        "input_tokens": 42,
        "tokens": "not a credential name",
        "nested": [{"client-secret": "s"}, {"password": {"deep": "p"}}],
    }
    with open_log(tmp_path) as log:
        log.record("provider.failure", fields)
        log.flush()
        (event,) = log.events()
    expected = {
        "api_key": MASK,
        "headers": {"Authorization": MASK, "X-Trace": "ok"},
        "access_token": MASK,
        "note": MASK,
        "input_tokens": 42,
        "tokens": "not a credential name",
        "nested": [{"client-secret": MASK}, {"password": {"deep": MASK}}],
    }
    assert event.fields == expected
    assert jsonl_lines(tmp_path)[0]["fields"] == expected
    conn = sqlite3.connect(tmp_path / "data" / "audit.sqlite3")
    rows = conn.execute("SELECT * FROM audit_events").fetchall()
    conn.close()
    raw = (tmp_path / "data" / "audit.jsonl").read_text() + str(rows)
    assert "sk-live-123" not in raw and "abc" not in raw
    assert fields["api_key"] == "sk-live-123", "the caller's dict must not be changed"


@pytest.mark.parametrize("kind", ["", "Turn.start", "turn..end", "turn.end\n", "a" * 65, "1turn"])
def test_bad_kind_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    with open_log(tmp_path) as log:
        with pytest.raises(AuditError, match="kind"):
            log.record(kind, {})
        log.flush()
        assert log.events() == []


def test_non_json_fields_are_refused_naming_the_event(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        with pytest.raises(AuditError, match="'tool.call': fields are not plain JSON"):
            log.record("tool.call", {"when": datetime.now(UTC)})  # type: ignore[dict-item]
        with pytest.raises(AuditError, match="not plain JSON"):
            log.record("tool.call", {"x": float("inf")})
        log.record("tool.call", {"ok": True})
        log.flush()
        assert [e.fields for e in log.events()] == [{"ok": True}]


def test_record_after_close_is_an_error(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.close()
    log.close()  # idempotent
    with pytest.raises(AuditError, match="closed"):
        log.record("turn.start", {})


def test_full_queue_raises_instead_of_dropping(tmp_path: Path) -> None:
    log = open_log(tmp_path, queue_size=2, put_timeout=0.05)
    # Hold the writer inside its batch so the queue cannot drain.
    release = threading.Event()
    entered = threading.Event()
    original = log._write_batch

    def stalled(batch: list[object]) -> None:
        entered.set()
        assert release.wait(30)
        original(batch)  # type: ignore[arg-type]

    log._write_batch = stalled  # type: ignore[method-assign]
    log.record("turn.start", {"n": 0})
    assert entered.wait(30)
    log.record("turn.start", {"n": 1})
    log.record("turn.start", {"n": 2})
    with pytest.raises(AuditError, match="audit queue full"):
        log.record("turn.start", {"n": 3})
    release.set()
    log.flush()
    assert [e.fields["n"] for e in log.events()] == [0, 1, 2]
    log.close()


def test_write_failure_surfaces_on_next_record(tmp_path: Path) -> None:
    log = open_log(tmp_path)

    def broken(batch: list[object]) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    log._write_batch = broken  # type: ignore[method-assign]
    log.record("turn.start", {})
    with pytest.raises(AuditError, match="disk I/O error"):
        log.flush()
    with pytest.raises(AuditError, match="audit writer failed: disk I/O error"):
        log.record("turn.end", {})
    log.close()


def test_unopenable_location_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the folder should be")
    with pytest.raises(AuditError, match="cannot open the audit log"):
        open_log(tmp_path)


def test_flush_and_close_wake_a_sleeping_writer(tmp_path: Path) -> None:
    log = open_log(tmp_path, write_interval=3600.0)
    log.record("turn.start", {"n": 1})
    log.flush(timeout=30)
    assert [e.fields for e in log.events()] == [{"n": 1}]
    log.record("turn.end", {"n": 2})
    log.close(timeout=30)
    assert [line["kind"] for line in jsonl_lines(tmp_path)] == ["turn.start", "turn.end"]


def test_half_full_queue_wakes_the_writer_without_flush(tmp_path: Path) -> None:
    log = open_log(tmp_path, queue_size=4, write_interval=3600.0)
    written = threading.Event()
    original = log._write_batch

    def observed(batch: list[object]) -> None:
        original(batch)  # type: ignore[arg-type]
        written.set()

    log._write_batch = observed  # type: ignore[method-assign]
    log.record("turn.start", {"n": 1})
    log.record("turn.start", {"n": 2})
    assert written.wait(30)
    assert len(log.events()) >= 2
    log.close()
