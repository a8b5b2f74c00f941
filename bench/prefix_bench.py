"""How much of each model request repeats the previous one's start, and what a turn sends.

Providers cache the work done on the start of a request (tools, then instructions, then the
conversation) and charge less for input tokens they find again at the start of the next one.
A scripted 50-turn public conversation (three players taking turns, personal snapshots, shared
tool results, a compaction when the history passes the model's trigger) runs through the real
turn engine, session, compaction and Chat Completions request builder. For each request it
measures the share of its bytes, in the order providers cache them, that equals the start of
the previous request of the conversation (goal: at least 95 %).

The baseline, computed in the same run from the same turns, is what resending the whole
history without compaction (every earlier turn in full, every round) would send: the input
tokens per turn are shown against it, with the part a prompt cache would serve counted apart.
Tokens are the bridge's estimate (about four characters a token), the same for both sides.

Run: ``python -m bench.prefix_bench [--turns 50]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from bridge.providers.chat_completions.request import build_body
from bridge.providers.events import Completed, StreamEvent
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import (
    AssistantText,
    Item,
    PlayerMessage,
    ProviderRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from bridge.providers.settings import ModelSettings
from bridge.store.archive import ArchivedTurn
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.activity import ServerActivity
from bridge.turns.compaction import SUMMARY_INSTRUCTIONS, Compactor
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.persona import with_persona
from bridge.turns.ports import PlayerRef, TurnContext, TurnLimits, TurnSnapshot
from bridge.turns.session import PublicSession

GOAL = 0.95
PLAYERS = (
    PlayerRef(uuid="00000000-0000-0000-0000-000000000001", name="Steve"),
    PlayerRef(uuid="00000000-0000-0000-0000-000000000002", name="Alex"),
    PlayerRef(uuid="00000000-0000-0000-0000-000000000003", name="Guest"),
)
INSTRUCTIONS = "\n".join(
    f"Rule {n}: answer briefly and kindly; never promise what the server does not allow; "
    "prefer the tools to guessing about the world."
    for n in range(1, 25)
)
OBJECT = {"type": "object", "properties": {}, "additionalProperties": False}
TOOLS = (
    ToolSpec(
        name="player_snapshot",
        description="Position, health and items of the asking player.",
        parameters=OBJECT,
    ),
    ToolSpec(name="online_players", description="Who is online now.", parameters=OBJECT),
    ToolSpec(
        name="run_command",
        description="Run a whitelisted server command, or ask a player to confirm one.",
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "intent": {"type": "string"},
                "player": {"type": "string"},
            },
            "required": ["command", "intent", "player"],
            "additionalProperties": False,
        },
    ),
)
TRIGGER_TOKENS = 2500
"""The model's compaction trigger: about thirty turns of this conversation."""
IDENTITY = IdentitySettings()
MODEL = ModelSettings(wire_model="bench-model", prompt_cache_key=True)


def tool_for(turn: int) -> str | None:
    """The scripted conversation: which tool the model calls first in turn `turn`, if any."""
    if turn % 3 == 1:
        return "player_snapshot"
    if turn % 5 == 0:
        return "online_players"
    return None


@dataclass
class Model:
    """Answers like a model would, by the request: a summary, a tool call, or a reply."""

    requests: list[ProviderRequest] = field(default_factory=list)
    turn: int = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if request.instructions == SUMMARY_INSTRUCTIONS:
            text = "Players asked about their positions and who is online; all was answered. " * 4
            yield Completed(items=(AssistantText(text=text),))
            return
        last = request.items[-1]
        name = tool_for(self.turn)
        if isinstance(last, PlayerMessage) and name is not None:
            yield Completed(items=(ToolCall(call_id=f"c{self.turn}", name=name, arguments="{}"),))
            return
        reply = f"Turn {self.turn}: here is a short answer about the world and what you asked. " * 3
        yield Completed(items=(AssistantText(text=reply.strip()),))


