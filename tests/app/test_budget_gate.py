"""The budget gate in the chat path and /ai: the refusal line, the metric, and the usage report
(the application in process, the provider real HTTP over loopback, the usage ledger real SQLite)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from bridge.link.messages import PlayerRef
from bridge.store.usage import Periods

from .conftest import ALEX, STEVE, WAIT, App, open_app, rendered, write_config
from .scripted_provider import ScriptedProvider

BUDGETS = (
    "schema: 1\nrate_limits:\n  player_cooldown_ms: 0\n  global_cooldown_ms: 0\n"
    "budgets:\n  enabled: true\n  tiers:\n    member: {day_tokens: 500}\n"
    # The refusals are counted by the metrics, which record only when they are on.
    "metrics:\n  enabled: true\n"
)
MEMBER = ["mineclaw.command.chat", "mineclaw.command.private", "mineclaw.budget.member"]


def _refusals(app_metrics: object) -> dict[tuple[str, ...], float]:
    counter = app_metrics.budget_refusals  # type: ignore[attr-defined]
    return {
        tuple(sample.labels.values()): sample.value
        for metric in counter.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }


def _spend_the_day(app: App, player: PlayerRef) -> None:
    """Books ``player``'s whole member day (500 tokens) in the usage ledger."""
    budgets = app.runtime.budgets
    assert budgets is not None
    now = budgets.now()
    day = Periods(day=now.date().isoformat(), month=now.strftime("%Y-%m"))
    budgets.book.add(
        player_uuid=player.uuid, player_name=player.name, periods=day, tokens=500, estimated=False
    )


async def test_a_spent_budget_refuses_chat_and_ai_and_is_counted(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, BUDGETS)
    app = await open_app(config, provider)
    try:
        _spend_the_day(app, STEVE)
        verdict = await app.chat("@ai hello", granted=MEMBER)
        assert verdict.decision == "refuse" and verdict.notice is not None
        assert "You have used your <period> assistant budget" in verdict.notice.template
        assert verdict.notice.values is not None
        assert verdict.notice.values["used"] == "500" and verdict.notice.values["limit"] == "500"
        private = " ".join(await app.command("ai", "hello", granted=MEMBER))
        assert "assistant budget" in private
        assert provider.requests == []
        assert _refusals(app.runtime.metrics) == {("budgets.player_exhausted", "member"): 2.0}
        usage = " ".join(await app.command("usage", granted=MEMBER))
        assert "Steve (member): today 500 of 500" in usage
    finally:
        await app.runtime.aclose()


async def test_two_lanes_of_one_player_cannot_both_spend_the_same_remainder(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    # Each request reserves its prompt and the model's output cap (1000): a public turn in
    # flight holds well over half of 2000, so the same player's private turn, started while it
    # streams, is stopped before its request instead of both passing on the same remainder.
    config = tmp_path / "config"
    write_config(config, provider.port, BUDGETS.replace("day_tokens: 500", "day_tokens: 2000"))
    app = await open_app(config, provider)
    try:
        held = provider.held("The public answer.")
        provider.answer("The private answer.", usage=(300, 900))
        assert (await app.chat("@ai first", granted=MEMBER)).decision == "accept"
        await asyncio.wait_for(held.streaming.wait(), WAIT)
        await app.command("ai", "second", granted=MEMBER)
        stopped = await app.link.wait_for(
            lambda name, data: name == "output.chat" and "stopped" in rendered(data.text)
        )
        assert stopped.player == STEVE.uuid
        assert len(provider.requests) == 1  # the private request was never sent
        held.release.set()
        await app.turn_done()
        budgets = app.runtime.budgets
        assert budgets is not None and budgets.held(STEVE.uuid) == 0
        usage = " ".join(await app.command("usage", granted=MEMBER))
        assert "of 2000" in usage
    finally:
        await app.runtime.aclose()


async def test_usage_finds_a_renamed_player_by_the_former_and_the_new_name(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port, BUDGETS.replace("day_tokens: 500", "day_tokens: 2000"))
    app = await open_app(config, provider)
    try:
        provider.answer("Hi.", usage=(100, 1900))
        assert (await app.chat("@ai hello", granted=MEMBER)).decision == "accept"
        await app.turn_done()
        # Steve renames himself (same UUID); refused by his budget under the new name.
        renamed = PlayerRef(uuid=STEVE.uuid, name="Stevie")
        verdict = await app.chat("@ai again", player=renamed, granted=MEMBER)
        assert verdict.decision == "refuse"
        op = [*MEMBER, "mineclaw.usage.others"]
        for name in ("Steve", "stevie"):
            shown = " ".join(await app.command("usage", name, player=ALEX, granted=op))
            assert "Stevie" in shown and "today 2000" in shown, shown
    finally:
        await app.runtime.aclose()


async def test_a_listen_line_refused_for_budget_stays_public_but_is_not_carried(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    async with _listening_over_budget(tmp_path, provider) as app:
        said = await app.chat("anyone want to trade?", player=ALEX, granted=MEMBER)
        assert (said.decision, said.notice) == ("pass", None)
        # Carried, the line would enter the next turn's request, paid by whoever asks next.
        assert app.runtime.listen.overheard.lines == ()
        assert provider.requests == []


@contextlib.asynccontextmanager
async def _listening_over_budget(tmp_path: Path, provider: ScriptedProvider) -> AsyncIterator[App]:
    """An app with budgets on, listen mode on, and Alex's day spent."""
    config = tmp_path / "config"
    write_config(config, provider.port, BUDGETS)
    app = await open_app(config, provider)
    try:
        _spend_the_day(app, ALEX)
        await app.command("listen", "on")
        yield app
    finally:
        await app.runtime.aclose()


async def test_an_over_budget_listen_line_said_during_a_turn_is_not_carried(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    # The busy gate refused first and overheard the line before the budget was looked at, so
    # the next asker's turn carried (and paid for) the words of a player over their budget.
    async with _listening_over_budget(tmp_path, provider) as app:
        held = provider.held("Thinking ", "hard")
        asked = await app.chat("@ai what should I build?", player=STEVE)
        assert asked.decision == "accept"
        await asyncio.wait_for(held.streaming.wait(), WAIT)
        said = await app.chat("anyone want to trade?", player=ALEX, granted=MEMBER)
        assert (said.decision, said.notice) == ("pass", None)
        assert app.runtime.listen.overheard.lines == ()
        # A player within budget is still carried.
        await app.chat("nice base", player=STEVE)
        assert [line.text for line in app.runtime.listen.overheard.lines] == ["nice base"]
        held.release.set()
        await app.turn_done()
