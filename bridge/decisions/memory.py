"""What the classifier remembers between lines, per player: when the assistant last answered
them (their follow-ups count for the reply window, whoever else was answered meanwhile) and
when another player last spoke to them by name (a ``you`` of theirs then answers that player).

Bounded: at most `KEPT` players each; the longest-unheard is forgotten first. Times are the
caller's monotonic seconds.
"""

from __future__ import annotations

from collections import OrderedDict

from bridge.decisions.classifier import Recent

KEPT = 256


class _Times:
    """Player (any case) -> (their name as last seen, when); the oldest forgotten first."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._at: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def set(self, player: str, at: float) -> None:
        key = player.lower()
        self._at.pop(key, None)
        self._at[key] = (player, at)
        while len(self._at) > self._kept:
            self._at.popitem(last=False)

    def get(self, player: str) -> float | None:
        found = self._at.get(player.lower())
        return None if found is None else found[1]

    def latest(self) -> tuple[str, float] | None:
        return next(reversed(self._at.values()), None)

    def clear(self) -> None:
        self._at.clear()


class ReplyMemory:
    def __init__(self, kept: int = KEPT) -> None:
        self._answered = _Times(kept)
        self._addressed = _Times(kept)

    def answered(self, player: str, at: float) -> None:
        """The assistant answered ``player`` in public at ``at``."""
        self._answered.set(player, at)

    def addressed(self, players: list[str], at: float) -> None:
        """Another player's line named these players at ``at``."""
        for player in players:
            self._addressed.set(player, at)

    def recent(self, player: str) -> Recent:
        return Recent(self._answered.get(player), self._addressed.get(player))

    def last_answered(self) -> tuple[str, float] | None:
        """Whom the assistant answered last, and when (the decision model's evidence)."""
        return self._answered.latest()

    def clear(self) -> None:
        self._answered.clear()
        self._addressed.clear()
