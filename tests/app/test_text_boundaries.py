"""Unpaired surrogates from a real local SSE provider never reach the session, the archive, the
audit log or a later request; the turn that brought them completes and later turns still work.

JSON may escape half a surrogate pair on its own (``"\\ud800"``); Python decodes that into a
string no UTF-8 encoder takes. Before the fix such text entered the session and every later
request of the session failed to encode; a tool name holding one made the audit writer fail
for good, and every later turn was refused with "internal error".
"""

from __future__ import annotations

import json
from typing import Any

from providers.provider_replay_server import Reply

from .conftest import ALEX, App
from .scripted_provider import sse, text_chunks

LONE = "\ud800"
LOW = "\udfff"


def has_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def tool_call(name: str, arguments: str) -> list[bytes]:
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": name, "arguments": arguments}  # type: ignore[assignment]
    return sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )


def reasoning_then_text(reasoning: str, *parts: str) -> list[bytes]:
    first = {"choices": [{"index": 0, "delta": {"reasoning_content": reasoning}}]}
    return sse(first)[:-1] + text_chunks(*parts)


async def test_lone_surrogates_in_text_reasoning_and_tool_calls_are_replaced(app: App) -> None:
    # json.dumps writes each lone surrogate as an escape: valid bytes on the wire.
    app.provider.script(Reply(chunks=tool_call(f"look{LONE}", json.dumps({"q": f"a{LOW}b"}))))
    app.provider.script(
        Reply(chunks=reasoning_then_text(f"think {LOW}", f"Hi {LONE}", f"there{LOW}!"))
    )
    verdict = await app.chat("@ai hello")
    assert verdict.decision == "accept"
    await app.turn_done()
    reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
    assert reply.text.model == {"message": "Hi \ufffdthere\ufffd!"}
    bars = app.link.of("output.actionbar")
    assert bars and not any(has_surrogate(bar.text.values) for bar in bars)

    turns = app.runtime.session.state.turns
    assert len(turns) == 1
    items = [item.model_dump(mode="json") for item in turns[0].items]
    assert not has_surrogate(items)
    assert "look\ufffd" in json.dumps(items, ensure_ascii=False)
    archived = app.runtime.archive.all_turns()
    assert [turn.turn_id for turn in archived] == [turns[0].turn_id]
    assert not has_surrogate(list(archived[0].items))

    # The next turn of the same session is sent, and what it replays is valid UTF-8.
    app.provider.answer("Fine.")
    await app.chat("@ai again", player=ALEX)
    await app.turn_done()
    assert len(app.provider.requests) == 3
    body = app.provider.requests[-1].body
    replayed = json.loads(body.decode("utf-8", "strict"))
    assert "Hi \ufffdthere\ufffd!" in json.dumps(replayed, ensure_ascii=False)
    assert not has_surrogate(replayed)
    assert len(app.runtime.session.state.turns) == 2

    app.runtime.audit.flush()
    ends = [e.fields["outcome"] for e in app.runtime.audit.events("turn.end")]
    assert ends == ["completed", "completed"]
    (call,) = app.runtime.audit.events("tool.call")
    assert call.fields["name"] == "look\ufffd"


async def test_a_tool_named_with_a_lone_surrogate_leaves_later_turns_working(app: App) -> None:
    # The case: a model call whose name (here the tool's) is "\ud800" alone.
    app.provider.script(Reply(chunks=tool_call(LONE, json.dumps({"name": LONE}))))
    app.provider.answer("No such tool.")
    await app.chat("@ai call it")
    await app.turn_done()
    for question in ("@ai one", "@ai two"):
        app.provider.answer("Still here.")
        verdict = await app.chat(question)
        assert verdict.decision == "accept", verdict
        await app.turn_done()
    app.runtime.audit.flush()
    ends = [e.fields["outcome"] for e in app.runtime.audit.events("turn.end")]
    assert ends == ["completed"] * 3
    assert len(app.runtime.archive.all_turns()) == 3
    (call,) = app.runtime.audit.events("tool.call")
    assert call.fields["name"] == "\ufffd"


async def test_an_audit_record_with_a_lone_surrogate_keeps_its_evidence_through_redaction(
    app: App,
) -> None:
    # A Function's JavaScript string can hold half a pair; the serving audit log redacts every
    # record with the control plane's redactor (RE2, UTF-8 only) before it writes it.
    app.runtime.audit.record("function.end", {"name": f"f{LONE}", "player": "Steve"})
    app.provider.answer("Still here.")
    assert (await app.chat("@ai hi")).decision == "accept"
    await app.turn_done()
    app.runtime.audit.flush()
    (stored,) = app.runtime.audit.events("function.end")
    assert stored.fields == {"name": "f\\ud800", "player": "Steve"}
    assert [e.fields["outcome"] for e in app.runtime.audit.events("turn.end")] == ["completed"]
