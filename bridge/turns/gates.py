"""The gates a wake passes before a turn starts, in this order, each with its own message:

1. permission ``mineclaw.command.chat`` (``mineclaw.command.private`` for ``/ai``);
2. the asking player's cooldown;
3. the global cooldown (2 and 3 are skipped for holders of ``mineclaw.bypass.ratelimit``);
4. busy: the lane is busy and its wait line is full (`bridge.turns.queue`).

Listen mode bypasses none of them. The cooldowns are the player's across every lane: a private
question starts the same cooldowns as a public one. Cooldowns run from the moment a turn was
admitted (started, or queued) and use an injectable monotonic clock, so tests move time by
hand. The message keys are the ``gates.*`` templates of ``message.yml``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Protocol

CHAT_PERMISSION = "mineclaw.command.chat"
PRIVATE_PERMISSION = "mineclaw.command.private"
BYPASS_RATELIMIT = "mineclaw.bypass.ratelimit"

NO_PERMISSION = "gates.no_permission"
PLAYER_COOLDOWN = "gates.player_cooldown"
GLOBAL_COOLDOWN = "gates.global_cooldown"
BUSY = "gates.busy"

MAX_COOLDOWN_S = 3600.0
"""The longest cooldown ``config.yml`` accepts (``3_600_000`` ms)."""
_PRUNE_AT = 512


class RateLimits(Protocol):
    """The ``rate_limits`` section of ``config.yml``."""

    @property
    def player_cooldown_ms(self) -> int: ...

    @property
    def global_cooldown_ms(self) -> int: ...


@dataclass(frozen=True, slots=True)
class GateRefusal:
    """Why a wake was refused: a ``message.yml`` key and its placeholder values."""

    message_key: str
    values: dict[str, str] = field(default_factory=dict)


def _seconds_left(remaining: float) -> str:
    return str(max(1, math.ceil(remaining)))


class ChatGates:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_by_player: dict[str, float] = {}
        self._last_any: float | None = None

    def check(
        self,
        *,
        player_uuid: str,
        granted: Collection[str],
        limits: RateLimits,
        busy: bool,
        permission: str = CHAT_PERMISSION,
    ) -> GateRefusal | None:
        """The first gate that refuses, or None when a turn may start."""
        if permission not in granted:
            return GateRefusal(NO_PERMISSION)
        if BYPASS_RATELIMIT not in granted:
            now = self._clock()
            last = self._last_by_player.get(player_uuid)
            if last is not None:
                remaining = last + limits.player_cooldown_ms / 1000 - now
                if remaining > 0:
                    return GateRefusal(PLAYER_COOLDOWN, {"seconds": _seconds_left(remaining)})
            if self._last_any is not None:
                remaining = self._last_any + limits.global_cooldown_ms / 1000 - now
                if remaining > 0:
                    return GateRefusal(GLOBAL_COOLDOWN, {"seconds": _seconds_left(remaining)})
        if busy:
            return GateRefusal(BUSY)
        return None

    def admit(self, *, player_uuid: str) -> None:
        """Start the cooldowns: call when the turn is actually started."""
        now = self._clock()
        if len(self._last_by_player) >= _PRUNE_AT:
            # No cooldown outlives the config's ceiling, so older stamps can never refuse.
            horizon = now - MAX_COOLDOWN_S
            self._last_by_player = {p: t for p, t in self._last_by_player.items() if t > horizon}
        self._last_by_player[player_uuid] = now
        self._last_any = now
