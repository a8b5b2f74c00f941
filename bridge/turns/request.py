"""Building one model request of a turn from the session's projection and the turn's items.

The summary of compacted turns travels in the instructions, after ``AGENTS.md``, so it never
poses as something a player said.
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge.providers.items import Item, ProviderRequest
from bridge.turns.ports import TurnSnapshot
from bridge.turns.session import ContextProjection
from bridge.turns.tokens import raw_tokens, raw_tokens_of_text

SUMMARY_HEADING = "Summary of the earlier public conversation (written by you):"


def instructions_for(agents_md: str | None, summary: str | None) -> str | None:
    parts = [part for part in (agents_md, summary and f"{SUMMARY_HEADING}\n{summary}") if part]
    return "\n\n".join(parts) if parts else None


def build_request(
    snapshot: TurnSnapshot,
    projection: ContextProjection,
    turn_items: Sequence[Item],
    *,
    offer_tools: bool,
) -> tuple[ProviderRequest, int]:
    """The request and its raw token estimate (for calibration against reported usage)."""
    instructions = instructions_for(snapshot.instructions, projection.summary)
    # Every part is already a validated item or spec; re-validating up to a full history of
    # items on every round would be the largest cost of a turn outside the provider.
    request = ProviderRequest.model_construct(
        session_id=projection.session_id,
        instructions=instructions,
        items=(*projection.items, *turn_items),
        tools=snapshot.tools if offer_tools else (),
        native_tools=snapshot.native_tools if offer_tools else (),
        tool_choice="auto",
        parallel_tool_calls=None,
    )
    estimate = raw_tokens_of_text(instructions or "")
    estimate += projection.raw_tokens - raw_tokens_of_text(projection.summary or "")
    estimate += raw_tokens(turn_items)
    return request, estimate
