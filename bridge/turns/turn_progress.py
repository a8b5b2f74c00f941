"""What a running turn has got so far, and how it says it cannot complete.

The engine (`bridge.turns.engine`), the tool round (`bridge.turns.tool_round`) and the model's
routes (`bridge.turns.model_routes`) share these: the progress is the turn's one mutable
record, `TurnDropped` the one way out of a turn that cannot complete.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge.providers.events import Failed
from bridge.providers.items import Item
from bridge.turns.failure_lines import PROVIDER_FAILURE
from bridge.turns.listen import OverheardLine
from bridge.turns.loop_breaker import LoopDetected
from bridge.turns.turn_ledger import TurnLedger


class TurnDropped(Exception):
    """The turn cannot complete. ``reason`` is the whole story (for the audit log); the player
    sees ``shown`` in the ``key`` line. ``failure`` is the provider's last failure when the
    model requests were what failed."""

    def __init__(
        self,
        reason: str,
        *,
        key: str = PROVIDER_FAILURE,
        shown: str | None = None,
        failure: Failed | None = None,
        values: dict[str, str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.key = key
        self.shown = reason if shown is None else shown
        self.failure = failure
        self.values = values
        """The ``key`` line's own values, instead of ``{"reason": shown}``."""


def stop_for_loop(detected: LoopDetected | None) -> None:
    """A loop the breaker saw drops the turn with the breaker's own line."""
    if detected is not None:
        raise TurnDropped(detected.reason, key=detected.message_key, values=detected.values())


@dataclass(slots=True)
class TurnProgress:
    items: list[Item]
    ledger: TurnLedger
    """What the turn's requests cost."""
    rounds: int = 0
    tool_calls: int = 0
    reply: str = ""
    ended: bool = False
    overheard: tuple[OverheardLine, ...] = ()
    """The overheard lines this turn carries, handed on when it does not complete."""
    route: int = 0
    """Which of the snapshot's routes (the model, then its fallbacks) the turn is on: once a
    fallback answered, the rest of the turn stays with it."""
    began: float = 0.0
    """When the turn started (the engine's monotonic clock), for the metrics."""
    compacted: bool = False
    """The session was compacted for this turn's context overflow (once per turn)."""
    question: str = ""
    """The question as the turn asks it (redacted), for automatic recall."""
    recalled: tuple[Item, ...] = ()
    """The memories recalled for this turn: in its requests, never in its session."""
    ask: str | None = None
    """The plugin's id of the question (protocol 1.5, ``asks``), archived with the turn."""
