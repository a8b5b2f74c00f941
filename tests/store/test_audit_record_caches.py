"""What `AuditLog.record` skips at the call (remembered kinds, masking decided by one search
over the encoded text and done by the writer) never lets a bad kind or an unmasked secret
through."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge import redaction
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


def test_the_masking_search_finds_every_event_mask_secrets_would_change() -> None:
    rng = random.Random(5)
    needing = flagged_clean = 0
    for _ in range(2000):
        fields = random_fields(rng)
        changed = mask_secrets(fields) != fields
        flagged = audit._may_need_mask(audit._encode(fields))
        assert flagged or not changed, fields
        needing += changed
        flagged_clean += flagged and not changed
    assert 200 < needing < 1800  # both answers are exercised
    assert flagged_clean > 0  # and a hit is only a hint: the writer decides


def credential_names() -> list[str]:
    """Every credential name shape `is_secret_name` knows, in several spellings."""
    words = [*redaction.SECRET_SEGMENTS]
    words += [f"{a}{sep}{b}" for a, b in redaction.SECRET_PAIRS for sep in "_-"]
    names: list[str] = []
    for word in words:
        for shaped in (word, word.upper(), word.title(), word.replace("k", "\u212a")):
            names += [shaped, f"x_{shaped}", f"{shaped}-id", f"db-{shaped}_2"]
    return names


def test_the_masking_search_knows_every_credential_name() -> None:
    names = credential_names()
    assert all(redaction.is_secret_name(name) for name in names)  # the shapes are credentials
    for name in names:
        fields: dict[str, JSONValue] = {"outer": {name: "value"}}
        assert mask_secrets(fields) != fields
        assert audit._may_need_mask(audit._encode(fields)), name


@pytest.mark.parametrize("value", ["Bearer x", "bearer x", "BEARER x", "BeArEr abc def"])
def test_the_masking_search_knows_every_bearer_spelling(value: str) -> None:
    fields: dict[str, JSONValue] = {"list": ["plain", value]}
    assert mask_secrets(fields) != fields
    assert audit._may_need_mask(audit._encode(fields))


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


def test_fields_that_are_not_a_json_object_are_refused(tmp_path: Path) -> None:
    with open_log(tmp_path) as log:
        with pytest.raises(AuditError, match="must be a JSON object"):
            log.record("tool.call", ["not", "a", "dict"])  # type: ignore[arg-type]
        with pytest.raises(AuditError, match="not plain JSON"):
            log.record("tool.call", {"ok": {3: "a", "b": 1}})  # type: ignore[dict-item]
        log.flush()
        assert log.events() == []
