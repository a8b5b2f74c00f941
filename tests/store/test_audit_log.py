"""The audit log: a table (SQLite or PostgreSQL) and a JSON-lines file, written by a thread."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.store.audit import AuditError, AuditLog
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.store.redaction import MASK
from tests.storage_backends import Backend

FIXED = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def open_log(backend: Backend, **settings: object) -> AuditLog:
    return backend.audit(clock=lambda: FIXED, **settings)


def jsonl_lines(backend: Backend) -> list[dict[str, JSONValue]]:
    text = (backend.data_dir / "audit.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_is_an_audit_sink(backend: Backend) -> None:
    with open_log(backend) as log:
        sink: AuditSink = log
        sink.record("turn.start", {"turn_id": "t1"})
        log.flush()
        assert [e.kind for e in log.events()] == ["turn.start"]


def test_events_land_in_table_and_jsonl_in_order(backend: Backend) -> None:
    kinds = ["turn.start", "tool.call", "command.dispatch", "approval.answer", "turn.end"]
    with open_log(backend) as log:
        for index, kind in enumerate(kinds):
            log.record(kind, {"turn_id": "t1", "index": index, "player": "Älex"})
        log.flush()
        events = log.events()
        assert [e.kind for e in events] == kinds
        assert [e.fields["index"] for e in events] == list(range(5))
        assert all(e.at == FIXED for e in events)
        assert [e.kind for e in log.events("tool.call")] == ["tool.call"]
    lines = jsonl_lines(backend)
    assert [line["kind"] for line in lines] == kinds
    assert lines[0] == {
        "at": FIXED.isoformat(),
        "kind": "turn.start",
        "fields": {"index": 0, "player": "Älex", "turn_id": "t1"},
    }


def test_close_writes_everything_still_queued(backend: Backend) -> None:
    log = open_log(backend)
    for index in range(2000):
        log.record("function.invoke", {"index": index})
    log.close()
    assert [line["fields"] for line in jsonl_lines(backend)] == [{"index": i} for i in range(2000)]
    assert backend.execute("SELECT COUNT(*) FROM audit_events", which="audit") == [(2000,)]


def test_survives_reopen_and_appends(backend: Backend) -> None:
    with open_log(backend) as log:
        log.record("turn.start", {"n": 1})
    with open_log(backend) as log:
        log.record("turn.end", {"n": 2})
        log.flush()
        assert [e.kind for e in log.events()] == ["turn.start", "turn.end"]
    assert [line["kind"] for line in jsonl_lines(backend)] == ["turn.start", "turn.end"]


def test_secret_named_fields_are_masked_everywhere(backend: Backend) -> None:
    fields: dict[str, JSONValue] = {
        "api_key": "sk-live-123",
        "headers": {"Authorization": "Bearer abc", "X-Trace": "ok"},
        "access_token": "tok",
        "note": "bearer xyz",
        "input_tokens": 42,
        "tokens": "not a credential name",
        "nested": [{"client-secret": "s"}, {"password": {"deep": "p"}}],
    }
    with open_log(backend) as log:
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
    assert jsonl_lines(backend)[0]["fields"] == expected
    rows = backend.execute("SELECT * FROM audit_events", which="audit")
    raw = (backend.data_dir / "audit.jsonl").read_text() + str(rows)
    assert "sk-live-123" not in raw and "abc" not in raw
    assert fields["api_key"] == "sk-live-123", "the caller's dict must not be changed"


@pytest.mark.parametrize("kind", ["", "Turn.start", "turn..end", "turn.end\n", "a" * 65, "1turn"])
def test_bad_kind_is_refused_at_once(backend: Backend, kind: str) -> None:
    with open_log(backend) as log:
        with pytest.raises(AuditError, match="kind"):
            log.record(kind, {})
        log.flush()
        assert log.events() == []


def test_non_json_fields_are_refused_naming_the_event(backend: Backend) -> None:
    with open_log(backend) as log:
        with pytest.raises(AuditError, match="'tool.call': fields are not plain JSON"):
            log.record("tool.call", {"when": datetime.now(UTC)})  # type: ignore[dict-item]
        with pytest.raises(AuditError, match="not plain JSON"):
            log.record("tool.call", {"x": float("inf")})
        log.record("tool.call", {"ok": True})
        log.flush()
        assert [e.fields for e in log.events()] == [{"ok": True}]


def test_record_after_close_is_an_error(backend: Backend) -> None:
    log = open_log(backend)
    log.close()
    log.close()  # idempotent
    with pytest.raises(AuditError, match="closed"):
        log.record("turn.start", {})


def refuse_inserts(backend: Backend, when: str) -> None:
    """Make the database itself refuse audit rows matching ``when`` (a real write failure)."""
    backend.execute("CREATE TABLE IF NOT EXISTS broken (on_ INTEGER)", which="audit")
    backend.refuse_inserts("audit_events", when, "refused by the test", which="audit")


def set_broken(backend: Backend, on: bool) -> None:
    backend.execute("DELETE FROM broken", which="audit")
    if on:
        backend.execute("INSERT INTO broken VALUES (1)", which="audit")


def test_a_lone_surrogate_is_stored_escaped_with_the_rest_of_its_batch(backend: Backend) -> None:
    # A model-made tool name "\ud800" once made the writer fail for good: every later record
    # raised, and the batch with every player's events was lost.
    log = open_log(backend, write_interval=3600.0)
    log.record("turn.start", {"turn_id": "t1", "player": "Alex"})
    log.record("tool.call", {"turn_id": "t2", "name": "\ud800", "\udfff key": "x\ud83dy"})
    log.record("turn.end", {"turn_id": "t3", "player": "Steve"})
    log.flush()
    log.record("turn.start", {"turn_id": "t4"})
    log.close()
    with backend.audit() as reopened:
        stored = reopened.events()
    assert [e.kind for e in stored] == ["turn.start", "tool.call", "turn.end", "turn.start"]
    assert stored[1].fields == {"turn_id": "t2", "name": "\\ud800", "\\udfff key": "x\\ud83dy"}
    lines = jsonl_lines(backend)
    assert [line["fields"]["turn_id"] for line in lines] == ["t1", "t2", "t3", "t4"]  # type: ignore[index]
    assert lines[1]["fields"] == stored[1].fields


def test_a_row_sqlite_refuses_costs_only_itself_and_its_loss_is_recorded(backend: Backend) -> None:
    log = open_log(backend, write_interval=3600.0)
    refuse_inserts(backend, "NEW.kind = 'tool.call'")
    log.record("turn.start", {"player": "Alex"})
    log.record("tool.call", {"player": "Steve"})
    log.record("turn.end", {"player": "Alex"})
    log.flush()
    log.record("turn.start", {"player": "Alex", "n": 2})
    log.flush()
    kinds = [e.kind for e in log.events()]
    assert kinds == ["turn.start", "turn.end", "audit.lost", "turn.start"]
    (lost,) = log.events("audit.lost")
    assert lost.fields["records"] == 1
    assert lost.fields["jsonl_lines"] == 0
    assert "refused by the test" in str(lost.fields["reason"])
    assert [line["kind"] for line in jsonl_lines(backend)] == kinds
    log.close()


def test_a_failing_sink_recovers_and_records_how_many_events_it_lost(backend: Backend) -> None:
    log = open_log(backend, write_interval=3600.0)
    refuse_inserts(backend, "EXISTS (SELECT 1 FROM broken)")
    log.record("turn.start", {"n": 0})
    log.flush()
    set_broken(backend, True)
    for n in range(1, 4):
        log.record("turn.start", {"n": n})
        log.flush()  # one failing batch each: the failure is never taken as permanent
    set_broken(backend, False)
    log.record("turn.end", {"n": 4})  # a later record is accepted and written
    log.flush()
    stored = log.events()
    assert [(e.kind, e.fields.get("n")) for e in stored] == [
        ("turn.start", 0),
        ("audit.lost", None),
        ("turn.end", 4),
    ]
    assert stored[1].fields["records"] == 3
    assert "refused by the test" in str(stored[1].fields["reason"])
    assert stored[1].fields["first_at"] == FIXED.isoformat()
    log.close()


def wait_until_taken(log: AuditLog) -> None:
    """The writer has taken everything queued (it then stalls on the lock the test holds)."""
    for _ in range(3000):
        if not log._queue:
            break
        time.sleep(0.01)
    assert not log._queue


def test_a_full_queue_never_waits_and_the_drops_are_summarised(backend: Backend) -> None:
    log = open_log(backend, queue_size=3, write_interval=3600.0)
    # The writer cannot take the lock it writes under, so nothing drains while the test holds
    # it: a `record` that waited for room would wait for good (the old one raised after 2 s).
    with log._read_lock:
        log.record("turn.start", {"n": 0})  # wakes the writer, which takes it and then stalls
        wait_until_taken(log)
        for n in range(1, 4):
            log.record("turn.start", {"n": n})
        for n in range(4, 9):
            log.record("tool.call", {"n": n})
        log.record("turn.end", {"n": 9})
    log.flush()
    stored = log.events()
    assert [e.fields.get("n") for e in stored if e.kind != "audit.dropped"] == [0, 1, 2, 3]
    (dropped,) = log.events("audit.dropped")
    assert dropped.fields["records"] == 6
    assert dropped.fields["kinds"] == {"tool.call": 5, "turn.end": 1}
    assert dropped.fields["first_at"] == dropped.fields["last_at"] == FIXED.isoformat()
    log.record("turn.end", {"n": 10})
    log.flush()
    assert log.events()[-1].fields == {"n": 10}
    log.close()


def test_on_a_full_disk_every_event_is_counted_exactly_once(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    # Before, a summary of dropped events that could not be written was itself counted as one
    # lost record: of 30,002 events on a full disk, 15,637 were counted nowhere.
    log = open_log(backend, queue_size=3, write_interval=3600.0)
    refuse_inserts(backend, "EXISTS (SELECT 1 FROM broken)")
    set_broken(backend, True)
    with log._read_lock:
        log.record("turn.start", {"n": 0})  # the writer takes it, then stalls on the lock
        wait_until_taken(log)
        for n in range(1, 21):
            log.record("tool.call", {"n": n})  # three queued, seventeen dropped
    log.flush()
    log.flush()  # the summary failed too: given back, not counted as one lost event
    assert (log.dropped_events, log.lost_events) == (17, 4)
    set_broken(backend, False)
    log.record("turn.end", {"n": 21})
    log.flush()
    stored = log.events()
    dropped = sum(int(str(e.fields["records"])) for e in stored if e.kind == "audit.dropped")
    lost = sum(int(str(e.fields["records"])) for e in stored if e.kind == "audit.lost")
    kept = [e.fields["n"] for e in stored if not e.kind.startswith("audit.")]
    assert (dropped, lost, kept) == (17, 4, [21])
    assert dropped + lost + len(kept) == 22  # every event recorded, counted once
    (summary,) = log.events("audit.dropped")
    assert summary.fields["kinds"] == {"tool.call": 17}
    log.close()
    # One line per summary: a summary given back and queued again is not announced again
    # (a full disk logged the same 17 drops once per writer round).
    full = [r.getMessage() for r in caplog.records if "audit queue was full" in r.getMessage()]
    assert full == ["audit queue was full: 17 events dropped and summarised"], full


def test_unopenable_location_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the folder should be")
    with pytest.raises(AuditError, match="cannot open the audit log"):
        AuditLog.in_data_dir(tmp_path / "data")


def test_flush_and_close_wake_a_sleeping_writer(backend: Backend) -> None:
    log = open_log(backend, write_interval=3600.0)
    log.record("turn.start", {"n": 1})
    log.flush(timeout=30)
    assert [e.fields for e in log.events()] == [{"n": 1}]
    log.record("turn.end", {"n": 2})
    log.close(timeout=30)
    assert [line["kind"] for line in jsonl_lines(backend)] == ["turn.start", "turn.end"]


def test_half_full_queue_wakes_the_writer_without_flush(backend: Backend) -> None:
    log = open_log(backend, queue_size=4, write_interval=3600.0)
    written = threading.Event()
    original = log._insert

    def observed(rows: list[tuple[str, str, str]]) -> None:
        original(rows)
        written.set()

    log._insert = observed  # type: ignore[method-assign]
    log.record("turn.start", {"n": 1})
    log.record("turn.start", {"n": 2})
    assert written.wait(30)
    assert len(log.events()) >= 2
    log.close()
