"""The audit log redacts whole field values with the control plane's redactor, whatever the
field is called (``command``, ``reason``), in both the table and the JSON-lines file, on both
backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from bridge.redaction import Redactor
from bridge.store.audit import AuditLog
from tests.storage_backends import Backend

FIXED = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
RCON = "Zq8Wm3Xv7Lt2"


def stored_text(backend: Backend, log: AuditLog) -> str:
    rows = [json.dumps(event.fields) for event in log.events()]
    return (backend.data_dir / "audit.jsonl").read_text(encoding="utf-8") + "\n".join(rows)


def test_every_field_is_redacted_before_it_is_stored(backend: Backend) -> None:
    redactor = Redactor(secret_values={RCON})
    with backend.audit(clock=lambda: FIXED) as log:
        log.redact_with(redactor.redact_json)
        log.record("approval.answer", {"answer": "approve", "command": f"rcon {RCON} say hi"})
        log.record("provider.failure", {"reason": "HTTP 401: key sk-proj-" + "Q" * 30})
        log.record("turn.end", {"outcome": "completed", "rounds": 1})
        log.flush()
        text = stored_text(backend, log)
        events = log.events()
    assert RCON not in text and "QQQQ" not in text
    assert events[0].fields == {
        "answer": "approve",
        "command": "rcon [redacted: configured secret] say hi",
    }
    assert events[2].fields == {"outcome": "completed", "rounds": 1}


def test_an_event_the_redactor_fails_on_is_not_stored_as_it_came(backend: Backend) -> None:
    def broken(fields: Any) -> Any:
        raise RuntimeError("redactor bug")

    with backend.audit(clock=lambda: FIXED) as log:
        log.redact_with(broken)
        log.record("approval.answer", {"command": f"rcon {RCON}"})
        log.flush()
        log.redact_with(None)
        log.record("turn.end", {"outcome": "completed"})  # the writer lives on
        log.flush()
        text = stored_text(backend, log)
        events = log.events()
    assert RCON not in text
    assert [e.fields for e in events] == [{"redaction_failed": True}, {"outcome": "completed"}]
