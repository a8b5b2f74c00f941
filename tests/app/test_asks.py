"""Questions with ids (protocol 1.5, ``asks``): a question the plugin sends again after a relink
is never answered twice by the bridge that took it, and every question that starts no turn is
ended at once (the plugin would otherwise keep it and send it again)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bridge.app.network.cut_turns import CutTurns
from bridge.errors import StoreError
from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import CURRENT_LINK
from bridge.link.messages import ChatRequest, CommandRequest, CommandSender

from .conftest import ALEX, EVERY_NODE, STEVE, App, app_link, hello, rendered

ASK = "k7Qm2xYp0aZ-b_c9LrT4sw"


def _chat(text: str, *, ask: str = ASK, resent: bool | None = None) -> ChatRequest:
    fields: dict[str, object] = {"ask": ask} if resent is None else {"ask": ask, "resent": resent}
    return ChatRequest(player=STEVE, granted=EVERY_NODE, text=text, **fields)  # type: ignore[arg-type]


def _ai(question: str, *, ask: str = ASK, resent: bool | None = None) -> CommandRequest:
    sender = CommandSender.model_validate(
        {"kind": "player", "player": STEVE, "granted": EVERY_NODE}
    )
    extra: dict[str, object] = {"ask": ask} if resent is None else {"ask": ask, "resent": resent}
    return CommandRequest(sender=sender, args=["ai", question], **extra)  # type: ignore[arg-type]


async def _relink(app: App) -> None:
    """The link dropped and the plugin linked again (a new link object, as in the network)."""
    app.link.connected = False
    await app.handler.on_disconnected()
    app.link = app_link()
    await app.handler.on_connected(app.link, hello(features=("asks",)))


async def test_the_link_state_says_the_bridge_takes_ids_only_to_a_plugin_asking(app: App) -> None:
    assert app.handler.link_state().asks is None
    await _relink(app)
    assert app.link.of("link.state")[-1].asks is True


async def test_a_wake_sent_again_while_its_turn_runs_starts_no_second_turn(app: App) -> None:
    held = app.provider.held("Slow ", "answer")
    verdict = await app.handler.on_chat(_chat("@ai one"))
    assert verdict.decision == "accept"
    await asyncio.wait_for(held.streaming.wait(), 20)
    await _relink(app)
    again = await app.handler.on_chat(_chat("@ai one", resent=True))
    assert again.decision == "accept"
    assert app.runtime.lanes.queue.waiting() == []  # not queued behind itself either
    held.release.set()
    await app.turn_done()
    reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
    assert reply.ask == ASK  # the answer names the question: the plugin forgets it
    await app.link.wait_for(lambda n, d: n == "ask.done" and d.ask == ASK)
    assert len(app.provider.requests) == 1  # one turn, answered once
    assert [turn.player for turn in app.runtime.archive.all_turns()] == ["Steve"]


async def test_a_wake_that_ended_while_the_link_was_down_gets_its_lines_again(app: App) -> None:
    held = app.provider.held("the ", "answer")
    await app.handler.on_chat(_chat("@ai one"))
    await asyncio.wait_for(held.streaming.wait(), 20)
    app.link.connected = False  # the answer has nowhere to go
    await app.handler.on_disconnected()
    held.release.set()
    await app.turn_done()
    app.link = app_link()
    await app.handler.on_connected(app.link, hello(features=("asks",)))
    verdict = await app.handler.on_chat(_chat("@ai one", resent=True))
    turn = app.runtime.turn
    assert verdict.decision == "accept" and turn is not None and turn.done()  # nothing new
    reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
    assert reply.ask == ASK and reply.text.model == {"message": "the answer"}
    done = await app.link.wait_for(lambda n, d: n == "ask.done")
    assert done.ask == ASK
    names = [name for name, _ in app.link.sent]
    assert names.index("ask.done") > names.index("output.chat")  # the end after the lines
    assert len(app.provider.requests) == 1


async def test_a_question_whose_answer_the_dropped_link_lost_is_not_ended_on_the_next(
    app: App,
) -> None:
    """The answer went out on a link that dropped under it, and the plugin linked again at
    once: the question's end must not go on the new link before its lines, or the plugin
    forgets a question whose answer it never showed (the soak's silent losses)."""
    held = app.provider.held("the ", "answer")
    await app.handler.on_chat(_chat("@ai one"))
    await asyncio.wait_for(held.streaming.wait(), 20)

    async def dropped_under_it(data: Any) -> Any:
        await _relink(app)  # the plugin is back before the bridge learns the line was lost
        raise LinkRequestError(ErrorCode.DISCONNECTED, "the link closed")

    app.link.responders["output.chat"] = dropped_under_it
    held.release.set()
    await app.turn_done()
    lanes = app.runtime.lanes
    await asyncio.wait_for(asyncio.gather(*lanes._tasks), 20)  # the question's end, if any
    assert app.link.of("ask.done") == []
    await app.handler.on_chat(_chat("@ai one", resent=True))  # kept, so sent again
    reply = await app.link.wait_for(lambda n, d: n == "output.chat" and d.target == "broadcast")
    assert reply.ask == ASK and reply.text.model == {"message": "the answer"}
    await app.link.wait_for(lambda n, d: n == "ask.done" and d.ask == ASK)
    assert len(app.provider.requests) == 1


async def test_a_resend_that_crossed_the_delivered_answer_does_not_show_it_twice(
    app: App,
) -> None:
    """The plugin linked again while the turn ran and sent the question again; the answer
    reached it on the new link before the resend reached the bridge: the resend ends the
    question without its lines (the plugin showed them once already)."""
    held = app.provider.held("the ", "answer")
    await app.handler.on_chat(_chat("@ai one"))
    await asyncio.wait_for(held.streaming.wait(), 20)
    await _relink(app)
    held.release.set()
    await app.turn_done()
    await app.link.wait_for(lambda n, d: n == "ask.done" and d.ask == ASK)  # answered, ended
    await app.handler.on_chat(_chat("@ai one", resent=True))  # it crossed them
    await app.link.wait_for(lambda n, d: len(app.link.of("ask.done")) == 2)
    answers = [d for d in app.link.of("output.chat") if d.ask == ASK]
    assert [d.text.model for d in answers] == [{"message": "the answer"}]
    assert len(app.provider.requests) == 1


async def test_a_private_question_sent_again_is_not_asked_twice(app: App) -> None:
    held = app.provider.held("private ", "answer")
    await app.handler.on_command(_ai("where are my diamonds?"))
    await asyncio.wait_for(held.streaming.wait(), 20)
    await _relink(app)
    reply = await app.handler.on_command(_ai("where are my diamonds?", resent=True))
    assert reply.lines == []  # no second echo, no second turn
    held.release.set()
    answer = await app.link.wait_for(
        lambda n, d: n == "output.chat" and d.target == "player" and d.ask == ASK
    )
    assert answer.text.model == {"message": "private answer"}
    await app.link.wait_for(lambda n, d: n == "ask.done" and d.ask == ASK)
    assert len(app.provider.requests) == 1


async def test_a_question_that_starts_no_turn_is_ended_at_once(app: App) -> None:
    # Ended before the answer is returned: were the link to drop between the two, the plugin
    # would send again a question its asker was already told about (seen in the soak).
    refused = await app.handler.on_chat(_chat("@ai ", ask="empty-question"))
    assert refused.decision == "refuse"
    assert [d.ask for d in app.link.of("ask.done")] == ["empty-question"]
    await app.handler.on_command(_ai("list", ask="a-subcommand"))  # /ai list: no turn
    assert [d.ask for d in app.link.of("ask.done")] == ["empty-question", "a-subcommand"]
    assert app.provider.requests == []


async def test_a_cut_question_with_an_id_owes_no_line_one_without_does(app: App) -> None:
    # The bridge gives its server up mid-turn: the plugin sends a question it kept again to the
    # next bridge, so a "lost its database" line too would both answer and fail it.
    cuts = CutTurns()
    held = app.provider.held("never ", "shown")
    await app.handler.on_chat(_chat("@ai kept"))
    await asyncio.wait_for(held.streaming.wait(), 20)
    assert cuts.cut("default", app.runtime, "the bridge lost its database") == 1
    held.release.set()
    await app.turn_done()
    assert cuts.owed("default") == 0
    assert app.runtime.lanes.asks.get(ASK) is None  # a resend here runs it again
    assert not [d for n, d in app.link.sent if n == "ask.done"]  # nor is it ended
    held = app.provider.held("never ", "shown")
    await app.chat("@ai not kept")  # an older plugin: no id
    await asyncio.wait_for(held.streaming.wait(), 20)
    assert cuts.cut("default", app.runtime, "the bridge lost its database") == 1
    held.release.set()
    await app.turn_done()
    assert cuts.owed("default") == 1


async def test_a_private_question_taken_is_never_answered_with_a_failure_line(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in the soak: the store went away right after /ai took the question, the reply said
    # "could not be handled", and the question was answered all the same (told and answered).
    state = app.runtime.conversations
    assert state is not None
    real = state.shelf
    calls: list[str] = []

    def flaky(player_uuid: str) -> Any:
        calls.append(player_uuid)
        if len(calls) > 1:
            raise StoreError("cannot connect to PostgreSQL")
        return real(player_uuid)

    monkeypatch.setattr(state, "shelf", flaky)
    app.provider.answer("fine")
    reply = await app.handler.on_command(_ai("where?"))
    lines = [rendered(line) for line in reply.lines]
    assert lines and not any("could not be handled" in line for line in lines), lines
    answer = await app.link.wait_for(lambda n, d: n == "output.chat" and d.ask == ASK)
    assert answer.text.model == {"message": "fine"}


async def test_a_question_refused_as_its_server_is_let_go_is_still_ended_on_its_link(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in the soak: the store went away during an /ai, the bridge let the server go (its
    # runtime's link gone) before answering "could not be handled" on the still open link; no
    # ask.done went with it, so the plugin kept the question, sent it again and it was answered.
    link = app.link

    def lost(*args: object, **kwargs: object) -> object:
        app.runtime.link = None  # the database lost: the server is let go
        raise StoreError("cannot connect to PostgreSQL")

    monkeypatch.setattr(app.runtime.lanes.lanes, "private", lost)
    reply = await app.handler.on_command(_ai("where?"))
    assert "could not be handled" in rendered(reply.lines[0])
    assert [d.ask for d in link.of("ask.done")] == [ASK]


async def test_a_question_that_arrives_after_its_server_was_let_go_is_still_ended_on_its_link(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in the CI soak: the runtime had let go of the server (its database lost, its link
    # None) while the plugin's connection still delivered an /ai; the bridge answered "could
    # not be handled" on that connection but sent its ask.done to no link, so the plugin kept
    # the question, sent it again to the next bridge and it was answered too. The connection
    # names the request's link (`CURRENT_LINK`), as it names the request.
    link = app.link
    app.runtime.link = None
    monkeypatch.setattr(
        app.runtime.lanes.lanes,
        "private",
        lambda *args, **kwargs: (_ for _ in ()).throw(StoreError("cannot connect to PostgreSQL")),
    )
    token = CURRENT_LINK.set(link)
    try:
        reply = await app.handler.on_command(_ai("where?"))
    finally:
        CURRENT_LINK.reset(token)
    assert "could not be handled" in rendered(reply.lines[0])
    assert [d.ask for d in link.of("ask.done")] == [ASK]


async def test_a_question_whose_end_the_lost_lease_kept_from_the_plugin_tells_its_asker_nothing(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seen in the 10-minute soak (seed 2): PostgreSQL restarted under an /ai, the bridge lost
    # the server's lease while answering it, its ask.done was refused ("no longer holds this
    # server's lease") but the reply "could not be handled" still went out as the request's
    # answer; the plugin kept the question, sent it again to the next bridge and it was
    # answered too. Without its end, the reply must tell nothing: the next bridge tells.
    link = app.link
    monkeypatch.setattr(
        app.runtime.lanes.lanes,
        "private",
        lambda *args, **kwargs: (_ for _ in ()).throw(StoreError("cannot connect to PostgreSQL")),
    )

    async def lease_lost(name: str, data: Any) -> None:
        raise LinkRequestError(
            ErrorCode.DISCONNECTED, "this bridge no longer holds this server's lease"
        )

    monkeypatch.setattr(link, "send_event", lease_lost)
    reply = await app.handler.on_command(_ai("where?"))
    assert reply.lines == []
    # A refusal, too, is the next bridge's to tell; one whose end reached the plugin is told.
    reply = await app.handler.on_command(_ai("list", ask="a-subcommand"))
    assert reply.lines == []
    monkeypatch.undo()
    reply = await app.handler.on_command(_ai("list", ask="a-subcommand", resent=True))
    assert reply.lines and [d.ask for d in link.of("ask.done")] == ["a-subcommand"]


async def test_questions_waiting_in_line_as_the_server_is_given_up_are_owed_or_sent_again(
    app: App,
) -> None:
    # Seen in the 10-minute soak (seed 3): a wake asked just after a relink, before the
    # bridge's link.state reached the plugin, carried no id; it waited in line behind another
    # player's turn when the bridge lost its database. The running turn was stopped and its
    # asker owed a line, but the freed lane started the waiting question on the server let go:
    # nobody saw its answer nor told its asker. The line is emptied first now: a question
    # without an id is owed a line like a stopped turn's, one with an id the plugin resends.
    cuts = CutTurns()
    held = app.provider.held("never ", "shown")
    await app.handler.on_chat(_chat("@ai running"))
    await asyncio.wait_for(held.streaming.wait(), 20)
    tom = ALEX.model_copy(update={"uuid": "7d2e9c1a-2222-4c6a-9e2f-1a2b3c4d5e6f", "name": "Tom"})
    kept = ChatRequest(player=ALEX, granted=EVERY_NODE, text="@ai kept", ask="alex-question")  # type: ignore[arg-type]
    assert (await app.handler.on_chat(kept)).decision == "accept"
    assert (await app.chat("@ai no id", player=tom)).decision == "accept"
    assert len(app.runtime.lanes.queue.waiting()) == 2
    assert cuts.cut("default", app.runtime, "the bridge lost its database") == 1
    assert app.runtime.lanes.queue.waiting() == []
    held.release.set()
    await app.turn_done()
    await asyncio.wait_for(asyncio.gather(*app.runtime.lanes._tasks), 20)
    assert app.runtime.lanes.asks.get("alex-question") is None  # a resend here runs it
    assert cuts.owed("default") == 1  # Tom's; Steve's and Alex's are the plugin's to resend
    assert len(app.provider.requests) == 1  # nothing started from the line
    assert app.link.of("ask.done") == []
