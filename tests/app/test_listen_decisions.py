"""Listen-mode decisions in the application, against the scripted provider over loopback
HTTP (it serves the decision model's stream and the main model's): the verdict first, the
decision after it; the model's yes starts a turn and its no leaves the line overheard; its
tokens are the server's, never the player's; malformed answers and failures fall back to the
classifier, a refused key does not; the circuit; ``/mineclaw listen why``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.app.requests.listen_decisions import DECISION_PURPOSE
from bridge.link.messages import PlayerRef
from bridge.policy.budgets import periods_at
from bridge.store.usage import SERVER
from bridge.turns.listen import OVERHEARD_HEADING

from .conftest import ALEX, NO_COOLDOWNS, STEVE, App, open_app, write_config
from .scripted_provider import ScriptedProvider

CHAT = ["mineclaw.command.chat"]
DECIDING = NO_COOLDOWNS + "listen:\n  decision_model: local/m2\n"


def answer(yes: bool, confidence: float, reason: str) -> str:
    return json.dumps({"answer": yes, "confidence": confidence, "reason": reason})


@pytest.fixture
async def deciding(tmp_path: Path, provider: ScriptedProvider) -> AsyncIterator[App]:
    config = tmp_path / "config"
    write_config(config, provider.port, DECIDING)
    app = await open_app(config, provider)
    await app.command("listen", "on")
    yield app
    await app.runtime.aclose()


async def report(
    app: App, *args: str, player: PlayerRef = STEVE, granted: list[str] | None = None
) -> list[str]:
    """A command's reply lines without their ``commands.line`` colour."""
    lines = await app.command(*args, player=player, granted=granted)
    return [line.removeprefix("<gray>") for line in lines]


def tokens_of(app: App, holder: str, purpose: str | None = None) -> int:
    usage = app.runtime.usage
    assert usage is not None
    periods = periods_at(datetime.now(UTC), app.runtime.plane.config.budgets.zone())
    if purpose is None:
        return usage.usage(holder, periods).day.tokens
    found = usage.by_purpose(holder, periods).get(purpose)
    return 0 if found is None else found.day.tokens


