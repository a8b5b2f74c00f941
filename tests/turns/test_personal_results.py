"""Tool results about one player are seen only by the turn that made them: every later request
replays the call with a withheld note, whoever asks, so the history is the same bytes for all."""

from __future__ import annotations

import json
from typing import Any

from bridge.control.yaml_strict import load_strict_yaml
from bridge.providers.items import AssistantText, PlayerMessage, ToolCall, ToolResult
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.turns.compaction import transcript
from bridge.turns.ports import PlayerRef
from bridge.turns.session import CompletedTurn, PublicSession

from .conftest import Harness, make_snapshot
from .fakes import STEVE, ScriptedModel, answer, tool_calls

GUEST = PlayerRef(uuid="00000000-0000-0000-0000-000000000003", name="Guest")

SNAPSHOT = json.dumps(
    {"ok": True, "result": {"position": [120, 64, -35], "health": 7, "items": ["Diamond Sword"]}}
)
LIST = json.dumps({"ok": True, "result": {"players": ["Steve", "Guest"]}})


def steves_turn() -> CompletedTurn:
    return CompletedTurn(
        "t-1",
        "Steve",
        (
            PlayerMessage(player="Steve", text="where am I?"),
            ToolCall(call_id="c1", name="player_snapshot", arguments="{}"),
            ToolResult(call_id="c1", output=SNAPSHOT, personal=True),
            ToolCall(call_id="c2", name="online_players", arguments="{}"),
            ToolResult(call_id="c2", output=LIST),
            AssistantText(text="You are near spawn."),
        ),
    )


def outputs(items: tuple[object, ...]) -> list[str]:
    return [item.output for item in items if isinstance(item, ToolResult)]


def session_with(*turns: CompletedTurn) -> PublicSession:
    session = PublicSession(id_factory=lambda: "s-1")
    for turn in turns:
        assert session.publish(turn, session_id="s-1")
    return session


def test_later_turns_see_the_call_but_not_what_it_returned() -> None:
    session = session_with(steves_turn())
    items = session.projection(240).items
    calls = [item.name for item in items if isinstance(item, ToolCall)]
    assert calls == ["player_snapshot", "online_players"]
    withheld, shared = outputs(items)
    assert shared == LIST
    assert "120" not in withheld and "Diamond Sword" not in withheld and "health" not in withheld
    assert "withheld" in withheld and "Steve" in withheld
    # Every call still has its result, so the request stays valid for both protocols.
    results = [item.call_id for item in items if isinstance(item, ToolResult)]
    assert results == ["c1", "c2"]


def test_withholding_never_changes_the_session_itself() -> None:
    session = session_with(steves_turn())
    session.projection(240)
    assert outputs(session.state.turns[0].items) == [SNAPSHOT, LIST]


def test_later_turns_keep_the_rule_as_the_session_grows() -> None:
    guest = CompletedTurn(
        "t-2",
        "Guest",
        (PlayerMessage(player="Guest", text="hi"), AssistantText(text="Hello Guest.")),
    )
    session = session_with(steves_turn(), guest)
    session.publish(steves_turn(), session_id="s-1")
    replayed = outputs(session.projection(240).items)
    assert SNAPSHOT not in replayed and replayed.count(LIST) == 2


def test_the_compaction_transcript_leaves_personal_results_out() -> None:
    text = transcript([steves_turn()], None)
    assert "Diamond Sword" not in text and "120" not in text
    assert "(about Steve; not kept in the summary)" in text
    assert "Guest" in text  # the shared result stays


TOOLS_YML = """\
schema: 1
tools:
  player_snapshot:
    handler: player_snapshot
    description: Look at the asking player.
    parameters: {type: object}
  online_players:
    handler: online_players
    description: Who is online.
    parameters: {type: object}
"""


def invoker_of_both() -> ToolInvoker:
    async def snapshot(arguments: dict[str, Any], context: CallContext) -> Any:
        return {"player": context.player_name, "position": [120, 64, -35], "health": 7}

    async def online(arguments: dict[str, Any], context: CallContext) -> Any:
        return {"players": ["Steve", "Guest"]}

    document = load_strict_yaml(TOOLS_YML.encode(), "tools.yml")
    registry, _ = ToolRegistry.from_document(
        document, {"player_snapshot": snapshot, "online_players": online}
    )
    return ToolInvoker(
        registry.for_player(frozenset()),
        cooldowns=Cooldowns(cooldown_ms=0),
        redactor=Redactor(),
        audit=MemoryAudit(),
    )


async def test_a_public_turn_that_took_a_personal_result_is_the_askers_alone(
    harness: Harness,
) -> None:
    invoker = invoker_of_both()
    model = ScriptedModel(
        [
            tool_calls(("c1", "player_snapshot", "{}"), ("c2", "online_players", "{}")),
            answer("You are at 120 64 -35, Steve."),
            answer("Hello Guest."),
            tool_calls(("c3", "online_players", "{}")),
            answer("Steve and Guest are online."),
            answer("Noted."),
        ]
    )
    snap = make_snapshot(model, runner=invoker, tools=invoker.tools.specs)
    outcome = await harness.run(snap, "where am I?", STEVE)
    assert outcome.status == "completed"
    # The answer carried the snapshot: it reached Steve alone, and nothing of the turn is in
    # the shared session Guest's requests replay (the archive keeps it, as every turn).
    assert harness.output.asker_replies == [("Steve", "You are at 120 64 -35, Steve.")]
    assert harness.output.replies == []
    assert harness.session.state.turns == ()
    assert [turn.turn_id for turn in harness.archive.turns] == [outcome.turn_id]
    ended = [fields for kind, fields in harness.audit.events if kind == "turn.end"]
    assert ended[-1]["outcome"] == "completed_for_asker"

    await harness.run(snap, "where is Steve?", GUEST)
    guest_request = json.dumps([item.model_dump() for item in model.requests[2].items])
    assert "-35" not in guest_request and "player_snapshot" not in guest_request
    assert harness.output.replies == [("Guest", "Hello Guest.")]

    # A turn with shared results only is everyone's, as before.
    await harness.run(snap, "who is online?", STEVE)
    assert harness.output.replies[-1] == ("Steve", "Steve and Guest are online.")
    await harness.run(snap, "ok", GUEST)
    assert "Steve and Guest are online." in json.dumps(
        [item.model_dump() for item in model.requests[5].items]
    )
