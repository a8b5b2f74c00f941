"""What the running server has: ``list_plugins`` and ``list_commands``.

The plugin reads its plugin list and its command map (the same view of the map that
``command.resolve`` answers the never list from) and keeps only the commands the asker may run
by their permissions; the console may run every command. The bridge adds what only it knows:
which commands its whitelist lets the assistant run. Permission nodes never reach the model
(``docs/security.md``), so the plugin's answer is projected without them.
"""

from __future__ import annotations

import re
from typing import Any

from bridge.link.errors import LinkRequestError
from bridge.link.messages import (
    CommandView,
    ServerCommands,
    ServerCommandsResult,
    ServerPlugins,
    ServerPluginsResult,
    WireModel,
)
from bridge.policy.never_list import CommandIdentity
from bridge.policy.whitelist import Executor, Whitelist
from bridge.tools.plugin_access import SERVER_KNOWLEDGE, PluginAccess, link_failure
from bridge.tools.registry import CallContext, HandlerFn
from bridge.tools.results import ErrorCode, ToolFailure

PLUGINS_MAX_CHARS = 8000
COMMANDS_MAX_CHARS = 12000
"""The compact JSON the plugin may answer with (UTF-8 bytes): about 3,000 tokens."""
RULES_SHOWN = 4
"""The whitelist rules shown per command: enough to suggest a form, not the whole file."""
PLUGIN_FILTER_MAX = 64

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_WORD = r"[a-z0-9_:-]+"
_ROOT_WORD = re.compile(rf"\^?({_WORD})(?=$|\$| |\\s)")
_ROOT_GROUP = re.compile(rf"\^?\((?:\?:)?({_WORD}(?:\|{_WORD})*)\)(?=$|\$| |\\s)")
EXECUTORS: tuple[tuple[str, str], ...] = (
    ("player", "as the asking player"),
    ("console", "as the console"),
    ("console_confirm", "as the console after a second player confirms"),
)

COMMANDS_NOTE = (
    "Commands of this server {who} may run, from its command map. whitelisted lists the forms "
    "(patterns the whole command must match) the assistant may run with run_command; anything "
    "else only the player can run. Suggest only commands listed here."
)


def rule_roots(pattern: str) -> frozenset[str]:
    """The command roots a whitelist rule can match: its literal first word, or the words of a
    leading ``(a|b)`` group; none when the first word is itself a pattern (then the rule is not
    attributed to any command rather than guessed)."""
    for shape in (_ROOT_WORD, _ROOT_GROUP):
        found = shape.match(pattern)
        if found is not None:
            return frozenset(found.group(1).split("|"))
    return frozenset()


class ServerKnowledgeTools:
    """The two handlers, bound to one ``PluginAccess`` and the whitelist in force."""

    def __init__(self, plugin: PluginAccess, whitelist: Whitelist) -> None:
        self._plugin = plugin
        self._whitelist = whitelist

    def handlers(self) -> dict[str, HandlerFn]:
        return {"list_plugins": self.list_plugins, "list_commands": self.list_commands}

    async def list_plugins(self, arguments: dict[str, Any], context: CallContext) -> Any:
        _only(arguments, ())
        answer = await self._ask("server.plugins", ServerPlugins(max_chars=PLUGINS_MAX_CHARS))
        assert isinstance(answer, ServerPluginsResult)
        return {
            "plugins": [plugin.model_dump(mode="json") for plugin in answer.plugins],
            "total": answer.total,
            "truncated": answer.truncated,
        }

    async def list_commands(self, arguments: dict[str, Any], context: CallContext) -> Any:
        _only(arguments, ("plugin",))
        plugin = arguments.get("plugin")
        if plugin is not None and (
            not isinstance(plugin, str) or not plugin.strip() or len(plugin) > PLUGIN_FILTER_MAX
        ):
            raise ToolFailure(
                ErrorCode.INVALID_ARGUMENTS,
                f"plugin must be a plugin's name, 1-{PLUGIN_FILTER_MAX} characters",
            )
        player = context.player_uuid if _UUID.fullmatch(context.player_uuid) else None
        request = ServerCommands(player=player, plugin=plugin, max_chars=COMMANDS_MAX_CHARS)
        answer = await self._ask("server.commands", request)
        assert isinstance(answer, ServerCommandsResult)
        who = context.player_name if player is not None else "the console"
        return {
            "for": who,
            "commands": [self._shown(command) for command in answer.commands],
            "total": answer.total,
            "truncated": answer.truncated,
            "note": COMMANDS_NOTE.format(who=who),
        }

    def _shown(self, command: CommandView) -> dict[str, Any]:
        """One command as the model reads it: no permission node, the whitelist's forms added."""
        shown: dict[str, Any] = {"name": command.name, "plugin": command.plugin}
        if command.aliases:
            shown["aliases"] = list(command.aliases)
        if command.usage is not None:
            shown["usage"] = command.usage
        if command.description is not None:
            shown["description"] = command.description
        forms = self._whitelisted(command)
        if forms:
            shown["whitelisted"] = forms
        return shown

    def _whitelisted(self, command: CommandView) -> list[dict[str, str]]:
        whitelist = self._whitelist
        if not whitelist.enabled:
            return []
        identity = CommandIdentity(
            label=command.name,
            known=True,
            name=command.name,
            plugin=command.plugin,
            aliases=tuple(command.aliases),
            permission=command.permission,
        )
        # On the never list, only a rule with allow_never reaches it (as run_command judges).
        never = bool(whitelist.never.judge(command.name, {command.name: identity}).hits)
        labels = {command.name, *command.aliases}
        forms: list[dict[str, str]] = []
        for executor, how in EXECUTORS:
            for rule, opted_out in _rules_of(whitelist, executor):
                if len(forms) < RULES_SHOWN and rule_roots(rule) & labels:
                    if opted_out or not never:
                        forms.append({"form": rule, "runs": how})
        return forms

    async def _ask(self, name: str, request: WireModel) -> WireModel:
        link = self._plugin.link(SERVER_KNOWLEDGE)
        try:
            return await link.request(name, request)
        except LinkRequestError as exc:
            raise link_failure(exc, name) from exc


def _rules_of(whitelist: Whitelist, executor: str) -> list[tuple[str, bool]]:
    """``executor``'s rules (``console_confirm`` for the two-person list) with whether each
    opted out of the never list."""
    if executor == "console_confirm":
        return [(r, whitelist.confirm_opts_out(r)) for r in whitelist.console_confirm_rules]
    runs: Executor = "player" if executor == "player" else "console"
    return [(r, whitelist.opts_out(runs, r)) for r in whitelist.rules(runs)]


def _only(arguments: dict[str, Any], known: tuple[str, ...]) -> None:
    extra = sorted(set(arguments) - set(known))
    if extra:
        raise ToolFailure(ErrorCode.INVALID_ARGUMENTS, f"unknown argument {extra[0]!r}")
