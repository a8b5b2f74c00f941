"""The connected plugin as the link-backed tools see it, and which of them it can serve.

The app's ``LinkHandler`` calls ``connected``/``disconnected``; the snapshot tools and
``run_command`` ask ``link(feature)`` for the link and get an ``unavailable`` refusal while the
plugin is away or lacks the feature. ``offered`` takes a turn's tools and removes those the
connected plugin cannot serve, so the model is not shown tools that would only refuse.
"""

from __future__ import annotations

from collections.abc import Collection

from bridge.link.codes import ErrorCode as LinkCode
from bridge.link.errors import LinkRequestError
from bridge.link.handler import Link
from bridge.link.messages import Hello
from bridge.providers.items import ToolSpec
from bridge.tools.registry import TurnTools
from bridge.tools.results import ErrorCode, ToolFailure

SNAPSHOTS = "snapshots"
APPROVALS = "approvals"
GAME_FACTS = "game_facts"
SERVER_KNOWLEDGE = "server_knowledge"

# Handlers that need a plugin feature beyond protocol 1.0. run_command and online_players need
# only the link; confirmations inside run_command check APPROVALS themselves.
REQUIRED_FEATURE = {
    "player_snapshot": SNAPSHOTS,
    "item_inspect": SNAPSHOTS,
    "block_inspect": SNAPSHOTS,
    "ask_player": APPROVALS,
    "recipe_lookup": GAME_FACTS,
    "item_facts": GAME_FACTS,
    "list_plugins": SERVER_KNOWLEDGE,
    "list_commands": SERVER_KNOWLEDGE,
}
LINK_HANDLERS = frozenset({*REQUIRED_FEATURE, "online_players", "run_command"})


class PluginAccess:
    """The link to the plugin connected now and the features its ``hello`` announced."""

    def __init__(self) -> None:
        self._link: Link | None = None
        self._features: frozenset[str] = frozenset()
        self._hello: Hello | None = None

    def connected(self, link: Link, hello: Hello) -> None:
        self._link = link
        self._features = frozenset(hello.features)
        self._hello = hello

    def disconnected(self) -> None:
        self._link = None
        self._features = frozenset()
        self._hello = None

    @property
    def hello(self) -> Hello | None:
        """What the linked plugin said about itself and its server; None while unlinked."""
        return self._hello if self._link is not None else None

    @property
    def linked(self) -> bool:
        return self._link is not None and self._link.connected

    @property
    def features(self) -> frozenset[str]:
        return self._features if self._link is not None else frozenset()

    def has(self, feature: str) -> bool:
        return feature in self.features

    def link(self, feature: str | None = None) -> Link:
        """The link, or ``ToolFailure(unavailable)`` when it is down or lacks ``feature``."""
        link = self._link
        if link is None or not link.connected:
            raise ToolFailure(ErrorCode.UNAVAILABLE, "the Minecraft server is not connected")
        if feature is not None and feature not in self._features:
            raise ToolFailure(
                ErrorCode.UNAVAILABLE, f"the server's plugin does not support {feature}"
            )
        return link


def offered(tools: TurnTools, features: Collection[str], *, linked: bool = True) -> TurnTools:
    """``tools`` without the link tools the plugin cannot serve (all of them when not linked)."""
    kept = {
        name: tool
        for name, tool in tools.tools.items()
        if _servable(tool.entry.handler, features, linked=linked)
    }
    specs: tuple[ToolSpec, ...] = tuple(spec for spec in tools.specs if spec.name in kept)
    return TurnTools(specs=specs, tools=kept, admit=tools.admit)


def _servable(handler: str, features: Collection[str], *, linked: bool) -> bool:
    if handler not in LINK_HANDLERS:
        return True
    needed = REQUIRED_FEATURE.get(handler)
    return linked and (needed is None or needed in features)


def link_failure(exc: LinkRequestError, what: str) -> ToolFailure:
    """A failed request to the plugin as the tool error the model receives."""
    if exc.code is LinkCode.PLAYER_OFFLINE:
        return ToolFailure(ErrorCode.UNAVAILABLE, f"{what}: the player is not online")
    if exc.code is LinkCode.TIMEOUT:
        return ToolFailure(ErrorCode.TIMEOUT, f"{what}: the server did not answer in time")
    if exc.code in (LinkCode.DISCONNECTED, LinkCode.UNAVAILABLE, LinkCode.UNKNOWN_TYPE):
        return ToolFailure(ErrorCode.UNAVAILABLE, f"{what}: the server cannot answer now")
    # The plugin's own message may name internals; the code is enough for the model.
    return ToolFailure(ErrorCode.INTERNAL_ERROR, f"{what}: the server reported {exc.code}")
