"""``/mineclaw retry`` (the application in process, the provider real HTTP over loopback, the
usage ledger real SQLite): a turn the provider failed offers its question to its asker, who
asks it again once, past the cooldown the failed attempt started, in the lane it was asked in;
the failed attempt's usage is counted once; nobody else can retry it; the offer expires."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bridge.link.messages import OutputChat
from bridge.store.usage import Periods
from bridge.turns.ports import PlayerRef as TurnPlayer
from bridge.turns.retry_offers import RETRY_WINDOW_S, RetryOffers

from .conftest import ALEX, STEVE, WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

# A long player cooldown: a retry that went through the gates would be refused by it.
CONFIG = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 600000\n  global_cooldown_ms: 0\n"
    "budgets:\n  enabled: true\n  tiers:\n    member: {day_tokens: 100000}\n"
)
STEVE_REF = TurnPlayer(STEVE.uuid, STEVE.name)
MEMBER = ["mineclaw.command.chat", "mineclaw.command.private", "mineclaw.budget.member"]


def lines_to(app: App, uuid: str, since: int = 0) -> list[str]:
    return [
        rendered(chat.text)
        for name, chat in app.link.sent[since:]
        if name == "output.chat" and isinstance(chat, OutputChat) and chat.player == uuid
    ]


def day_tokens(app: App, uuid: str) -> int:
    budgets = app.runtime.budgets
    assert budgets is not None
    now = budgets.now()
    periods = Periods(day=now.date().isoformat(), month=now.strftime("%Y-%m"))
    return budgets.book.usage(uuid, periods).day.tokens


async def opened(tmp_path: Path, provider: ScriptedProvider) -> App:
    config = tmp_path / "config"
    write_config(config, provider.port, CONFIG, max_attempts=1)
    return await open_app(config, provider)


async def offered(app: App, uuid: str, since: int) -> None:
    await app.link.wait_for(
        lambda name, data: (
            name == "output.chat"
            and data.player == uuid
            and "/mineclaw retry" in rendered(data.text)
        ),
        since=since,
    )


async def test_a_failed_public_question_is_asked_again_once_by_its_asker(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        provider.break_after("Half an ans")  # streamed, then the connection broke
        since = len(app.link.sent)
        assert (await app.chat("@ai how do I tame a fox", granted=MEMBER)).decision == "accept"
        await app.turn_done()
        await offered(app, STEVE.uuid, since)
        failure, offer = lines_to(app, STEVE.uuid, since)
        assert "provider is busy" in failure  # a broken stream reads as busy
        assert "within 30 minutes" in offer
        failed = day_tokens(app, STEVE.uuid)
        assert failed > 0  # the broken attempt streamed: its estimate is counted, once

        # Nobody else can take Steve's question; the cooldown Steve's failure started would
        # refuse a new question, but not the retry.
        assert "no failed question" in " ".join(await app.command("retry", player=ALEX))
        refused = await app.chat("@ai something else", granted=MEMBER)
        assert refused.decision == "refuse"
        provider.answer("Feed it sweet berries.", usage=(300, 900))
        started = await app.command("retry", granted=MEMBER)
        assert started == ["<gray>Asking Mineclaw again: how do I tame a fox"]
        await app.turn_done()
        answer = await app.link.wait_for(
            lambda name, data: name == "output.chat" and "sweet berries" in rendered(data.text)
        )
        assert answer.target == "broadcast"
        body = provider.bodies()[-1]
        assert [m["content"] for m in body["messages"] if m["role"] == "user"] == [
            "how do I tame a fox"
        ]
        # The retry costs what it used; the failed attempt is not counted again.
        assert day_tokens(app, STEVE.uuid) == failed + 1200
        assert "no failed question" in " ".join(await app.command("retry", granted=MEMBER))
        app.runtime.audit.flush()
        assert [e.fields["player"] for e in app.runtime.audit.events("retry.offered")] == ["Steve"]
        assert len(app.runtime.audit.events("retry.started")) == 1
    finally:
        await app.runtime.aclose()


async def test_a_failed_private_question_is_asked_again_in_the_private_lane(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        provider.fail(500)
        since = len(app.link.sent)
        await app.command("ai", "where", "is", "my", "house?", granted=MEMBER)
        await offered(app, STEVE.uuid, since)
        # A completed turn offers nothing, and the console has nothing to retry.
        assert "no failed question" in " ".join(await app.command("retry", player=None))
        provider.answer("Behind the hill.")
        assert "where is my house?" in " ".join(await app.command("retry", granted=MEMBER))
        reply = await app.link.wait_for(
            lambda name, data: name == "output.chat" and "Behind the hill" in rendered(data.text)
        )
        assert (reply.target, reply.player) == ("player", STEVE.uuid)
        assert "→ you" in rendered(reply.text)
        lane = app.runtime.lanes.lanes.find_private(STEVE.uuid)
        assert lane is not None and lane.task is not None
        await asyncio.wait_for(asyncio.shield(lane.task), WAIT)
        assert lane.session.projection(10).items  # the answer entered Steve's own session
        assert not app.runtime.session.projection(10).items
    finally:
        await app.runtime.aclose()


async def test_a_retry_without_the_lanes_permission_is_refused(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    app = await opened(tmp_path, provider)
    try:
        provider.fail(500)
        since = len(app.link.sent)
        assert (await app.chat("@ai hello", granted=MEMBER)).decision == "accept"
        await app.turn_done()
        await offered(app, STEVE.uuid, since)
        lines = await app.command("retry", granted=["mineclaw.command.private"])
        assert "may not use the assistant" in " ".join(lines)
        assert len(provider.requests) == 1
        # The offer was taken by the refused retry: one failure, one retry.
        assert "Usage: /mineclaw retry" in " ".join(await app.command("retry", "now"))
    finally:
        await app.runtime.aclose()


def test_an_offer_expires_after_its_window_and_a_newer_failure_replaces_it() -> None:
    now = [0.0]
    offers = RetryOffers(clock=lambda: now[0])
    offers.offer(STEVE_REF, "first", "public", "t-1")
    offers.offer(STEVE_REF, "second", "public", "t-2")
    taken = offers.take(STEVE.uuid)
    assert taken is not None and taken.question == "second"
    assert offers.take(STEVE.uuid) is None  # once
    offers.put_back(taken)
    now[0] = RETRY_WINDOW_S  # 30 minutes later
    assert offers.take(STEVE.uuid) is None
    small = RetryOffers(clock=lambda: now[0], max_offers=2)
    for n in range(3):
        small.offer(TurnPlayer(f"uuid-{n}", f"P{n}"), "q", "public", f"t-{n}")
    assert small.take("uuid-0") is None and small.take("uuid-2") is not None