class Tools:
    def side_effect_free(self, name: str) -> bool:
        return name != "run_command"

    async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
        if call.name == "player_snapshot":
            output = json.dumps(
                {"ok": True, "result": {"player": context.player.name, "position": [12, 64, -3]}}
            )
            # Not marked personal: a public turn that took a personal result now stays out of the
            # shared session (issue 44), and this bench measures what the session replays.
            return ToolResult(call_id=call.call_id, output=output)
        output = json.dumps({"ok": True, "result": {"players": [p.name for p in PLAYERS]}})
        return ToolResult(call_id=call.call_id, output=output)


class Archive:
    def append(self, turn: ArchivedTurn) -> None:
        pass


class Output:
    async def action_bar(self, player: PlayerRef, text: str) -> None:
        pass

    async def action_bar_line(
        self, player: PlayerRef, message_key: str, values: dict[str, str]
    ) -> None:
        pass

    async def reply(self, player: PlayerRef, lines: Sequence[str]) -> None:
        pass

    async def reply_to_asker(self, player: PlayerRef, lines: Sequence[str]) -> None:
        pass

    async def failure(self, player: PlayerRef, message_key: str, values: dict[str, str]) -> None:
        pass


def prompt_bytes(request: ProviderRequest) -> bytes:
    """The request as a provider's cache reads it: tools, then instructions and messages."""
    body = build_body(request, MODEL, IDENTITY)
    parts = [json.dumps(body.get("tools", []), ensure_ascii=False)]
    parts += [json.dumps(message, ensure_ascii=False) for message in body["messages"]]
    return "\n".join(parts).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    size = min(len(a), len(b))
    low, high = 0, size
    while low < high:  # the longest equal start, by halving (bytes compare in C)
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def tokens(size: int) -> int:
    return -(-size // 4)


async def run(
    turns: int,
    *,
    max_messages: int = 240,
    trigger: int | None = TRIGGER_TOKENS,
    persona: str | None = None,
) -> tuple[list[tuple[int, ProviderRequest]], dict[int, tuple[Item, ...]]]:
    """The conversation's requests, each with its turn number, and each turn's items;
    ``persona``: the lane's persona, placed as the bridge places it (`with_persona`)."""
    session = PublicSession()
    audit = MemoryAudit()
    activity = ServerActivity()
    compactor = Compactor(session=session, activity=activity, audit=audit)
    engine = TurnEngine(
        session=session,
        archive=Archive(),
        audit=audit,
        output=Output(),
        activity=activity,
        after_turn=[compactor.after_turn],
    )
    model = Model()
    snapshot = TurnSnapshot(
        control_version="1",
        model_ref="bench/model",
        stream=model.stream,
        instructions=INSTRUCTIONS,
        tools=TOOLS,
        tool_runner=Tools(),
        limits=TurnLimits(max_messages=max_messages),
        compaction_trigger_tokens=trigger,
    )
    snapshot = with_persona(snapshot, persona)
    numbered: list[tuple[int, ProviderRequest]] = []
    completed: dict[int, tuple[Item, ...]] = {}
    for turn in range(1, turns + 1):
        model.turn = turn
        first = len(model.requests)
        player = PLAYERS[turn % len(PLAYERS)]
        question = f"question {turn} from {player.name}: what about this part of the world?"
        outcome = await engine.start(TurnRequest(player, question), snapshot)
        assert outcome.status == "completed", outcome
        running = compactor.running
        if running is not None:
            await running
        numbered += [(turn, request) for request in model.requests[first:]]
        completed[turn] = session.state.turns[-1].items
    return numbered, completed


def whole_history_tokens(
    turn_requests: list[tuple[int, ProviderRequest]], completed: dict[int, tuple[Item, ...]]
) -> dict[int, int]:
    """Input tokens per turn when every round resends every earlier turn in full, uncompacted
    and with nothing withheld: the history as it happened, then the round's own items."""
    per_turn: dict[int, int] = {}
    for turn, request in turn_requests:
        if request.instructions == SUMMARY_INSTRUCTIONS:
            continue
        history = [item for earlier in range(1, turn) for item in completed[earlier]]
        # The round's own items: from the turn's question on (the last player message).
        start = max(
            n
            for n, item in enumerate(request.items)
            if isinstance(item, PlayerMessage) and item.player is not None
        )
        whole = request.model_copy(update={"items": (*history, *request.items[start:])})
        per_turn[turn] = per_turn.get(turn, 0) + tokens(len(prompt_bytes(whole)))
    return per_turn


def report(
    title: str,
    turns: int,
    requests: list[tuple[int, ProviderRequest]],
    completed: dict[int, tuple[Item, ...]],
) -> float:
    """Print one scenario's figures; the median share of the previous request's start."""
    conversation = [(t, r) for t, r in requests if r.instructions != SUMMARY_INSTRUCTIONS]
    summaries = len(requests) - len(conversation)
    shares: list[float] = []
    turn_starts: list[float] = []
    sent: dict[int, int] = {}
    uncached: dict[int, int] = {}
    previous: bytes | None = None
    seen_turn = 0
    for turn, request in conversation:
        data = prompt_bytes(request)
        shared = common_prefix(previous, data) if previous is not None else 0
        if previous is not None:
            shares.append(shared / len(data))
            if turn != seen_turn:
                turn_starts.append(shared / len(data))
        sent[turn] = sent.get(turn, 0) + tokens(len(data))
        uncached[turn] = uncached.get(turn, 0) + tokens(len(data) - shared)
        previous, seen_turn = data, turn

    whole = whole_history_tokens(requests, completed)
    below = [s for s in shares if s < GOAL]
    print(f"== {title}")
    print(f"{turns} turns, {len(conversation)} model requests, {summaries} compaction(s)")
    mean, median = statistics.mean(shares), statistics.median(shares)
    print(
        f"share of each request repeating the previous one's start: mean {mean:.1%},"
        f" median {median:.1%}, lowest {min(shares):.1%}; {len(below)} of {len(shares)}"
        f" below {GOAL:.0%}"
    )
    print(
        f"  first request of each turn (after the previous turn): mean"
        f" {statistics.mean(turn_starts):.1%}, median {statistics.median(turn_starts):.1%}"
    )
    total_sent = sum(sent.values())
    total_whole = sum(whole.values())
    total_uncached = sum(uncached.values())
    print(
        f"input tokens per turn: {total_sent / turns:,.0f} sent"
        f" ({total_uncached / turns:,.0f} not repeating the previous request's start)"
        f" against {total_whole / turns:,.0f} resending the whole history uncompacted:"
        f" {total_sent / total_whole:.2f}x sent, {total_uncached / total_whole:.2f}x uncached"
    )
    last = range(turns - 9, turns + 1)
    last_sent = sum(sent[t] for t in last) / len(last)
    last_whole = sum(whole[t] for t in last) / len(last)
    print(
        f"  last 10 turns: {last_sent:,.0f} sent against {last_whole:,.0f}"
        f" ({last_sent / last_whole:.2f}x)"
    )
    return median


PERSONA = (
    "You are Captain Redbeard, a cheerful pirate who has sailed every ocean of this world."
    " Call every player matey, end answers with a short sea shanty line, and never break"
    " character, even when you explain crafting or commands. "
) * 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    turns = parser.parse_args().turns
    medians = [
        report(
            "compaction past the trigger, the default message window",
            turns,
            *asyncio.run(run(turns)),
        ),
        report(
            "no compaction, a full message window (context.max_messages: 48)",
            turns,
            *asyncio.run(run(turns, max_messages=48, trigger=None)),
        ),
        report(
            "compaction past the trigger, with a persona (config.yml persona.public)",
            turns,
            *asyncio.run(run(turns, persona=PERSONA)),
        ),
    ]
    print(
        "(estimated tokens, about 4 characters each; the machine is shared but nothing here"
        " is timed)"
    )
    if min(medians) < GOAL:
        raise SystemExit(f"a median share is below the goal of {GOAL:.0%}")


if __name__ == "__main__":
    main()
