"""The soak's checker can fail: a clean record holds every invariant, and each doctored copy
(a question never ended, one answered and told, one answered twice, archived twice, a private
answer shown to another player, tokens missing from the ledger or added to it) fails exactly
the invariant it breaks."""

from __future__ import annotations

import copy
from typing import Any

from bench.soak_check import check


def _clean() -> dict[str, Any]:
    """Two players on one server: P0 asks in public, P1 in private; both answered."""
    events: list[dict[str, Any]] = [
        {"event": "chat.outcome", "ref": "q-s-p0-1-ref", "outcome": "public"},
        {"event": "message", "to": "P1", "text": "[you → Mineclaw] q-s-p1-1"},
        {"event": "message", "to": "*", "text": "[Mineclaw] @P0 A:q-s-p0-1 done."},
        {"event": "message", "to": "P1", "text": "[Mineclaw → you] A:q-s-p1-1 done."},
    ]
    return {
        "questions": [
            {
                "tag": "q-s-p0-1",
                "server": "s",
                "player": "P0",
                "kind": "public",
                "mark": 0,
                "asked_at": 1.0,
            },
            {
                "tag": "q-s-p1-1",
                "server": "s",
                "player": "P1",
                "kind": "private",
                "mark": 1,
                "asked_at": 2.0,
            },
        ],
        "received": {"s": events},
        "faults": [],
        "provider": [
            {"tag": "q-s-p0-1", "bridge": "a", "ended": 10.0, "tokens": 18, "outcome": "completed"},
            {"tag": "q-s-p1-1", "bridge": "a", "ended": 11.0, "tokens": 18, "outcome": "completed"},
        ],
        "archive": [
            {"turn_id": "t1", "kind": "player", "text": "@ai q-s-p0-1"},
            {"turn_id": "t2", "kind": "player", "text": "q-s-p1-1"},
        ],
        "ledger": {"turn": [36, 0]},
    }


def _failed(record: dict[str, Any]) -> dict[str, list[str]]:
    return {r.name: r.offenders for r in check(record) if not r.held}


def test_a_clean_record_holds_every_invariant() -> None:
    results = check(_clean())
    assert [r.name for r in results if not r.held] == []
    assert {r.name: r.count for r in results}["every question answered or its asker told"] == 2


def test_a_lost_question_is_reported_with_what_the_plugin_did_with_it() -> None:
    # The testkit's --ask-trail events: the report names the step that lost it.
    record = _clean()
    del record["received"]["s"][3]
    record["received"]["s"] += [
        {"event": "ask", "ask": "k1", "what": 'open "q-s-p1-1"'},
        {"event": "ask", "ask": "k2", "what": 'open "q-s-p1-10"'},
        {"event": "ask", "ask": "k1", "what": "accepted"},
        {"event": "ask", "ask": "k2", "what": "told not delivered"},
        {"event": "ask", "ask": "k1", "what": "ended"},
    ]
    assert _failed(record) == {
        "every question answered or its asker told": ["q-s-p1-1 (the plugin: accepted, ended)"]
    }


def test_a_question_never_ended_fails() -> None:
    record = _clean()
    del record["received"]["s"][3]
    record["questions"][1].update(asked_at=20.0, ended_at=140.0)
    assert _failed(record) == {"every question answered or its asker told": ["q-s-p1-1"]}
    # The same loss across a killed bridge is the known one, reported on its own row.
    record["faults"] = [{"kind": "bridge_killed", "bridge": "a", "at": 21.0, "undone": 25.0}]
    assert _failed(record) == {"  (known) none lost silently with a bridge's hold": ["q-s-p1-1"]}
    # A paused bridge is no excuse.
    record["faults"] = [{"kind": "bridge_paused", "bridge": "a", "at": 21.0, "undone": 25.0}]
    assert _failed(record) == {"every question answered or its asker told": ["q-s-p1-1"]}


def test_answered_and_told_fails() -> None:
    record = _clean()
    record["received"]["s"].append(
        {"event": "message", "to": "P1", "text": "Your question was cut off; try again."}
    )
    assert _failed(record) == {"never both answered and told it failed": ["q-s-p1-1"]}


def test_answered_twice_fails() -> None:
    record = _clean()
    record["received"]["s"].append(copy.deepcopy(record["received"]["s"][2]))
    assert _failed(record) == {"no question answered twice": ["q-s-p0-1 x2"]}


def test_archived_twice_fails() -> None:
    record = _clean()
    record["archive"].append({"turn_id": "t3", "kind": "player", "text": "@ai q-s-p0-1"})
    assert _failed(record) == {"no question archived twice": ["q-s-p0-1 in 2 turns"]}


def test_a_private_answer_seen_by_another_player_fails() -> None:
    record = _clean()
    record["received"]["s"].append(
        {"event": "message", "to": "P0", "text": "[Mineclaw → you] A:q-s-p1-1 done."}
    )
    assert _failed(record) == {"no private answer reached another player": ["q-s-p1-1 reached P0"]}


def test_tokens_missing_from_or_added_to_the_ledger_fail() -> None:
    name = "ledger tokens equal the provider's"
    short = _clean()
    short["ledger"] = {"turn": [18, 0]}
    assert list(_failed(short)) == [name]
    extra = _clean()
    extra["ledger"] = {"turn": [36, 0], "compaction": [5, 0]}
    assert list(_failed(extra)) == [name]
    # Usage reported just before its bridge was killed may be gone with it; estimates are apart.
    killed = _clean()
    killed["ledger"] = {"turn": [18, 0], "turn.failed": [40, 40]}
    killed["faults"] = [{"kind": "bridge_killed", "bridge": "a", "at": 12.0}]
    assert _failed(killed) == {}
    held = _clean()
    held["ledger"] = {"turn": [18, 0], "turn.failed": [40, 40]}
    held["provider"][1]["held"] = True
    assert _failed(held) == {}


def test_a_stream_completed_while_its_bridge_lost_its_hold_may_be_billed_as_an_estimate() -> None:
    # Seen in the soak (seed 50): a paused bridge, run again, cut the turn whose stream the
    # provider had completed into the socket, and billed the cut turn's estimate instead.
    name = "ledger tokens equal the provider's"
    for kind, bridge in (
        ("bridge_paused", "a"),
        ("backends_paused", "a"),
        ("postgres_restarted", "c"),
    ):
        cut = _clean()
        cut["ledger"] = {"turn": [18, 0], "turn.stopped": [25, 25]}
        cut["faults"] = [{"kind": kind, "bridge": bridge, "at": 10.5, "undone": 10.8}]
        assert _failed(cut) == {}, kind
    # Another bridge's pause is no excuse, nor one long before the stream ended.
    other = _clean()
    other["ledger"] = {"turn": [18, 0]}
    other["faults"] = [{"kind": "bridge_paused", "bridge": "b", "at": 10.5, "undone": 10.8}]
    assert list(_failed(other)) == [name]
    early = _clean()
    early["ledger"] = {"turn": [18, 0]}
    early["faults"] = [{"kind": "bridge_paused", "bridge": "a", "at": -20.0, "undone": -15.0}]
    assert list(_failed(early)) == [name]
