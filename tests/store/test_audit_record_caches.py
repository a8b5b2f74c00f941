"""What `AuditLog.record` remembers between events (checked kinds, credential names, whether an
event needs masking) never lets a bad kind or an unmasked secret through."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.store import audit
from bridge.store.audit import AuditError, AuditLog
from bridge.store.audit_sink import JSONValue
from bridge.store.redaction import MASK, mask_secrets

FIXED = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)


def open_log(tmp_path: Path) -> AuditLog:
    return AuditLog.in_data_dir(tmp_path / "data", clock=lambda: FIXED)


def random_fields(rng: random.Random, depth: int = 0) -> dict[str, JSONValue]:
    names = ["turn_id", "token", "api_key", "input_tokens", "headers", "note", "x-api-key", "a"]
    texts = ["plain", "Bearer abc", "bearer", "BEARER xyz", "", "ok"]
    fields: dict[str, JSONValue] = {}
    for _ in range(rng.randrange(0, 4)):
        roll = rng.random()
        value: JSONValue
        if roll < 0.2 and depth < 3:
            value = random_fields(rng, depth + 1)
        elif roll < 0.35 and depth < 3:
            value = [random_fields(rng, depth + 1), rng.choice(texts)]
        elif roll < 0.5:
            value = rng.randrange(100)
        else:
            value = rng.choice(texts)
        fields[rng.choice(names)] = value
    return fields


def test_the_masking_shortcut_agrees_with_mask_secrets_on_many_shapes() -> None:
    rng = random.Random(5)
    needing = 0
    for _ in range(2000):
        fields = random_fields(rng)
        changed = mask_secrets(fields) != fields
        assert audit._needs_mask(fields, False) is changed, fields
        needing += changed
    assert 200 < needing < 1800  # both answers are exercised


def test_a_secret_is_masked_after_the_same_names_were_seen_without_one(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        for _ in range(3):
            log.record("provider.call", {"model": "m", "headers": {"x-trace": "ok"}, "n": 1})
        log.record("provider.call", {"model": "m", "headers": {"x-trace": "Bearer leaked"}})
        log.record("provider.call", {"model": "m", "headers": {"api-key": "sk-leaked"}})
        log.flush()
        events = log.events()
    assert [e.fields["headers"] for e in events[3:]] == [{"x-trace": MASK}, {"api-key": MASK}]
    text = (tmp_path / "data" / "audit.jsonl").read_text()
    assert "leaked" not in text
    assert json.loads(text.splitlines()[0])["fields"] == {
        "model": "m",
        "headers": {"x-trace": "ok"},
        "n": 1,
    }


def test_a_bad_kind_is_refused_whatever_was_recorded_before(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        for number in range(50):
            log.record(f"bench.kind_{number}", {})
        for bad in ["bench.Kind_1", "bench.kind_1 ", "bench..kind_1"]:
            with pytest.raises(AuditError, match="kind"):
                log.record(bad, {})
        log.flush()
        assert len(log.events()) == 50


def test_the_remembered_kinds_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit, "_known_kinds", set())
    monkeypatch.setattr(audit, "_KNOWN_KINDS_MAX", 10)
    with open_log(tmp_path) as log:
        for number in range(30):
            log.record(f"many.kind_{number}", {})
        log.flush()
        assert len(log.events()) == 30
    assert len(audit._known_kinds) == 10


def test_fields_that_are_not_a_mapping_fail_as_before(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        with pytest.raises(AttributeError):
            log.record("tool.call", ["not", "a", "dict"])  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            log.record("tool.call", {"ok": {3: "a non-text key"}})  # type: ignore[dict-item]
