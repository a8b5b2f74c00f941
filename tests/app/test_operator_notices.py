"""Operators online hear the provider's own error, redacted and rarely (issue 17)."""

from __future__ import annotations

import asyncio
import json

from bridge.app.chat.operator_notices import NOTICE_INTERVAL_S, OPERATOR_NODE, OperatorNotices
from bridge.functions.suspensions import Suspension
from bridge.link.messages import OutputChat
from bridge.providers.failures import FailureClass
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.failure_lines import ProviderFailureNotice

from .conftest import ALEX, STEVE, App, rendered
from .scripted_provider import Reply

QUOTA = {
    "error": {
        "message": "You exceeded your current quota (org key sk-proj-abcdefghijklmnop1234567890).",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
}


def quota_reply() -> Reply:
    body = json.dumps(QUOTA).encode()
    return Reply(status=429, content_type="application/json", chunks=[body])


def lines_to(app: App, uuid: str) -> list[str]:
    return [
        rendered(chat.text)
        for chat in app.link.of("output.chat")
        if isinstance(chat, OutputChat) and chat.player == uuid
    ]


async def test_operator_gets_the_provider_error_once_per_kind(app: App) -> None:
    # Alex is an operator (holds the reload node); Steve, who asks, is not.
    await app.command("status", player=ALEX, granted=[OPERATOR_NODE])
    steve_nodes = ["mineclaw.command.chat"]
    for _ in range(2):
        app.provider.script(quota_reply())
        await app.chat("@ai hello", player=STEVE, granted=steve_nodes)
        await app.turn_done()
    await app.link.wait_for(lambda n, d: n == "output.chat" and d.player == ALEX.uuid)

    (operator_line,) = [line for line in lines_to(app, ALEX.uuid) if "failed" in line]
    assert "exceeded your current quota" in operator_line and "(quota)" in operator_line
    assert "sk-proj-abcdefghijklmnop1234567890" not in operator_line  # redacted
    # Each failure line is followed by the offer to ask again (/mineclaw retry).
    steve_lines = lines_to(app, STEVE.uuid)
    failures, offers = steve_lines[0::2], steve_lines[1::2]
    assert len(failures) == 2 and all("out of credit" in line for line in failures)
    assert len(offers) == 2 and all("/mineclaw retry" in line for line in offers)
    assert not any("exceeded" in line for line in steve_lines)
    app.runtime.audit.flush()
    notices = app.runtime.audit.events("operator.notice")
    assert [n.fields["recipients"] for n in notices] == [["Alex"]]
    # The audit log keeps both failures whole.
    ends = app.runtime.audit.events("turn.end")
    assert [e.fields["class"] for e in ends] == ["quota", "quota"]
    assert all("exceeded your current quota" in str(e.fields["reason"]) for e in ends)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _notice(kind: FailureClass, error: str = "upstream 503") -> ProviderFailureNotice:
    return ProviderFailureNotice(turn_id="t1", model_ref="p/m", failure_class=kind, error=error)


async def test_notices_are_throttled_per_kind_and_go_to_operators_online(app: App) -> None:
    clock = _Clock()
    notices = OperatorNotices(
        app.runtime,
        send=app.handler.output.send_soon,
        audit=MemoryAudit(),
        redact=lambda text: text,
        monotonic=clock,
    )
    notices.notify(_notice("busy"))  # nobody online: not counted as told
    notices.seen(ALEX, [OPERATOR_NODE])
    notices.seen(STEVE, ["mineclaw.command.chat"])
    app.link.connected = False
    notices.notify(_notice("busy"))  # the link is down: not sent, not counted as told
    app.link.connected = True
    notices.notify(_notice("busy"))
    notices.notify(_notice("busy"))  # same kind, too soon
    notices.notify(_notice("quota"))  # another kind
    clock.now = NOTICE_INTERVAL_S + 1
    notices.notify(_notice("busy"))  # the interval has passed
    notices.quit(ALEX)
    clock.now = 3 * NOTICE_INTERVAL_S
    notices.notify(_notice("timed_out"))  # no operator left
    await asyncio.sleep(0)
    told = [line for line in lines_to(app, ALEX.uuid) if "failed" in line]
    assert [line.split("(")[1].split(")")[0] for line in told] == ["busy", "quota", "busy"]
    assert lines_to(app, STEVE.uuid) == []


async def test_operators_online_hear_of_a_suspended_function(app: App) -> None:
    await app.command("status", player=ALEX, granted=[OPERATOR_NODE])
    await app.command("status", player=STEVE, granted=["mineclaw.command.chat"])
    listener = app.runtime.functions.suspension_listener
    assert listener is not None  # wired by the handler
    listener(Suspension("crashy", 3, 10))
    await app.link.wait_for(lambda n, d: n == "output.chat" and "crashy" in rendered(d.text))
    (line,) = [line for line in lines_to(app, ALEX.uuid) if "crashy" in line]
    assert "suspended for 10 minutes" in line and "3 calls" in line
    assert not any("crashy" in line for line in lines_to(app, STEVE.uuid))
    app.runtime.audit.flush()
    [notice] = app.runtime.audit.events("operator.notice")
    assert notice.fields == {
        "class": "function_suspended",
        "function": "crashy",
        "recipients": ["Alex"],
    }
