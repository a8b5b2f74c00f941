"""``list_plugins`` and ``list_commands`` against a scripted link: what is asked of the plugin
(the asker, never a permission), how the answer reaches the model (no permission node, the
whitelist's forms marked, never-list commands unmarked) and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.control.whitelist_file import RuleSpec
from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    ServerCommands,
    ServerCommandsResult,
    ServerPlugins,
    ServerPluginsResult,
    WireModel,
)
from bridge.policy.whitelist import Whitelist
from bridge.tools.results import ErrorCode, ToolFailure
from bridge.tools.server_knowledge import (
    COMMANDS_MAX_CHARS,
    PLUGINS_MAX_CHARS,
    ServerKnowledgeTools,
    rule_roots,
)

from .plugin_fakes import STEVE, FakeLink, access, context

TIME = {
    "name": "time",
    "plugin": "minecraft",
    "aliases": [],
    "permission": "minecraft.command.time",
    "usage": "/time (add|query|set) <time>",
    "description": "A Mojang provided command.",
}
WARP = {
    "name": "warp",
    "plugin": "Warps",
    "aliases": ["go"],
    "permission": "warps.use",
    "usage": "/warp <name>",
    "description": None,
}
SUDO = {
    "name": "sudo",
    "plugin": "Essentials",
    "aliases": ["esudo"],
    "permission": "essentials.sudo",
    "usage": None,
    "description": None,
}
WHITELIST = Whitelist(
    player=["go [a-z]{1,16}", "spawn"],
    console=[
        "time set (day|night)",
        "(weather|time) query",
        "sudo .*",
        "[a-z]+ list",
        RuleSpec(rule="sudo [a-z]+ list", allow_never=True),
    ],
    never=["sudo"],
    never_categories={},
)


def _commands(*commands: dict[str, Any], total: int | None = None) -> Any:
    def answer(data: WireModel) -> WireModel:
        assert isinstance(data, ServerCommands)
        return ServerCommandsResult.model_validate(
            {
                "commands": list(commands),
                "total": len(commands) if total is None else total,
                "truncated": total is not None and total > len(commands),
            }
        )

    return answer


def _tools(link: FakeLink, whitelist: Whitelist = WHITELIST) -> ServerKnowledgeTools:
    return ServerKnowledgeTools(access(link, ("server_knowledge",)), whitelist)


async def test_list_commands_asks_for_the_askers_commands_and_hides_permission_nodes() -> None:
    link = FakeLink({"server.commands": _commands(TIME, WARP, SUDO, total=40)})
    result = await _tools(link).list_commands({}, context())
    assert link.of("server.commands") == [
        ServerCommands(player=STEVE.uuid, plugin=None, max_chars=COMMANDS_MAX_CHARS)
    ]
    assert result["for"] == "Steve" and result["total"] == 40 and result["truncated"] is True
    assert "permission" not in repr(result["commands"]) and "warps.use" not in repr(result)
    time, warp, sudo = result["commands"]
    assert time["whitelisted"] == [
        {"form": "time set (day|night)", "runs": "as the console"},
        {"form": "(weather|time) query", "runs": "as the console"},
    ]
    # A rule may name the command by an alias.
    assert warp == {
        "name": "warp",
        "plugin": "Warps",
        "aliases": ["go"],
        "usage": "/warp <name>",
        "whitelisted": [{"form": "go [a-z]{1,16}", "runs": "as the asking player"}],
    }
    # On the never list: only the rule with allow_never reaches it.
    assert sudo["whitelisted"] == [{"form": "sudo [a-z]+ list", "runs": "as the console"}]
    assert "Suggest only commands listed here" in result["note"]


async def test_the_console_asks_for_every_command_and_a_plugin_filter_is_passed_on() -> None:
    link = FakeLink({"server.commands": _commands(WARP)})
    console = context().__class__(
        turn_id="t", call_id="c", player_uuid="console", player_name="console"
    )
    result = await _tools(link).list_commands({"plugin": "Warps"}, console)
    assert link.of("server.commands")[0] == ServerCommands(
        player=None, plugin="Warps", max_chars=COMMANDS_MAX_CHARS
    )
    assert result["for"] == "the console"


async def test_a_disabled_whitelist_marks_nothing() -> None:
    link = FakeLink({"server.commands": _commands(TIME, WARP)})
    off = Whitelist(enabled=False, console=["time set (day|night)"])
    result = await _tools(link, off).list_commands({}, context())
    assert all("whitelisted" not in command for command in result["commands"])


async def test_list_plugins_shows_what_the_server_says() -> None:
    plugin = {"name": "Warps", "version": "1.0", "enabled": False, "description": "Places"}
    link = FakeLink(
        {
            "server.plugins": lambda _: ServerPluginsResult.model_validate(
                {"plugins": [plugin], "total": 1, "truncated": False}
            )
        }
    )
    result = await _tools(link).list_plugins({}, context())
    assert link.of("server.plugins") == [ServerPlugins(max_chars=PLUGINS_MAX_CHARS)]
    assert result == {"plugins": [plugin], "total": 1, "truncated": False}


@pytest.mark.parametrize(
    ("rule", "roots"),
    [
        ("time set (day|night)", {"time"}),
        ("list", {"list"}),
        ("^spawn$", {"spawn"}),
        ("(weather|time) query", {"weather", "time"}),
        ("(?:warp|go) .*", {"warp", "go"}),
        ("minecraft:give .*", {"minecraft:give"}),
        ("[a-z]+ list", set()),
        ("tim.? set", set()),
        ("times? set", set()),
        ("(time|weath.r) set", set()),
    ],
)
def test_a_rule_is_attributed_only_to_the_roots_it_names_literally(
    rule: str, roots: set[str]
) -> None:
    assert rule_roots(rule) == roots


@pytest.mark.parametrize(
    ("handler", "arguments", "reason"),
    [
        ("list_plugins", {"all": True}, "unknown argument 'all'"),
        ("list_commands", {"plugin": ""}, "plugin must be"),
        ("list_commands", {"plugin": "x" * 65}, "plugin must be"),
        ("list_commands", {"plugin": 3}, "plugin must be"),
        ("list_commands", {"player": "Alex"}, "unknown argument 'player'"),
    ],
)
async def test_bad_arguments_are_refused_before_the_plugin_is_asked(
    handler: str, arguments: dict[str, Any], reason: str
) -> None:
    link = FakeLink()
    with pytest.raises(ToolFailure) as refused:
        await _tools(link).handlers()[handler](arguments, context())
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS and reason in str(refused.value)
    assert link.sent == []


async def test_a_plugin_without_the_feature_is_not_asked() -> None:
    link = FakeLink()
    tools = ServerKnowledgeTools(access(link, ("game_facts",)), WHITELIST)
    with pytest.raises(ToolFailure) as refused:
        await tools.list_commands({}, context())
    assert refused.value.code is ErrorCode.UNAVAILABLE and link.sent == []


async def test_a_player_gone_offline_is_reported_as_unavailable() -> None:
    def gone(_: WireModel) -> WireModel:
        raise LinkRequestError(LinkCode.PLAYER_OFFLINE, "gone")

    link = FakeLink({"server.commands": gone})
    with pytest.raises(ToolFailure) as refused:
        await _tools(link).list_commands({}, context())
    assert refused.value.code is ErrorCode.UNAVAILABLE and "not online" in str(refused.value)
