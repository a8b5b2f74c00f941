"""The never-list judgement of a command with the server's answer: ``command.resolve``.

Every path that dispatches a command the model or a Function asked for (``run_command``'s
own, console, confirmed and two-person paths, and Functions' ``command.dispatch``) asks this
before any prompt and again right before the dispatch: the command map may change while a
player reads a prompt. The labels of the command and of every command it carries are resolved
in one request; a plugin without the ``command.resolve`` feature cannot say what a label runs,
so nothing is dispatched through it.
"""

from __future__ import annotations

import dataclasses

from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link
from bridge.link.messages import CommandResolve, CommandResolveResult
from bridge.policy.nested_commands import UncertainCommand
from bridge.policy.never_list import CommandIdentity, Judgement, NeverList
from bridge.tools.plugin_access import PluginAccess, link_failure

RESOLVE = "command.resolve"
"""The plugin feature (and link request) that resolves command labels."""
NO_RESOLUTION = (
    "the server's plugin cannot resolve command labels (command.resolve), so the bridge cannot"
    " tell what this command runs: update the plugin"
)


class CommandJudge:
    """Judges canonical commands against ``never`` with the connected server's command map."""

    def __init__(self, plugin: PluginAccess, never: NeverList) -> None:
        self._plugin = plugin
        self._never = never

    async def judge(self, link: Link, canonical: str, *, tool: str) -> Judgement:
        """``tool`` names the caller in a link failure. Raises ``ToolFailure`` when the link
        fails (nothing was dispatched)."""
        try:
            labels = self._never.labels(canonical)
        except UncertainCommand:
            return self._never.judge(canonical, None)  # says why it is uncertain
        if not self._plugin.has(RESOLVE):
            offline = self._never.judge(canonical, None)
            return dataclasses.replace(offline, unknown=(NO_RESOLUTION,))
        try:
            answer = await link.request(RESOLVE, CommandResolve(labels=list(labels)))
        except LinkRequestError as exc:
            raise link_failure(exc, tool) from exc
        assert isinstance(answer, CommandResolveResult)
        identities = {
            item.label: CommandIdentity(
                label=item.label,
                known=item.known,
                name=item.name,
                plugin=item.plugin,
                aliases=tuple(item.aliases),
                permission=item.permission,
                script=item.script,
            )
            for item in answer.commands
        }
        # A label the plugin left out of its answer counts as unknown (judge says so).
        return self._never.judge(canonical, identities)
