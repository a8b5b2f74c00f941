"""One fake plugin link for every suite: ``tests/support/fake_link.py``.

The link port was faked three times (app, tools, policy), each recording and answering in its
own way; a fix to one never reached the others. This test finds every class under ``tests/``
that implements the port (``request`` and ``send_event``) and allows only the shared fake and
wrappers around a real link (they forward to ``self._inner``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.fake_link import FakeLink, delivered

from bridge.link.codes import ErrorCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import ApprovalShowResult, OutputChatResult, PlayersList

TESTS = Path(__file__).resolve().parent
SHARED = TESTS / "support" / "fake_link.py"


def _link_port_classes() -> list[str]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {
                item.name: item for item in node.body if isinstance(item, ast.AsyncFunctionDef)
            }
            if not {"request", "send_event"} <= methods.keys():
                continue
            forwards = "self._inner.request" in ast.unparse(methods["request"])
            if path != SHARED and not forwards:
                found.append(f"{path.relative_to(TESTS)}:{node.lineno} {node.name}")
    return found


def test_no_suite_writes_its_own_fake_link() -> None:
    assert _link_port_classes() == []


async def test_the_fake_answers_by_name_then_default_else_unknown_type() -> None:
    shown = ApprovalShowResult(shown=True)
    link = FakeLink({"approval.show": lambda data: shown})
    with pytest.raises(LinkRequestError) as caught:
        await link.request("players.list", PlayersList())
    assert caught.value.code is ErrorCode.UNKNOWN_TYPE
    assert await link.request("approval.show", PlayersList()) is shown
    link.default = delivered
    assert isinstance(await link.request("output.chat", PlayersList()), OutputChatResult)
    await link.send_event("link.state", PlayersList())
    assert [name for name, _ in link.sent] == [
        "players.list",
        "approval.show",
        "output.chat",
        "link.state",
    ]
    assert len(link.of("link.state")) == 1
    assert await link.wait_for(lambda name, data: name == "output.chat", since=1) is not None
