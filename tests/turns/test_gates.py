"""Gate order, cooldowns on a manual clock, and the rate-limit bypass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.turns.gates import (
    BUSY,
    BYPASS_RATELIMIT,
    CHAT_PERMISSION,
    GLOBAL_COOLDOWN,
    NO_PERMISSION,
    PLAYER_COOLDOWN,
    ChatGates,
    GateRefusal,
)

from .fakes import ManualClock


@dataclass(frozen=True)
class Limits:
    player_cooldown_ms: int = 5000
    global_cooldown_ms: int = 1000


LIMITS = Limits()
CHAT = frozenset({CHAT_PERMISSION})
CHAT_BYPASS = frozenset({CHAT_PERMISSION, BYPASS_RATELIMIT})


def try_admit(g: ChatGates, **gate: Any) -> GateRefusal | None:
    """What the chat path does: check, then admit when every gate passed."""
    refusal = g.check(**gate)
    if refusal is None:
        g.admit(player_uuid=gate["player_uuid"])
    return refusal


def gates() -> tuple[ChatGates, ManualClock]:
    clock = ManualClock()
    return ChatGates(clock=clock), clock


def test_permission_comes_first_even_when_everything_else_refuses() -> None:
    g, _ = gates()
    g.admit(player_uuid="p1")
    refusal = g.check(player_uuid="p1", granted={BYPASS_RATELIMIT}, limits=LIMITS, busy=True)
    assert refusal == GateRefusal(NO_PERMISSION)


def test_player_cooldown_before_global_before_busy() -> None:
    g, clock = gates()
    assert try_admit(g, player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False) is None
    clock.advance(0.2)
    assert g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=True) == GateRefusal(
        PLAYER_COOLDOWN, {"seconds": "5"}
    )
    assert g.check(player_uuid="p2", granted=CHAT, limits=LIMITS, busy=True) == GateRefusal(
        GLOBAL_COOLDOWN, {"seconds": "1"}
    )
    clock.advance(1.0)
    assert g.check(player_uuid="p2", granted=CHAT, limits=LIMITS, busy=True) == GateRefusal(BUSY)
    assert g.check(player_uuid="p2", granted=CHAT, limits=LIMITS, busy=False) is None


def test_cooldown_expires_exactly_on_the_clock() -> None:
    g, clock = gates()
    g.admit(player_uuid="p1")
    clock.advance(4.999)
    refusal = g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False)
    assert refusal == GateRefusal(PLAYER_COOLDOWN, {"seconds": "1"})
    clock.advance(0.001)
    assert g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False) is None


def test_seconds_round_up() -> None:
    g, clock = gates()
    g.admit(player_uuid="p1")
    clock.advance(1.5)
    refusal = g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False)
    assert refusal == GateRefusal(PLAYER_COOLDOWN, {"seconds": "4"})


def test_bypass_skips_both_cooldowns_but_not_busy() -> None:
    g, _ = gates()
    g.admit(player_uuid="p1")
    assert g.check(player_uuid="p1", granted=CHAT_BYPASS, limits=LIMITS, busy=False) is None
    assert g.check(player_uuid="p1", granted=CHAT_BYPASS, limits=LIMITS, busy=True) == (
        GateRefusal(BUSY)
    )


def test_bypass_turn_still_starts_cooldown_for_others() -> None:
    g, _ = gates()
    assert try_admit(g, player_uuid="op", granted=CHAT_BYPASS, limits=LIMITS, busy=False) is None
    refusal = g.check(player_uuid="p2", granted=CHAT, limits=LIMITS, busy=False)
    assert refusal is not None and refusal.message_key == GLOBAL_COOLDOWN


def test_refused_attempt_does_not_start_a_cooldown() -> None:
    g, _ = gates()
    assert try_admit(g, player_uuid="p1", granted=CHAT, limits=LIMITS, busy=True) == (
        GateRefusal(BUSY)
    )
    assert g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False) is None


def test_zero_cooldowns_and_changed_limits_apply_at_once() -> None:
    g, clock = gates()
    g.admit(player_uuid="p1")
    assert g.check(player_uuid="p1", granted=CHAT, limits=Limits(0, 0), busy=False) is None
    clock.advance(2)
    assert g.check(player_uuid="p1", granted=CHAT, limits=Limits(1000, 0), busy=False) is None


def test_old_cooldown_stamps_are_forgotten_not_hoarded() -> None:
    g, clock = gates()
    for n in range(600):
        g.admit(player_uuid=f"old{n}")
    clock.advance(3601)
    g.admit(player_uuid="new")
    assert len(g._last_by_player) < 600
    g.admit(player_uuid="p1")
    refusal = g.check(player_uuid="p1", granted=CHAT, limits=LIMITS, busy=False)
    assert refusal is not None and refusal.message_key == PLAYER_COOLDOWN
