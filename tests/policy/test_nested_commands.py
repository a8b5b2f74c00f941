"""The nested-command extractor against a hostile corpus: every wrapper that can run a command
either yields the command it carries (so the never list sees it) or is refused as uncertain."""

from __future__ import annotations

import itertools

import pytest

from bridge.control.never_categories import effective_categories
from bridge.policy.nested_commands import MAX_DEPTH, UncertainCommand, carried_commands
from bridge.policy.never_list import NeverList

NEVER = NeverList(effective_categories([], {}))

INNER = ["op Steve", "/op Steve", "minecraft:op Steve", "lp user Steve permission set *"]

# Templates that carry {c}: each must be refused, whatever the spelling of the inner command.
CARRIERS = [
    "execute run {c}",
    "execute as @a at @s run {c}",
    "minecraft:execute as @a run {c}",
    "execute as run run {c}",
    "execute if entity @a[tag=run] run {c}",
    "execute run execute run execute run {c}",
    "return run {c}",
    "minecraft:return run {c}",
    "execute run return run {c}",
    'data merge block 1 2 3 {{Command:"{c}"}}',
    "data merge block 1 2 3 {{Command:'{c}'}}",
    'data merge block 1 2 3 {{"Command":"{c}"}}',
    'data merge block 1 2 3 {{ Command : "{c}" }}',
    'data merge block 1 2 3 {{COMMAND:"{c}"}}',
    'data modify block 1 2 3 Command set value "{c}"',
    'setblock ~ ~ ~ command_block{{Command:"{c}"}}',
    'setblock ~ ~ ~ minecraft:repeating_command_block[facing=up]{{Command:"{c}",auto:1b}}',
    'fill ~ ~ ~ ~1 ~1 ~1 chain_command_block{{Command:"{c}"}}',
    'summon command_block_minecart ~ ~ ~ {{Command:"{c}"}}',
    'summon minecraft:command_block_minecart ~ ~ ~ {{Command:"{c}"}}',
    'summon pig ~ ~ ~ {{Passengers:[{{id:"minecraft:command_block_minecart",Command:"{c}"}}]}}',
    'summon falling_block ~ ~ ~ {{BlockState:{{Name:"command_block"}},'
    'TileEntityData:{{Command:"{c}"}}}}',
    'give @s command_block[block_entity_data={{id:"command_block",Command:"{c}"}}]',
    'give @s minecraft:command_block{{BlockEntityTag:{{Command:"{c}"}}}}',
    "item replace entity @s weapon.mainhand with "
    'command_block[block_entity_data={{Command:"{c}"}}]',
    'tellraw @a {{"text":"click","clickEvent":{{"action":"run_command","value":"/{c}"}}}}',
    'tellraw @a {{"text":"click","click_event":{{"action":"run_command","command":"{c}"}}}}',
    'setblock ~ ~ ~ oak_sign{{front_text:{{messages:[\'{{"text":"x","clickEvent":'
    '{{"action":"run_command","value":"{c}"}}}}\',\'""\',\'""\',\'""\']}}}}',
    'give @s written_book[written_book_content={{title:"t",author:"a",pages:['
    '\'{{"text":"p","clickEvent":{{"action":"minecraft:run_command","value":"{c}"}}}}\''
    "]}}]",
    'dialog show @a {{type:"notice",title:"t",action:{{label:"ok",'
    'action:{{type:"run_command",command:"{c}"}}}}}}',
]

# Carriers the bridge cannot read with certainty: refused as such.
UNREADABLE = [
    'data merge block 1 2 3 {"Comm\\u0061nd":"op Steve"}',  # decoded: judged, see below
    "data modify block 1 2 3 Command set from block 4 5 6 Command",
    "data modify block 1 2 3 Command append value 'op'",
    "data merge block 1 2 3 {Command:{a:1}}",
    'data merge block 1 2 3 {Command:["op Steve"]}',
    'data merge block 1 2 3 {Command:"op Steve',
    'data merge block 1 2 3 {"Command":"\\q"}',
    "data merge block 1 2 3 {Comm\\u0061nd:op}",
    'dialog show @a {action:{type:"dynamic/run_command",template:"op $(name)"}}',
    "say look at my commands",
    'data merge block 1 2 3 {Command:"op  Steve"}',
    'data merge block 1 2 3 {Command:"op\\nSteve"}',
    'data merge block 1 2 3 {Command:"\\N{LATIN SMALL LETTER X WITH NOTHING}"}',
]

BENIGN = [
    "time set day",
    "say hello there",
    "say don't worry",
    "give Steve minecraft:bread 2",
    "gamerule commandBlockOutput false",
    "gamerule sendCommandFeedback true",
    "execute as @a run say hi",
    "return 1",
    "return fail",
    'tellraw @a {"text":"hi","clickEvent":{"action":"suggest_command","value":"/spawn"}}',
    "data merge block 1 2 3 {CustomName:'\"Chest\"'}",
]


def _refused(command: str) -> str | None:
    return NEVER.judge(command, None).refusal()


@pytest.mark.parametrize(
    ("template", "inner"), list(itertools.product(CARRIERS, INNER)), ids=lambda v: str(v)[:50]
)
def test_every_carrier_of_a_never_listed_command_is_refused(template: str, inner: str) -> None:
    command = template.format(c=inner)
    reason = _refused(command)
    assert reason is not None, command
    assert "never list" in reason or "cannot tell" in reason


@pytest.mark.parametrize("template", CARRIERS, ids=lambda v: v[:50])
def test_the_carried_command_is_extracted_not_guessed(template: str) -> None:
    carried = carried_commands(template.format(c="say hi"))
    assert "say hi" in carried.commands


@pytest.mark.parametrize("command", UNREADABLE, ids=lambda v: v[:50])
def test_what_cannot_be_read_is_refused_with_a_reason(command: str) -> None:
    judgement = NEVER.judge(command, None)
    assert judgement.refusal() is not None
    if "\\u0061" not in command:
        assert judgement.uncertain is not None


def test_an_escaped_key_is_decoded_before_it_is_judged() -> None:
    carried = carried_commands('data merge block 1 2 3 {"Comm\\u0061nd":"op Steve"}')
    assert carried.commands[1] == "op Steve"


@pytest.mark.parametrize("command", BENIGN)
def test_ordinary_commands_carry_nothing_never_listed(command: str) -> None:
    assert _refused(command) is None, command


@pytest.mark.parametrize(
    "command",
    [
        "execute if function ns:grant run say hi",
        "execute unless function minecraft:ns/op",
        "execute as @a if function ns:f",
        "return run function ns:grant",
    ],
)
def test_a_function_run_by_a_condition_is_judged_as_a_function(command: str) -> None:
    reason = _refused(command)
    assert reason is not None and "run_as_others" in reason


def test_command_blocks_themselves_are_a_never_category() -> None:
    for command in ("give @s command_block", "setblock ~ ~ ~ minecraft:chain_command_block"):
        reason = _refused(command)
        assert reason is not None and "command_blocks" in reason


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    command = "execute run " * (MAX_DEPTH + 1) + "say hi"
    with pytest.raises(UncertainCommand, match="nested"):
        carried_commands(command)


def test_a_quoted_layer_inside_a_quoted_layer_is_read() -> None:
    inner = '{\\"Command\\":\\"op Steve\\"}'
    carried = carried_commands(f'data merge storage x {{a:"{inner}"}}')
    assert "op Steve" in carried.commands
