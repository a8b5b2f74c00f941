"""Token estimates for the session: cheap character counts, calibrated by provider usage.

The estimate is about four characters per token plus a small overhead per item. When a
provider reports the real input tokens of a request, the ratio between report and estimate
moves a calibration factor (a moving average, clamped to 0.25-4), so the compaction trigger
follows the model's real tokenizer without the bridge shipping one.
"""

from __future__ import annotations

from collections.abc import Iterable

from bridge.providers.items import (
    AssistantText,
    Item,
    PlayerMessage,
    Reasoning,
    ToolCall,
    ToolResult,
)

CHARS_PER_TOKEN = 4
ITEM_OVERHEAD_TOKENS = 4
_SMOOTHING = 0.3
_MIN_FACTOR = 0.25
_MAX_FACTOR = 4.0


def _item_chars(item: Item) -> int:
    if isinstance(item, PlayerMessage):
        return len(item.text) + len(item.player or "")
    if isinstance(item, AssistantText | Reasoning):
        return len(item.text)
    if isinstance(item, ToolCall):
        return len(item.name) + len(item.arguments)
    if isinstance(item, ToolResult):
        return len(item.output)
    raise TypeError(f"not a conversation item: {type(item).__name__}")


def raw_tokens_of_text(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def raw_tokens(items: Iterable[Item]) -> int:
    """The uncalibrated estimate for `items`."""
    return sum(-(-_item_chars(i) // CHARS_PER_TOKEN) + ITEM_OVERHEAD_TOKENS for i in items)


class TokenCalibration:
    """Turns raw estimates into calibrated ones, learning from provider usage reports."""

    def __init__(self, factor: float = 1.0) -> None:
        self._factor = factor

    @property
    def factor(self) -> float:
        return self._factor

    def calibrated(self, raw: int) -> int:
        return round(raw * self._factor)

    def observe(self, *, raw_estimate: int, reported_input_tokens: int) -> None:
        """Learn from one request whose raw estimate and reported input size are known."""
        if raw_estimate <= 0 or reported_input_tokens <= 0:
            return
        ratio = min(_MAX_FACTOR, max(_MIN_FACTOR, reported_input_tokens / raw_estimate))
        blended = (1 - _SMOOTHING) * self._factor + _SMOOTHING * ratio
        self._factor = min(_MAX_FACTOR, max(_MIN_FACTOR, blended))
