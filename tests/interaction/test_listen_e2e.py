"""Listen mode, replies, locales and commands end to end: the testkit JVM, ``python -m bridge
serve`` and a scripted provider, with several players at once.

Lines said during a turn reach the next request with their speakers; ``listen.when_refused``
keep and cancel; ``/mineclaw listen ignore-me`` (remembered across a bridge restart); the
action-bar frames (thinking, tool status, the last delta); both locales, the plugin's own lines
included; ``/mineclaw help`` and ``/mineclaw model list|default``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app.scripted_provider import sse, text_chunks
from providers.provider_replay_server import Reply

from .processes import BridgeProcess
from .test_turns_e2e import CHAT_ONLY, NO_COOLDOWNS, OP, REPLY_PREFIX, World, asked_by, world

pytestmark = pytest.mark.jvm

HEADING = "[Said in public chat since your last answer"
CANCEL = NO_COOLDOWNS + "listen:\n  when_refused: cancel\n"


def spoken(body: dict[str, Any]) -> list[tuple[str | None, str]]:
    """Each user message of a request as (name field, text)."""
    return [(m.get("name"), m["content"]) for m in body["messages"] if m["role"] == "user"]


async def listening(w: World, *players: tuple[str, list[str]]) -> None:
    for name, nodes in players:
        await w.add(name, nodes)
    since = w.mark()
    await w.command("Steve", "listen", "on")
    await w.testkit.wait_event(
        lambda e: e.get("event") == "link.state" and e.get("forward") == "all", since=since
    )


async def test_lines_said_during_a_turn_reach_the_next_request_with_their_speakers(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await listening(w, ("Steve", OP), ("Alex", CHAT_ONLY), ("Notch", CHAT_ONLY), ("Mute", []))
        held = w.provider.held("Let me ", "think.")
        since = w.mark()
        woken = await w.chat("Steve", "what should I build?")
        assert woken["shown"] == "[AI] <Steve> what should I build?"
        await held.streaming.wait()
        # Said while the turn runs: public, without the AI prefix, no notice to anyone.
        for player, text in (("Alex", "a castle!"), ("Notch", "no, a farm"), ("Mute", "psst")):
            said = await w.chat(player, text)
            assert (said["outcome"], said["shown"]) == ("public", f"<{player}> {text}")
        held.release.set()
        await w.message("*", "think.", since)
        assert not [m for m in w.messages(since) if m["to"] in ("Alex", "Notch", "Mute")]

        w.provider.answer("A castle with a farm.")
        await w.chat("Steve", "@ai what did they suggest?")
        reply = await w.message("*", "castle with", since)
        assert reply == asked_by("Steve") + "A castle with a farm."
        body = w.provider.bodies()[-1]
        heard = spoken(body)[-4:]
        assert heard[0][0] is None and heard[0][1].startswith(HEADING)
        assert heard[1:] == [
            ("Alex", "a castle!"),
            ("Notch", "no, a farm"),
            ("Steve", "what did they suggest?"),
        ]
        # A player without mineclaw.command.chat is never sent, not even overheard.
        assert "psst" not in json.dumps(w.provider.bodies())


async def test_cancel_mode_cancels_the_line_and_tells_only_its_sender(tmp_path: Path) -> None:
    async with world(tmp_path, CANCEL) as w:
        await listening(w, ("Steve", OP), ("Alex", CHAT_ONLY))
        held = w.provider.held("Busy ", "now.")
        since = w.mark()
        await w.chat("Steve", "Mineclaw, tell me a story")
        await held.streaming.wait()
        cancelled = await w.chat("Alex", "a castle!")
        assert (cancelled["outcome"], cancelled["shown"]) == ("cancelled", None)
        await w.message("Alex", "busy", since)
        held.release.set()
        await w.message("*", "now.", since)
        assert not [m for m in w.messages(since) if m["to"] == "Steve"]

        w.provider.answer("Once upon a time.")
        await w.chat("Steve", "@ai go on")
        await w.message("*", "Once upon", since)
        assert "a castle!" not in json.dumps(w.provider.bodies()[-1])


async def test_a_player_who_ignores_listen_mode_is_never_sent_even_after_a_restart(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await listening(w, ("Steve", OP), ("Alex", CHAT_ONLY))
        # No node needed: every player may leave their chat out.
        lines = await w.command("Alex", "listen", "ignore-me")
        assert any("no longer sent" in line for line in lines)
        said = await w.chat("Alex", "my base is at 100 64 -200")
        assert (said["outcome"], said["shown"]) == ("public", "<Alex> my base is at 100 64 -200")
        assert w.provider.requests == []

        since = w.mark()
        await w.bridge.kill()
        await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
        w.bridge = await BridgeProcess.start(w.config, port=w.port)
        await w.testkit.relinked(since)
        await listening(w)
        said = await w.chat("Alex", "still at 100 64 -200")
        assert said["shown"] == "<Alex> still at 100 64 -200"
        assert w.provider.requests == []

        assert any("again" in line for line in await w.command("Alex", "listen", "include-me"))
        w.provider.answer("Welcome back, Alex.")
        since = w.mark()
        back = await w.chat("Alex", "hello again, Mineclaw: what did I miss?")
        assert back["shown"] == "[AI] <Alex> hello again, Mineclaw: what did I miss?"
        await w.message("*", "Welcome back", since)
        assert "100 64" not in json.dumps(w.provider.bodies())


async def test_the_action_bar_shows_thinking_then_the_tools_then_the_whole_answer(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        thinking = [
            {"choices": [{"index": 0, "delta": {"reasoning_content": part}}]}
            for part in ("The player ", "wants their position.")
        ]
        call = {
            "index": 0,
            "id": "call_0",
            "type": "function",
            "function": {"name": "player_snapshot", "arguments": "{}"},
        }
        w.provider.script(
            Reply(
                chunks=sse(
                    *thinking,
                    {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                )
            )
        )
        # The last word arrives in the same breath as the rest: only the flush shows it.
        w.provider.script(Reply(chunks=text_chunks("You are ", "at spawn")))
        since = w.mark()
        await w.chat("Steve", "@ai where am I?")
        # It carries Steve's snapshot: the answer is his alone.
        await w.message("Steve", "→ you] You are at spawn", since)
        frames = [
            e["text"]
            for e in w.testkit.events[since:]
            if e.get("event") == "actionbar" and e.get("to") == "Steve"
        ]
        assert frames[0] == "Mineclaw is thinking…"
        assert "◆ player_snapshot ◆" in frames
        assert frames.index("◆ player_snapshot ◆") < len(frames) - 1
        assert frames[-1] == "Mineclaw: You are at spawn"
        assert not [f for f in frames if "wants their position" in f]


async def test_both_locales_bridge_and_plugin_lines(tmp_path: Path) -> None:
    config = NO_COOLDOWNS + "locale: zh_CN\n"
    async with world(tmp_path, config, testkit_args=("--locale", "zh_CN")) as w:
        await w.add("Steve", OP)
        await w.add("Alex", CHAT_ONLY)
        since = w.mark()
        hint = await w.chat("Alex", "@ai")
        assert hint["outcome"] == "cancelled"
        assert (
            await w.message("Alex", "请在", since) == "请在 @ai 后面写上问题，例如：@ai 怎么做床？"
        )
        help_lines = await w.command("Alex", "help")
        assert help_lines[0] == "你可以使用的 Mineclaw 命令："
        assert "/mineclaw status - 连接、模型、监听模式和会话状态" in help_lines
        status = await w.command("Alex", "status")
        assert status[0] == "连接：正常" and "监听模式：关" in status and "模型：local/m1" in status

        w.provider.answer("Bonjour !")
        await w.chat("Steve", "@ai salut")
        assert await w.message("*", REPLY_PREFIX, since) == asked_by("Steve") + "Bonjour !"
        system = "\n".join(
            m["content"] for m in w.provider.bodies()[-1]["messages"] if m["role"] == "system"
        )
        assert "language of their latest message" in system

        # The plugin's own lines, with the bridge gone.
        since = w.mark()
        await w.bridge.kill()
        await w.testkit.wait_event(lambda e: e.get("event") == "link.down", since=since)
        offline = await w.chat("Alex", "@ai 在吗")
        assert offline["outcome"] == "cancelled"
        assert await w.message("Alex", "离线", since) == "助手当前离线，你的消息没有发送。"


async def test_help_lists_what_the_sender_may_use_and_model_list_and_default(
    tmp_path: Path,
) -> None:
    async with world(tmp_path) as w:
        await w.add("Steve", OP)
        await w.add("Alex", CHAT_ONLY)
        alex = await w.command("Alex", "help")
        assert alex[0] == "Mineclaw commands you may use:"
        assert any(line.startswith("/mineclaw listen ignore-me|include-me") for line in alex)
        assert not [line for line in alex if "reload" in line or "listen on" in line]
        steve = " | ".join(await w.command("Steve", "help"))
        assert "/mineclaw reload" in steve and "/mineclaw listen on|off|status" in steve
        assert "/mineclaw model [list|default|provider/model]" in steve

        assert await w.command("Steve", "model", "list") == ["▶ local/m1 (in use)", "  local/m2"]
        assert any("local/m2" in line for line in await w.command("Steve", "model", "local/m2"))
        assert await w.command("Steve", "model", "list") == ["  local/m1", "▶ local/m2 (in use)"]
        assert await w.command("Steve", "model", "default") == [
            "Later answers use the default model, local/m1."
        ]
        # The plugin refuses it first, with its own line naming the node.
        refused = await w.command("Alex", "model", "list")
        assert refused == ["You do not have permission to do that (mineclaw.command.model)."]
        w.provider.answer("From m1.")
        since = w.mark()
        await w.chat("Steve", "@ai which model?")
        await w.message("*", "From m1.", since)
        assert w.provider.bodies()[-1]["model"] == "m1"


DECIDING = NO_COOLDOWNS + "listen:\n  decision_model: local/m2\n"


def decision(yes: bool, reason: str) -> str:
    return json.dumps({"answer": yes, "confidence": 0.9, "reason": reason})


async def test_a_decision_model_starts_a_turn_for_a_question_and_not_for_banter(
    tmp_path: Path,
) -> None:
    async with world(tmp_path, DECIDING) as w:
        await listening(w, ("Steve", OP), ("Alex", CHAT_ONLY))
        held = w.provider.held(decision(False, "banter")[:20], decision(False, "banter")[20:])
        since = w.mark()
        banter = await w.chat("Alex", "lol nice house Steve")
        # The verdict never waits for the decision: public at once, no AI prefix.
        assert (banter["outcome"], banter["shown"]) == ("public", "<Alex> lol nice house Steve")
        await held.streaming.wait()
        held.release.set()

        w.provider.answer(decision(True, "asks how to build a portal"))
        w.provider.answer("Ten obsidian make a portal frame.")
        asked = await w.chat("Alex", "how many obsidian for a nether portal")
        assert asked["shown"] == "<Alex> how many obsidian for a nether portal"
        reply = await w.message("*", "Ten obsidian", since)
        assert reply == asked_by("Alex") + "Ten obsidian make a portal frame."

        bodies = w.provider.bodies()
        assert [body["model"] for body in bodies] == ["m2", "m2", "m1"]
        document = json.loads(bodies[1]["messages"][-1]["content"])
        assert document["line_to_decide"] == {
            "player": "Alex",
            "text": "how many obsidian for a nether portal",
            "seconds_ago": 0,
        }
        # The banter started no turn: it reached the model only as overheard, with the question.
        assert spoken(bodies[2])[-2:] == [
            ("Alex", "lol nice house Steve"),
            ("Alex", "how many obsidian for a nether portal"),
        ]
        why = " | ".join(await w.command("Steve", "listen", "why"))
        assert '"lol nice house Steve" -> overheard (model: no at 0.90: banter)' in why
        assert "-> turn (model: yes at 0.90: asks how to build a portal)" in why
        # Only operators may ask why.
        denied = " | ".join(await w.command("Alex", "listen", "why"))
        assert "mineclaw.command.listen" in denied
