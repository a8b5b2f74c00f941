"""The scripted offline model: its fixed answers, and its wire (real HTTP on loopback)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from bridge.playground.scripted_model import (
    HELP,
    LABEL,
    ScriptedModelServer,
    choose,
    sse_body,
    wire_note,
)
from bridge.turns.reply_layout import ELLIPSIS, ReplyLayout, layout_reply


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {}}}


def asked(text: str, *offered: str) -> dict[str, Any]:
    return {
        "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": text}],
        "tools": [tool(name) for name in offered],
    }


def test_a_keyword_calls_its_tool_when_it_is_offered() -> None:
    script = choose(asked("Steve: where am I?", "player_snapshot", "run_command"))
    assert script.call is not None and script.call.name == "player_snapshot"
    day = choose(asked("make it day please", "run_command"))
    assert day.call is not None and day.call.arguments["command"] == "time set day"
    confirm = choose(asked("ask me first", "ask_player"))
    assert confirm.call is not None and confirm.call.name == "ask_player"


def test_a_command_for_another_player_keeps_the_name_as_typed() -> None:
    script = choose(asked("Steve: please make Alex_2 wave", "run_command"))
    assert script.call is not None
    assert script.call.arguments == {
        "command": "me waves",
        "intent": "wave hello",
        "player": "Alex_2",
    }


def test_a_failing_provider_is_a_status_not_an_answer() -> None:
    assert choose(asked("provider 429 please", "run_command")).status == 429
    assert choose(asked("Provider 500")).status == 500


def test_a_tool_not_offered_is_not_called_and_the_answer_says_so() -> None:
    script = choose(asked("where am I", "run_command"))
    assert script.call is None
    assert script.text is not None and script.text.startswith(LABEL)
    assert "player_snapshot" in script.text and "not offered" in script.text


def test_anything_else_gets_the_labelled_list_of_what_it_can_do() -> None:
    assert choose(asked("hello")).text == HELP
    assert HELP.startswith(LABEL)
    assert choose({}).text == HELP  # no messages at all


def test_a_tool_result_is_answered_with_a_labelled_summary() -> None:
    result = {"tool": "ask_player", "ok": True, "result": {"status": "answered", "answer": "yes"}}
    body = {
        "messages": [
            {"role": "user", "content": "ask me first"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "ask_player"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
        ]
    }
    script = choose(body)
    assert script.text == f'{LABEL} ask_player said: your answer was "yes"'
    assert wire_note(body, script) == [f"model read the tool result: {json.dumps(result)}"]


def test_a_refused_call_is_summarised_by_its_code() -> None:
    refused = {"tool": "run_command", "ok": False, "error_code": "cooldown", "message": "wait"}
    body = {
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "x"}}]},
            {"role": "tool", "tool_call_id": "c", "content": json.dumps(refused)},
        ]
    }
    assert choose(body).text == f"{LABEL} x said: the bridge answered cooldown: wait"


def test_the_stream_is_chat_completions_with_usage_and_done() -> None:
    script = choose(asked("who is online", "online_players"))
    events = [
        line.removeprefix("data: ") for line in sse_body(script, 400).decode().split("\n\n") if line
    ]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
    assert call["function"]["name"] == "online_players"
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"]["prompt_tokens"] == 100


async def test_the_server_answers_chat_completions_and_refuses_the_rest() -> None:
    notes: list[str] = []
    server = ScriptedModelServer(notes.append)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            answer = await client.post(
                "/chat/completions", json=asked("where am I", "player_snapshot")
            )
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "text/event-stream"
            assert '"player_snapshot"' in answer.text and answer.text.endswith("[DONE]\n\n")
            assert notes == ["model asked for player_snapshot {}"]
            failing = await client.post("/chat/completions", json=asked("provider 429"))
            assert failing.status_code == 429
            assert LABEL in failing.json()["error"]["message"]
            other = await client.get("/embeddings")
            assert other.status_code == 404
            # GET /models lists the one model: the status probe's question.
            assert (await client.get("/models")).status_code == 200
            broken = await client.post("/chat/completions", content=b"[1, 2")
            assert broken.status_code == 400
            not_object = await client.post("/chat/completions", content=b"[1, 2]")
            assert not_object.status_code == 400
    finally:
        await server.close()


def answered(tool_name: str, result: dict[str, Any]) -> str:
    """The scripted model's text after ``tool_name`` returned ``result`` (the envelope)."""
    body = {
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": tool_name}}]},
            {
                "role": "tool",
                "tool_call_id": "c",
                "content": json.dumps({"tool": tool_name, "ok": True, "result": result}),
            },
        ]
    }
    text = choose(body).text
    assert text is not None
    return text


def test_the_snapshot_tools_results_are_said_in_words_not_json() -> None:
    # who is online, what am I holding, what block is that: the answer was the raw JSON, cut.
    assert answered("online_players", {"count": 2, "players": ["Alex", "Steve"]}).endswith(
        "online_players said: online: Alex, Steve"
    )
    items = [
        {"slot": "main_hand", "type": "minecraft:iron_pickaxe", "amount": 1},
        {"slot": "0", "type": "minecraft:bread", "amount": 5},
    ]
    held = answered("item_inspect", {"items": items, "truncated": False})
    assert held.endswith("you hold 1 minecraft:iron_pickaxe (main_hand), 5 minecraft:bread (0)")
    block = {"type": "minecraft:oak_log", "position": {"x": 12, "y": 64, "z": -30}}
    looked = answered("block_inspect", {"result": "hit", "block": block})
    assert looked.endswith("you look at minecraft:oak_log at x=12 y=64 z=-30")


def test_recall_says_the_kept_note_and_only_counts_earlier_conversations() -> None:
    # The conversation entry held the whole help text, which buried the note asked about.
    memories = [
        {"id": "m1", "scope": "personal", "text": "my base is at the river"},
        {"id": "t1", "scope": "conversation", "text": "Steve: hello assistant: " + HELP},
    ]
    said = answered("recall", {"memories": memories})
    assert said.endswith(
        "recall said: I remember: my base is at the river (and 1 entry of earlier conversations)"
    )
    assert "fixed set" not in said
    assert answered("recall", {"memories": []}).endswith("I remember: nothing kept about that")


def test_the_help_fits_the_replys_lines_also_after_a_personas_opening() -> None:
    # The help ran past chat.reply_max_lines (8 lines of 60): its last demos were cut with "…".
    persona = '## Persona\n\nYou are a cheerful pirate. Call every player "matey". Answer each.'
    body = {
        "messages": [
            {"role": "system", "content": persona},
            {"role": "user", "content": "hello"},
        ]
    }
    text = choose(body).text
    assert text is not None and text.startswith(f"{LABEL} (speaking as the persona: You are a")
    for reply in (HELP, text):
        lines = layout_reply(reply, ReplyLayout())
        assert not lines[-1].endswith(ELLIPSIS), lines
        assert " ".join(lines).endswith("then /ai hello."), lines
