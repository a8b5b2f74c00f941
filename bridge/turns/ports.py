"""The small interfaces the turn engine drives, and the snapshot a turn fixes when it starts.

The engine knows nothing of sockets, HTTP or SQLite: the link glue supplies a `TurnOutput`, the
provider client is bound into a `ModelStream`, the tool registry supplies a `ToolRunner`, and
the archive is anything with `append`. Tests plug in scripted fakes.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bridge.providers.events import StreamEvent
from bridge.providers.items import ProviderRequest, ToolCall, ToolResult, ToolSpec
from bridge.providers.settings import RetryPolicy
from bridge.store.archive import ArchivedTurn
from bridge.store.usage import UsageDetail
from bridge.turns.reply_layout import ReplyLayout

if TYPE_CHECKING:
    from bridge.redaction import Redactor


@functools.cache
def builtin_redactor() -> Redactor:
    """The built-in rules alone, for a snapshot built without a control plane (tests)."""
    from bridge.redaction import Redactor  # imported late: bridge.tools imports this

    return Redactor()


ModelStream = Callable[[ProviderRequest], AsyncIterator[StreamEvent]]
"""One model of one provider, bound at turn start: for the real client,
``functools.partial(client.stream, model=model_settings)``. Every stream ends with one
``Completed`` or ``Failed`` event."""


@dataclass(frozen=True, slots=True)
class PlayerRef:
    """The asking player. The uuid addresses output; only the name reaches the model."""

    uuid: str
    name: str


PUBLIC_LANE = "public"
"""The lane id of the public session; a private lane's id is ``ai-`` and a digest of its player
(`bridge.turns.lanes.private_lane_id`)."""


@dataclass(frozen=True, slots=True)
class TurnContext:
    """Who a turn is for and where it runs. ``lane_id`` and ``player.uuid`` let what counts
    across lanes (cooldowns, budgets) tell a player's public and private turns apart and add
    them up. ``round``: which tool round of the turn a call belongs to (1 for the calls of the
    model's first reply; 0 outside a round). The calls of one reply share a round."""

    turn_id: str
    session_id: str
    player: PlayerRef
    round: int = 0
    lane_id: str = PUBLIC_LANE


class ToolRunner(Protocol):
    """Runs one tool call of a turn and returns its result (an error is a result too).

    It may raise `bridge.errors.ToolError`; the engine turns that into an error result. The
    runner records its own dispatches and approvals in the audit log."""

    async def run(self, call: ToolCall, context: TurnContext) -> ToolResult: ...

    def side_effect_free(self, name: str) -> bool:
        """Whether a call of the tool ``name`` changes nothing (a read), so the engine may run
        it alongside the other reads of the same reply. Anything else runs alone, in order."""
        ...


class TurnOutput(Protocol):
    """Where a turn's visible output goes (the link glue renders ``message.yml`` templates)."""

    async def action_bar(self, player: PlayerRef, text: str) -> None:
        """A streaming frame, model text, for the asking player only."""

    async def action_bar_line(
        self, player: PlayerRef, message_key: str, values: dict[str, str]
    ) -> None:
        """A ``message.yml`` action-bar line for the asking player (``reply.thinking``,
        ``reply.tools``); ``values`` are plain text the bridge chose, never model text."""

    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        """The final answer as the bridge laid it out (`bridge.turns.reply_layout`): each line
        is broadcast, in order, as its own chat message: the first in the ``reply.first_line``
        template, which names the asker, the others in ``reply.layout``."""

    async def reply_to_asker(self, player: PlayerRef, lines: Sequence[str]) -> None:
        """The final answer to the asking player alone (a public turn that took a personal
        result: it is theirs), each line in the ``reply.private_layout`` template."""

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        """A private line to the asking player from a ``message.yml`` template."""


@dataclass(frozen=True, slots=True)
class BudgetHold:
    """What `TurnBudget.reserve` answers: the refusal (a ``message.yml`` key and its values)
    when the request may not go, else the budget's own handle of what it holds."""

    refusal: tuple[str, dict[str, str]] | None = None
    handle: object = None
    tokens: int | None = None
    """What is held: less than asked when only ``least`` fitted; None when nothing limits."""


class TurnBudget(Protocol):
    """The token budgets a turn spends from, bound to its player's tier when it starts
    (`bridge.app` binds `bridge.policy.budgets`). Called from a worker thread.

    ``player`` None: a request no player asked for (a compaction), paid by the server alone.
    ``purpose`` names what the tokens were spent on (``turn``, ``turn.stopped``,
    ``turn.failed``, ``compaction``, ...)."""

    @property
    def tier(self) -> str:
        """The player's tier (``guest`` without one): a label of the metrics."""

    def reserve(self, player: PlayerRef | None, worst: int, least: int | None = None) -> BudgetHold:
        """Hold ``worst`` tokens (the request's prompt and its output cap) before a request,
        or refuse it; every hold that is not refused is settled or released after. With
        ``least``, a budget with room for less than ``worst`` but at least ``least`` holds
        what room it has (``BudgetHold.tokens``) instead of refusing."""

    def settle(
        self,
        hold: BudgetHold,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        """Count what the request used (``estimated``: the provider reported none) and let
        its hold go; ``detail``: the model, the tier and the tokens by kind."""

    def spend(
        self,
        player: PlayerRef | None,
        tokens: int,
        *,
        estimated: bool,
        purpose: str,
        detail: UsageDetail | None = None,
    ) -> None:
        """Count tokens of a request that held nothing."""


class MemoryRecallPort(Protocol):
    """Automatic recall before a turn (`bridge.memory.recall.MemoryRecall`, bound by
    `bridge.app`): the block of memories for the asker's question, or None. The block goes
    into this turn's requests only, never into the session or the archive."""

    async def recall(self, context: TurnContext, question: str) -> str | None: ...


class ArchiveWriter(Protocol):
    """`bridge.store.archive.TurnArchive` or a fake; called from a worker thread."""

    def append(self, turn: ArchivedTurn) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnLimits:
    """The limits a turn runs under (from ``config.yml``); defaults match its defaults."""

    max_tool_rounds: int = 8
    max_tool_calls: int = 16
    reply_max_chars: int = 1000
    action_bar_max_chars: int = 120
    reply_line_max_chars: int = 60
    reply_max_lines: int = 8
    reply_wrap: Literal["words", "anywhere"] = "words"
    max_messages: int = 240
    model_attempts: int = 3
    """Attempts per model request, the first included (the provider's ``retry.max_attempts``)."""
    max_output_tokens: int | None = None
    """A cap below the model's own (guests); None leaves the model's."""
    max_failing_rounds: int = 3
    """The loop breaker: tool rounds in a row in which every call failed."""
    max_repeated_calls: int = 3
    """The loop breaker: the same call with the same arguments, this many times in one turn."""

    @property
    def reply_layout(self) -> ReplyLayout:
        """How a reply is laid out for chat under these limits."""
        return ReplyLayout(
            max_chars=self.reply_max_chars,
            line_max_chars=self.reply_line_max_chars,
            max_lines=self.reply_max_lines,
            wrap=self.reply_wrap,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRoute:
    """One model a turn may use: its reference, its bound stream, and the retry policy (with
    the attempt budget) its provider's ``retry`` settings give."""

    model_ref: str
    stream: ModelStream
    policy: RetryPolicy = RetryPolicy()


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSnapshot:
    """Everything a turn fixes when it starts; a reload or model switch makes a new one for
    later turns and leaves this one alone.

    instructions: ``workspace/AGENTS.md``. compaction_trigger_tokens: the model's trigger
    (None: never compact automatically). tool_runner: bound to this turn's tool set and
    Function catalogue. redactor: the plane's; the reply, the action bar and the archived
    items are redacted with it, whole, before anything is cut from them.
    """

    control_version: str
    model_ref: str
    stream: ModelStream
    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    native_tools: tuple[dict[str, Any], ...] = ()
    tool_runner: ToolRunner | None = None
    limits: TurnLimits = field(default_factory=TurnLimits)
    compaction_trigger_tokens: int | None = None
    retry: RetryPolicy = RetryPolicy()
    """The provider's ``retry`` settings: the pauses between the turn's attempts."""
    fallbacks: tuple[ModelRoute, ...] = ()
    """The model's fallbacks from ``providers.yml``, in order: when the attempts at one are
    spent for a failure another provider may not share, the same turn goes on with the next."""
    redactor: Redactor = field(default_factory=builtin_redactor, repr=False)
    budget: TurnBudget | None = None
    """Where the turn's token usage is reserved and counted (None: nowhere)."""
    recall: MemoryRecallPort | None = None
    """Recalls the asker's memories before the turn's first request (None: no memory)."""
    output_cap: int | None = None
    """The model's own cap on a response's tokens (``providers.yml``): with the prompt, the
    worst case a request reserves from the budgets."""

    @property
    def routes(self) -> tuple[ModelRoute, ...]:
        """The model itself, then its fallbacks."""
        own = ModelRoute(
            model_ref=self.model_ref,
            stream=self.stream,
            policy=dataclasses.replace(self.retry, max_attempts=max(1, self.limits.model_attempts)),
        )
        return (own, *self.fallbacks)


OverflowCompaction = Callable[[TurnSnapshot], Awaitable[bool]]
"""Compacts a lane's session for a turn whose request the provider refused as too long
(`bridge.turns.compaction.Compactor.compact_for_overflow`); True when the session got shorter."""
