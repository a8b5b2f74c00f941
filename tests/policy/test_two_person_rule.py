"""The two-person rule in policy: ``console_confirm`` rules compile and match the canonical
command; a prompt that needs ``mineclaw.approve.console`` is accepted only with it, once; a
ledger sees every prompt open and close (what a restart reports as expired)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import pytest

from bridge.control import init_config_dir, load_control_plane
from bridge.control.plane import ConfigLoadError
from bridge.control.whitelist_file import WhitelistFile
from bridge.policy.approvals import AnswerVerdict, ApprovalBroker, Subject
from bridge.policy.whitelist import compile_whitelist

from .test_approvals import ALEX, BUTTONS, DISPLAY, PROMPT, WAIT, Prompts

CONSOLE = Subject("console", "steve-uuid", "ban Griefer")
NODE = "mineclaw.approve.console"


def test_console_confirm_rules_compile_and_match_the_canonical_form() -> None:
    whitelist = compile_whitelist(
        WhitelistFile.model_validate(
            {"schema": 1, "console_confirm": ["ban [A-Za-z0-9_]{3,16}"]}, strict=False
        )
    )
    assert whitelist.confirm_rule("ban Griefer") == "ban [A-Za-z0-9_]{3,16}"
    assert whitelist.confirm_rule("ban Griefer now") is None
    assert whitelist.confirm_rule("minecraft:ban Griefer") is None  # namespaces are separate
    disabled = compile_whitelist(
        WhitelistFile.model_validate(
            {"schema": 1, "enabled": False, "console_confirm": ["ban .+"]}, strict=False
        )
    )
    assert disabled.confirm_rule("ban Griefer") is None


@pytest.mark.parametrize(
    ("rules", "line", "field"),
    [
        ("  - 'ban (x'\n", 3, "console_confirm[0]"),
        ("  - 'ban x'\n  - 'ban x'\n", None, "console_confirm"),
        ("  - '(a)\\1'\n", 3, "console_confirm[0]"),
    ],
)
def test_a_bad_console_confirm_rule_names_file_line_and_field(
    tmp_path: Path, rules: str, line: int | None, field: str
) -> None:
    init_config_dir(tmp_path)
    (tmp_path / "whitelist.yml").write_text(f"schema: 1\nconsole_confirm:\n{rules}")
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(tmp_path, environ={})
    [problem] = [p for p in caught.value.problems if not p.warning]
    assert (problem.file, problem.path) == ("whitelist.yml", field)
    if line is not None:
        assert problem.line == line


async def open_console_prompt(broker: ApprovalBroker, prompts: Prompts) -> asyncio.Task:  # type: ignore[type-arg]
    task = asyncio.create_task(
        broker.request(
            prompts.link,
            target=ALEX,
            subject=CONSOLE,
            prompt=PROMPT,
            buttons=BUTTONS,
            display=DISPLAY,
            permission=NODE,
        )
    )
    await asyncio.wait_for(prompts.up.wait(), WAIT)
    return task


async def test_accepting_needs_the_permission_in_the_answers_facts() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await open_console_prompt(broker, prompts)
    result = broker.answer(ALEX, "approve", prompts.token, granted=["mineclaw.command.approve"])
    assert result.verdict is AnswerVerdict.NOT_PERMITTED
    outcome = await asyncio.wait_for(task, WAIT)
    assert outcome.status == "not_permitted" and not outcome.approves(CONSOLE)
    # The prompt is over: the token is gone, even with the permission now.
    assert broker.answer(ALEX, "approve", prompts.token, granted=[NODE]).verdict is (
        AnswerVerdict.INVALID
    )


async def test_with_the_permission_it_is_accepted_once() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await open_console_prompt(broker, prompts)
    assert broker.answer(ALEX, "approve", prompts.token, granted=[NODE]).verdict is (
        AnswerVerdict.APPROVED
    )
    assert broker.answer(ALEX, "approve", prompts.token, granted=[NODE]).verdict is (
        AnswerVerdict.INVALID
    )
    assert (await asyncio.wait_for(task, WAIT)).approves(CONSOLE)


async def test_a_deny_needs_no_permission() -> None:
    broker, prompts = ApprovalBroker(), Prompts()
    task = await open_console_prompt(broker, prompts)
    assert broker.answer(ALEX, "deny", prompts.token).verdict is AnswerVerdict.DENIED
    assert (await asyncio.wait_for(task, WAIT)).status == "denied"


class Ledger:
    def __init__(self) -> None:
        self.open: dict[str, dict[str, str]] = {}
        self.seen: list[dict[str, str]] = []

    def prompt_opened(self, prompt_id: str, fields: dict[str, str], at: datetime) -> None:
        self.open[prompt_id] = fields
        self.seen.append(fields)

    def prompt_closed(self, prompt_id: str) -> None:
        del self.open[prompt_id]


async def test_the_ledger_sees_a_prompt_while_it_is_open_and_never_its_token() -> None:
    ledger = Ledger()
    broker, prompts = ApprovalBroker(ledger=ledger), Prompts()
    task = await open_console_prompt(broker, prompts)
    [fields] = ledger.open.values()
    assert fields["target"] == "Alex" and fields["command"] == DISPLAY["command"]
    assert prompts.token not in str(ledger.seen) and prompts.token not in str(list(ledger.open))
    broker.answer(ALEX, "deny", prompts.token)
    await asyncio.wait_for(task, WAIT)
    assert ledger.open == {}