async def test_the_model_decides_after_the_verdict_and_the_server_pays(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    app.provider.answer(answer(False, 0.95, "banter between players"), usage=(120, 15))
    said = await app.chat("nice base lol", player=ALEX, granted=CHAT)
    # The verdict does not wait for the decision: public, no AI prefix, no notice.
    assert (said.decision, said.ai_prefix, said.notice) == ("pass", False, None)
    await decider.settled()
    assert app.runtime.turn is None
    assert [(line.player, line.text) for line in app.runtime.listen.overheard.lines] == [
        ("Alex", "nice base lol")
    ]

    app.provider.answer(answer(True, 0.9, "asks how to build a beacon"), usage=(130, 14))
    app.provider.answer("Nine iron blocks, then the beacon on top.")
    asked = await app.chat("so what goes under a beacon again")
    assert (asked.decision, asked.ai_prefix) == ("pass", False)
    await decider.settled()
    await app.turn_done()

    decision, turn = app.provider.bodies()[-2:]
    assert decision["model"] == "m2" and "tools" not in decision
    assert "Reply with exactly one JSON object" in decision["messages"][0]["content"]
    document = json.loads(decision["messages"][-1]["content"])
    assert document["line_to_decide"]["text"] == "so what goes under a beacon again"
    assert document["line_to_decide"]["player"] == "Steve"
    assert [line["text"] for line in document["recent_lines"]] == ["nice base lol"]
    # The turn hears what was overheard, then the line itself.
    users = [(m.get("name"), m["content"]) for m in turn["messages"] if m["role"] == "user"]
    assert users[-3:] == [
        (None, OVERHEARD_HEADING),
        ("Alex", "nice base lol"),
        ("Steve", "so what goes under a beacon again"),
    ]

    # Decisions cost the server (120 + 15 + 130 + 14), never the players they were about.
    assert tokens_of(app, SERVER, DECISION_PURPOSE) == 279
    assert tokens_of(app, ALEX.uuid) == 0
    assert tokens_of(app, STEVE.uuid, DECISION_PURPOSE) == 0
    steve = tokens_of(app, STEVE.uuid)
    assert 0 < steve and tokens_of(app, SERVER) == steve + 279
    budgets = app.runtime.budgets
    assert budgets is not None and budgets.held(SERVER) == 0  # every reservation settled
    usage = await report(app, "usage")
    assert any(line.startswith("of which listen decisions: today 279") for line in usage)

    why = await report(app, "listen", "why")
    assert why[0].startswith("listen mode on: the decision model local/m2 decides")
    assert why[1] == (
        'Alex: "nice base lol" -> overheard (model: no at 0.95: banter between players)'
    )
    assert why[2] == (
        'Steve: "so what goes under a beacon again" -> turn '
        "(model: yes at 0.90: asks how to build a beacon)"
    )
    denied = await report(app, "listen", "why", player=ALEX, granted=CHAT)
    assert "may not use /mineclaw listen" in denied[0]


async def test_below_the_threshold_a_yes_is_not_enough(deciding: App) -> None:
    deciding.provider.answer(answer(True, 0.5, "maybe"))
    await deciding.chat("how do I tame a fox?")
    await deciding.runtime.listen_decisions.settled()
    assert deciding.runtime.turn is None
    assert len(deciding.runtime.listen.overheard) == 1


async def test_a_malformed_answer_falls_back_to_the_classifier(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    app.provider.answer("Sure! " + answer(False, 0.9, "prose around it"))
    app.provider.answer("```json\n" + answer(True, 0.9, "fenced") + "\n```")
    app.provider.answer("Foxes like sweet berries.")
    await app.chat("lol ok", player=ALEX, granted=CHAT)
    await decider.settled()
    assert app.runtime.turn is None  # the classifier: banter
    await app.chat("how do I tame a fox?")
    await decider.settled()
    await app.turn_done()  # the classifier: a question for nobody else
    assert app.provider.bodies()[-1]["messages"][-1]["content"] == "how do I tame a fox?"
    why = await report(app, "listen", "why")
    assert "(fallback: malformed answer" in why[1] and "not a question" in why[1]
    assert "(fallback: malformed answer" in why[2] and "directed at no other" in why[2]


async def test_a_refused_key_is_not_fallback_work(deciding: App) -> None:
    deciding.provider.fail(401)
    await deciding.chat("how do I tame a fox?")
    await deciding.runtime.listen_decisions.settled()
    # The classifier would have said yes; a permission error decides nothing.
    assert deciding.runtime.turn is None
    assert len(deciding.provider.requests) == 1
    why = await report(deciding, "listen", "why")
    assert "-> overheard (nobody: the provider refused the request (401))" in why[1]


async def test_failures_open_the_circuit_and_nothing_is_asked_twice(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    deciding.provider.fail(500, times=3)
    for text in ("gg", "lol", "nice"):
        await app.chat(text, player=ALEX, granted=CHAT)
        await decider.settled()
    assert len(app.provider.requests) == 3  # one request per decision: never retried
    assert decider.contract.circuit_open
    # Open: the classifier decides at once, on the chat path, with the AI prefix of a turn.
    app.provider.answer("Foxes like sweet berries.")
    verdict = await app.chat("how do I tame a fox?")
    assert (verdict.decision, verdict.ai_prefix) == ("accept", True)
    await app.turn_done()
    assert len(app.provider.requests) == 4
    why = await report(app, "listen", "why")
    assert "(fallback: circuit open; a question directed at no other player)" in why[-1]


async def test_no_free_slot_means_the_classifier_decides_now(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    held = [app.provider.held('{"answer": false, ', '"confidence": 0.9}') for _ in range(4)]
    for number in range(4):
        verdict = await app.chat(f"banter line {number}", player=ALEX, granted=CHAT)
        assert verdict.ai_prefix is False
    for reply in held:
        await reply.streaming.wait()
    assert decider.contract.in_flight == 4
    app.provider.answer("Right here.")
    verdict = await app.chat("Mineclaw, where is spawn?")
    assert (verdict.decision, verdict.ai_prefix) == ("accept", True)  # no queue, no wait
    await app.turn_done()
    for reply in held:
        reply.release.set()
    await decider.settled()
    assert decider.contract.in_flight == 0
    assert app.provider.bodies()[4]["messages"][-1]["content"] == "Mineclaw, where is spawn?"


async def test_listen_off_cancels_a_pending_decision(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    held = app.provider.held('{"answer": true, ', '"confidence": 0.9}')
    await app.chat("how do I tame a fox?")
    await held.streaming.wait()
    await app.command("listen", "off")
    await decider.settled()
    held.release.set()
    assert app.runtime.turn is None and decider.contract.in_flight == 0
    why = await report(app, "listen", "why")
    assert why[0].startswith("listen mode off") and "(nobody: cancelled)" in why[1]


async def test_a_player_who_opts_out_while_decided_is_dropped(deciding: App) -> None:
    app, decider = deciding, deciding.runtime.listen_decisions
    held = app.provider.held('{"answer": true, ', '"confidence": 0.9}')
    await app.chat("how do I tame a fox?", player=ALEX, granted=CHAT)
    await held.streaming.wait()
    await app.command("listen", "ignore-me", player=ALEX, granted=[])
    held.release.set()
    await decider.settled()
    assert app.runtime.turn is None and app.runtime.listen.overheard.lines == ()
    assert "fox" not in " ".join(await report(app, "listen", "why"))


async def test_the_classifier_is_the_default_and_every_line_is_a_choice(
    tmp_path: Path, provider: ScriptedProvider
) -> None:
    config = tmp_path / "config"
    write_config(config, provider.port)
    app = await open_app(config, provider)
    try:
        await app.command("listen", "on")
        banter = await app.chat("nice base", player=ALEX, granted=CHAT)
        assert (banter.decision, banter.ai_prefix) == ("pass", False)
        provider.answer("Sweet berries.")
        asked = await app.chat("how do I tame a fox?")
        assert (asked.decision, asked.ai_prefix) == ("accept", True)
        await app.turn_done()
        assert len(provider.requests) == 1
        why = await report(app, "listen", "why")
        assert why[0].startswith("listen mode on: the classifier decides (names: Mineclaw;")
        assert why[1].endswith(
            "-> overheard (classifier: not a question and not addressed to the assistant)"
        )
    finally:
        await app.runtime.aclose()

    (config / "config.yml").write_text(NO_COOLDOWNS + "listen:\n  answer_every_line: true\n")
    app = await open_app(config, provider)
    try:
        await app.command("listen", "on")
        provider.answer("Thanks!")
        banter = await app.chat("nice base", player=ALEX, granted=CHAT)
        assert (banter.decision, banter.ai_prefix) == ("accept", True)
        await app.turn_done()
    finally:
        await app.runtime.aclose()
