"""message.yml templates read as the plugin's MiniMessage reads them (shared cases with JUnit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.control.messages_file import MessagesFile, check_template
from bridge.control.template_rules import TemplateRuleError, check, tags

CASES_FILE = (
    Path(__file__).resolve().parents[2]
    / "docs"
    / "protocol"
    / "vectors"
    / "templates"
    / "message-templates.json"
)
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text("utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_shared_case(case: dict[str, Any]) -> None:
    allowed, required = frozenset(case["placeholders"]), frozenset(case["required"])
    if case["valid"]:
        check(case["template"], allowed, required)
    else:
        with pytest.raises(TemplateRuleError):
            check(case["template"], allowed, required)


def test_the_hidden_click_of_the_report_is_refused_in_message_yml() -> None:
    # The old regex saw only "<red>" here; MiniMessage sees one click tag with "/say <red>".
    with pytest.raises(ValueError, match="click"):
        check_template("<click:run_command:'/say <red>'>free diamonds <message>", "reply.layout")
    with pytest.raises(ValueError, match="hover"):
        MessagesFile.model_validate(
            {"schema": 1, "approval": {"accept_button": "<hover:show_text:'<b>x'>[Yes]"}}
        )


def test_tags_are_delimited_as_minimessage_does() -> None:
    found = [(tag.closing, tag.body) for tag in tags("a\\<b> <c:'x>y'> < d <e></f>")]
    assert found == [(False, "c:'x>y'"), (False, "e"), (True, "f")]


@pytest.mark.parametrize(
    "template",
    [
        "<b'<click:run_command:/op>'> <message>",  # a quote anywhere in a tag is refused
        "<b'<click:run_command:/op> <message>",  # a quote never closed
        "<gradient:'red':blue>x <message>",  # quoted arguments, even harmless ones
        "<Message>",  # placeholders exactly as declared
        "</message> <message>",
    ],
)
def test_the_bridge_is_stricter_where_minimessage_is_lenient(template: str) -> None:
    with pytest.raises(TemplateRuleError):
        check(template, frozenset({"message"}), frozenset({"message"}))
