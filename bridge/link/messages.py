"""Pydantic wire models for every message type of link protocol v1, and the type registry.

The models mirror ``docs/protocol/schema.json`` field for field; ``tests/link/test_vectors.py``
runs the shared vectors through both, so a drift between them fails a test. Every model refuses
unknown fields and validates strictly (no ``"3"`` for ``3``), because the Java side does too.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
TYPE_PATTERN = r"^[a-z][a-z0-9_.]{0,63}$"
UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
PLAYER_NAME_PATTERN = r"^[.]?[A-Za-z0-9_]{1,16}$"

_T = TypeVar("_T", bound=Hashable)


def _unique(items: list[_T]) -> list[_T]:
    if len(set(items)) != len(items):
        raise ValueError("items must not repeat")
    return items


class WireModel(BaseModel):
    """Base of every ``data`` model: strict, closed, immutable.

    A model with optional fields derives from ``WireModelWithOptionals`` instead; this is
    checked when the class is made, so the per-frame cost of that care is paid only by the few
    models that need it.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        optional = [name for name, field in cls.model_fields.items() if not field.is_required()]
        if optional and not issubclass(cls, WireModelWithOptionals):
            raise TypeError(
                f"{cls.__name__} has optional {optional}: derive from WireModelWithOptionals"
            )


class WireModelWithOptionals(WireModel):
    """A wire model with optional fields (default ``None``): absent on the wire, never ``null``.

    The schema has no ``null`` for them, so an explicit ``null`` is refused on input and the
    field is omitted on output. Fields that are required and nullable (``notice``,
    ``feedback``) have no default and keep their ``null``.
    """

    @model_validator(mode="before")
    @classmethod
    def _optional_fields_are_absent_not_null(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, field in cls.model_fields.items():
                if name in value and value[name] is None and not field.is_required():
                    raise ValueError(f"{name} must be left out rather than null")
        return value

    @model_serializer(mode="wrap")
    def _drop_absent_optionals(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        return {
            key: value
            for key, value in dumped.items()
            if not (value is None and key in fields and not fields[key].is_required())
        }


Id = Annotated[str, Field(pattern=ID_PATTERN)]
Uuid = Annotated[str, Field(pattern=UUID_PATTERN)]
Version = Annotated[str, Field(min_length=1, max_length=64)]
Nonce = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{43}$")]
Feature = Annotated[str, Field(pattern=TYPE_PATTERN)]
Short = Annotated[int, Field(ge=0, le=65535)]
Permission = Literal[
    "mineclaw.command.chat",
    "mineclaw.command.approve",
    "mineclaw.command.listen",
    "mineclaw.command.reload",
    "mineclaw.command.compact",
    "mineclaw.command.clear",
    "mineclaw.command.stop",
    "mineclaw.command.model",
    "mineclaw.command.tools",
    "mineclaw.command.functions",
    "mineclaw.bypass.ratelimit",
    "mineclaw.tool.run_command",
    "mineclaw.command.private",
    "mineclaw.approve.console",
    "mineclaw.usage.others",
]
BUDGET_TIERS_MAX = 16
BudgetTier = Annotated[str, Field(pattern=r"^[a-z0-9_-]{1,32}$")]
BudgetNode = Annotated[str, Field(pattern=r"^mineclaw\.budget\.[a-z0-9_-]{1,32}$")]
"""A budget tier's node: a plugin with the ``budgets`` feature reports the tiers
``link.state`` named."""
REPORT_NODES_MAX = 32
ReportNode = Annotated[
    str,
    Field(max_length=128, pattern=r"^[a-z0-9_-]{1,32}(\.[a-z0-9_-]{1,32}){0,7}$"),
]
"""Another node the bridge decides by (a tool's ``permission``): a plugin with the
``report_nodes`` feature reports those ``link.state`` named."""
Granted = Annotated[
    list[Permission | BudgetNode | ReportNode],
    Field(max_length=len(get_args(Permission)) + BUDGET_TIERS_MAX + REPORT_NODES_MAX),
    AfterValidator(_unique),
]
TextName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
TextMap = Annotated[dict[TextName, Annotated[str, Field(max_length=8192)]], Field(max_length=16)]
SentErrorCode = Literal[
    "MALFORMED_FRAME",
    "INVALID_ENVELOPE",
    "UNSUPPORTED_VERSION",
    "UNKNOWN_TYPE",
    "INVALID_DATA",
    "DUPLICATE_ID",
    "UNEXPECTED_ANSWER",
    "NOT_READY",
    "AUTH_FAILED",
    "PLAYER_OFFLINE",
    "UNAVAILABLE",
    "INTERNAL",
]


class PlayerRef(WireModel):
    uuid: Uuid
    name: Annotated[str, Field(pattern=PLAYER_NAME_PATTERN)]


class Text(WireModelWithOptionals):
    """Text the plugin renders: a trusted template with plain and model-written placeholders."""

    template: Annotated[str, Field(min_length=1, max_length=2048)]
    values: TextMap | None = None
    model: TextMap | None = None


def _player_exactly_when(selector: str, wanted: str, player: object | None) -> None:
    _field_exactly_when("player", selector, wanted, player)


def _field_exactly_when(field: str, selector: str, wanted: str, value: object | None) -> None:
    if (selector == wanted) != (value is not None):
        if value is None:
            raise ValueError(f"{field} is required when the value is {wanted!r}")
        raise ValueError(f"{field} is only allowed when the value is {wanted!r}")


# ---- handshake


class ProtocolVersion(WireModel):
    major: Short
    minor: Short


SERVER_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
ServerId = Annotated[str, Field(pattern=SERVER_ID_PATTERN)]


class Hello(WireModelWithOptionals):
    protocol: ProtocolVersion
    nonce: Nonce
    mac: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    instance_id: Uuid
    plugin_version: Version
    minecraft_version: Version
    platform: Literal["paper", "folia", "testkit"]
    features: Annotated[list[Feature], Field(max_length=32), AfterValidator(_unique)]
    server_id: ServerId | None = None
    """Which server of the bridge's ``servers.yml`` this is; absent: the default server."""
    data_version: Annotated[int, Field(ge=1, le=2147483647)] | None = None
    """The server's data version (since 1.3); absent when the plugin does not know it."""


class HelloResult(WireModel):
    bridge_version: Version
    session_id: Id


class HelloChallenge(WireModel):
    nonce: Nonce
    protocol: Short
    bridge_version: Version


class LinkState(WireModelWithOptionals):
    forward: Literal["all", "prefixed"]
    public_prefix: Annotated[str, Field(min_length=1, max_length=32)]
    budget_tiers: (
        Annotated[list[BudgetTier], Field(max_length=BUDGET_TIERS_MAX), AfterValidator(_unique)]
        | None
    ) = None
    """The tiers whose ``mineclaw.budget.<tier>`` nodes the plugin reports (sent only to a
    plugin announcing the ``budgets`` feature)."""
    report_nodes: (
        Annotated[list[ReportNode], Field(max_length=REPORT_NODES_MAX), AfterValidator(_unique)]
        | None
    ) = None
    """Other nodes the plugin reports when a sender holds them (sent only to a plugin
    announcing the ``report_nodes`` feature)."""
    asks: Literal[True] | None = None
    """The bridge takes ``ask`` ids on ``chat`` and ``command`` (sent only to a plugin
    announcing the ``asks`` feature)."""


# ---- plugin to bridge


class ChatRequest(WireModelWithOptionals):
    player: PlayerRef
    granted: Granted
    text: Annotated[str, Field(min_length=1, max_length=4096)]
    ask: Id | None = None
    """The wake's own id (since 1.5, feature ``asks``): the plugin keeps the question until
    the bridge ends it, and sends it again under the same id to the bridge it links to next."""
    resent: bool | None = None
    """True on a question sent again after a relink (only with ``ask``)."""

    @model_validator(mode="after")
    def _resent_only_with_ask(self) -> ChatRequest:
        _resent_only_with_ask(self.ask, self.resent)
        return self


class ChatVerdict(WireModel):
    decision: Literal["pass", "accept", "refuse"]
    ai_prefix: bool
    notice: Text | None


class CommandSender(WireModelWithOptionals):
    kind: Literal["player", "console"]
    player: PlayerRef | None = None
    granted: Granted

    @model_validator(mode="after")
    def _player_only_for_players(self) -> CommandSender:
        _player_exactly_when(self.kind, "player", self.player)
        return self


class CommandRequest(WireModelWithOptionals):
    sender: CommandSender
    args: Annotated[list[Annotated[str, Field(min_length=1, max_length=256)]], Field(max_length=16)]
    ask: Id | None = None
    """An ``/ai`` question's own id (since 1.5, feature ``asks``), as on ``chat``."""
    resent: bool | None = None

    @model_validator(mode="after")
    def _resent_only_with_ask(self) -> CommandRequest:
        _resent_only_with_ask(self.ask, self.resent)
        return self


def _resent_only_with_ask(ask: str | None, resent: bool | None) -> None:
    if resent is not None and ask is None:
        raise ValueError("resent is only allowed with ask")


class CommandReply(WireModel):
    lines: Annotated[list[Text], Field(max_length=64)]


class PlayerEvent(WireModel):
    """The data of ``player.join`` and ``player.quit``."""

    player: PlayerRef


class ChatExpired(WireModel):
    """The data of ``chat.expired``: the plugin stopped waiting for this ``chat`` request's verdict.

    The plugin already treated the message as unanswered (an ordinary one passed untouched, a wake
    was cancelled with the offline line), so whatever the verdict was, the bridge must drop it.
    """

    request: Id


# ---- bridge to plugin


class AskDone(WireModel):
    """The data of ``ask.done`` (since 1.5, feature ``asks``): the question with this id ended
    (answered, its asker told, or stopped); the plugin forgets it."""

    ask: Id


class OutputChat(WireModelWithOptionals):
    target: Literal["broadcast", "player"]
    player: Uuid | None = None
    text: Text
    ask: Id | None = None
    """The question this line answers or ends (since 1.5, feature ``asks``): the plugin
    forgets the question it kept under that id, so it is never sent again."""

    @model_validator(mode="after")
    def _player_only_for_player_target(self) -> OutputChat:
        _player_exactly_when(self.target, "player", self.player)
        return self


class OutputChatResult(WireModel):
    delivered: Annotated[int, Field(ge=0, le=2147483647)]


class OutputActionbar(WireModel):
    player: Uuid
    text: Text


class PlayersList(WireModel):
    pass


class PlayersListResult(WireModel):
    players: Annotated[list[PlayerRef], Field(max_length=800)]


class CommandDispatch(WireModelWithOptionals):
    executor: Literal["console", "player"]
    player: Uuid | None = None
    command: Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^/]")]

    @model_validator(mode="after")
    def _player_only_for_player_executor(self) -> CommandDispatch:
        _player_exactly_when(self.executor, "player", self.player)
        return self


class CommandDispatchResult(WireModel):
    dispatch_status: Literal["dispatched", "rejected", "failed"]
    feedback: Annotated[list[Annotated[str, Field(max_length=2048)]], Field(max_length=64)] | None


# ---- bridge to plugin: command resolution (feature "command.resolve")

CommandLabel = Annotated[str, Field(pattern=r"^[^\s/][^\s]{0,79}$")]
CommandName = Annotated[str, Field(pattern=r"^[^\s]{1,80}$")]


class CommandResolve(WireModel):
    """Labels to look up in the server's command map (the first word of each command)."""

    labels: Annotated[list[CommandLabel], Field(min_length=1, max_length=64)]


class ResolvedCommand(WireModel):
    label: CommandLabel
    known: bool
    name: CommandName | None
    plugin: Annotated[str, Field(min_length=1, max_length=64)] | None
    aliases: Annotated[list[CommandName], Field(max_length=64)]
    permission: Annotated[str, Field(min_length=1, max_length=256)] | None
    script: bool

    @model_validator(mode="after")
    def _facts_only_when_known(self) -> ResolvedCommand:
        if self.known and self.name is None:
            raise ValueError("a known command has a name")
        if not self.known and (
            self.name is not None
            or self.plugin is not None
            or self.aliases
            or self.permission is not None
            or self.script
        ):
            raise ValueError("an unknown label has no name, plugin, aliases or permission")
        return self


class CommandResolveResult(WireModel):
    commands: Annotated[list[ResolvedCommand], Field(max_length=64)]


# ---- bridge to plugin, minor version 1.1: snapshots (feature "snapshots")

NamespacedKey = Annotated[str, Field(pattern=r"^[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}$")]
WorldName = Annotated[str, Field(min_length=1, max_length=64)]
Int32 = Annotated[int, Field(ge=-2147483648, le=2147483647)]
Light = Annotated[int, Field(ge=0, le=15)]
Coordinate = Annotated[float, Field(ge=-1e9, le=1e9)]
Amount = Annotated[float, Field(ge=0, le=1e9)]


class SnapshotPlayer(WireModel):
    player: Uuid


class Position(WireModel):
    x: Coordinate
    y: Coordinate
    z: Coordinate


class Facing(WireModel):
    yaw: Annotated[float, Field(ge=-180, le=180)]
    pitch: Annotated[float, Field(ge=-90, le=90)]


class MovementState(WireModel):
    on_ground: bool
    sneaking: bool
    sprinting: bool
    swimming: bool
    gliding: bool
    flying: bool
    in_water: bool
    in_lava: bool
    sleeping: bool


class Surroundings(WireModel):
    time_of_day: Annotated[int, Field(ge=0, le=23999)]
    weather: Literal["clear", "rain", "thunder"]
    biome: NamespacedKey
    light: Light


class ActiveEffect(WireModel):
    type: NamespacedKey
    amplifier: Int32
    duration_ticks: Annotated[int, Field(ge=-1, le=2147483647)]


class SnapshotPlayerResult(WireModel):
    player: PlayerRef
    world: WorldName
    dimension: Literal["overworld", "nether", "end", "custom"]
    position: Position
    facing: Facing
    health: Amount
    max_health: Amount
    food: Annotated[int, Field(ge=0, le=20)]
    saturation: Amount
    level: Int32
    game_mode: Literal["survival", "creative", "adventure", "spectator"]
    state: MovementState
    environment: Surroundings
    effects: Annotated[list[ActiveEffect], Field(max_length=32)]


ItemMode = Literal[
    "inventory", "slot", "main_hand", "off_hand", "helmet", "chestplate", "leggings", "boots"
]


class SnapshotItem(WireModelWithOptionals):
    player: Uuid
    mode: ItemMode
    slot: Annotated[int, Field(ge=0, le=40)] | None = None
    max_slots: Annotated[int, Field(ge=1, le=41)]
    max_chars: Annotated[int, Field(ge=256, le=16384)]

    @model_validator(mode="after")
    def _slot_only_for_slot_mode(self) -> SnapshotItem:
        _field_exactly_when("slot", self.mode, "slot", self.slot)
        return self


class UntrustedText(WireModel):
    """Text a player wrote (an item name): data for the model, never an instruction."""

    untrusted_text: Annotated[str, Field(max_length=128)]


class Enchantment(WireModel):
    id: NamespacedKey
    level: Int32


class Damage(WireModel):
    current: Int32
    max: Int32


class ItemView(WireModel):
    slot: Annotated[
        str,
        Field(
            pattern=r"^([0-9]|[12][0-9]|3[0-5]|helmet|chestplate|leggings|boots|off_hand|main_hand)$"
        ),
    ]
    type: NamespacedKey
    amount: Annotated[int, Field(ge=1, le=127)]
    custom_name: UntrustedText | None
    enchantments: Annotated[list[Enchantment], Field(max_length=16)]
    damage: Damage | None


class SnapshotItemResult(WireModel):
    items: Annotated[list[ItemView], Field(max_length=41)]
    truncated: bool


class SnapshotBlock(WireModel):
    player: Uuid
    mode: Literal["look", "feet"]
    distance: Annotated[int, Field(ge=1, le=128)]


BlockProperty = Literal[
    "facing",
    "half",
    "axis",
    "age",
    "level",
    "powered",
    "open",
    "lit",
    "waterlogged",
    "type",
    "shape",
    "part",
    "occupied",
    "hinge",
    "rotation",
    "power",
    "layers",
    "distance",
    "persistent",
    "snowy",
]


class BlockPosition(WireModel):
    x: Int32
    y: Int32
    z: Int32


class BlockView(WireModel):
    type: NamespacedKey
    position: BlockPosition
    world: WorldName
    properties: Annotated[
        dict[BlockProperty, Annotated[str, Field(min_length=1, max_length=64)]],
        Field(max_length=16),
    ]
    light: Light


class SnapshotBlockResult(WireModel):
    result: Literal["hit", "miss", "unloaded"]
    block: BlockView | None

    @model_validator(mode="after")
    def _block_exactly_on_hit(self) -> SnapshotBlockResult:
        _field_exactly_when("block", self.result, "hit", self.block)
        return self


# ---- bridge to plugin, minor version 1.1: approval prompts (feature "approvals")

APPROVAL_TOKEN_PATTERN = r"^[A-Za-z0-9_-]{22,64}$"


class ApprovalButton(WireModel):
    label: Text
    hover: Text | None
    answer: Literal["approve", "deny"]
    option: Annotated[str, Field(pattern=r"^[a-z0-9_-]{1,32}$")] | None


class ApprovalShow(WireModelWithOptionals):
    player: Uuid
    token: Annotated[str, Field(pattern=APPROVAL_TOKEN_PATTERN)]
    prompt: Text
    buttons: Annotated[list[ApprovalButton], Field(min_length=1, max_length=8)]
    expires_ms: Annotated[int, Field(ge=1000, le=600000)]
    gesture: bool | None = None
    """True: the player may also approve with a gesture (plugins with the ``gestures``
    feature); left out otherwise, so a plugin without it never sees the field."""


class ApprovalShowResult(WireModel):
    shown: bool


# ---- bridge to plugin, minor version 1.3: game facts (feature "game_facts")

GameFactsQuery = Annotated[str, Field(min_length=1, max_length=128)]
Count32 = Annotated[int, Field(ge=0, le=2147483647)]
RecipeKind = Literal[
    "shaped",
    "shapeless",
    "smelting",
    "blasting",
    "smoking",
    "campfire",
    "stonecutting",
    "smithing_transform",
    "smithing_trim",
    "other",
]
COOKING_KINDS = frozenset({"smelting", "blasting", "smoking", "campfire"})


class FactsRecipes(WireModel):
    item: GameFactsQuery
    direction: Literal["makes", "uses"]
    limit: Annotated[int, Field(ge=1, le=32)]
    max_chars: Annotated[int, Field(ge=256, le=16384)]


class FactsItem(WireModel):
    item: GameFactsQuery


class GameQuery(WireModel):
    """How the plugin read the name: ``item`` only when ``exact``, ``suggestions`` only when
    ``near`` (never a silent guess)."""

    match: Literal["exact", "near", "none"]
    item: NamespacedKey | None
    suggestions: Annotated[list[NamespacedKey], Field(max_length=8)]

    @model_validator(mode="after")
    def _item_exactly_when_exact(self) -> GameQuery:
        _field_exactly_when("item", self.match, "exact", self.item)
        if (self.match == "near") != bool(self.suggestions):
            raise ValueError("suggestions are given exactly when the match is near")
        return self


class RecipeResult(WireModel):
    item: NamespacedKey
    count: Annotated[int, Field(ge=1, le=127)]


ItemOrTag = Annotated[
    str, Field(max_length=257, pattern=r"^#?[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}$")
]
"""An item key, or ``#`` and a tag key when the ingredient accepts exactly that tag's items."""


class RecipeIngredient(WireModel):
    slot: Annotated[str, Field(pattern=r"^([A-I]|[1-9]|input|template|base|addition)$")]
    options: Annotated[list[ItemOrTag], Field(min_length=1, max_length=8)]
    more: Count32


class RecipeView(WireModel):
    key: NamespacedKey
    kind: RecipeKind
    result: RecipeResult | None
    pattern: (
        Annotated[
            list[Annotated[str, Field(pattern=r"^[A-I ]{1,3}$")]], Field(min_length=1, max_length=3)
        ]
        | None
    )
    ingredients: Annotated[list[RecipeIngredient], Field(max_length=9)]
    cook_ticks: Count32 | None
    experience: Amount | None

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> RecipeView:
        if (self.kind == "shaped") != (self.pattern is not None):
            raise ValueError("pattern is given exactly for a shaped recipe")
        cooks = self.kind in COOKING_KINDS
        if cooks != (self.cook_ticks is not None) or cooks != (self.experience is not None):
            raise ValueError("cook_ticks and experience are given exactly for a cooking recipe")
        return self


class FactsRecipesResult(WireModel):
    query: GameQuery
    recipes: Annotated[list[RecipeView], Field(max_length=32)]
    total: Count32
    truncated: bool


class ItemTypeView(WireModel):
    key: NamespacedKey
    max_stack: Annotated[int, Field(ge=1, le=99)]
    durability: Count32
    edible: bool
    fuel: bool
    block: bool
    rarity: Literal["common", "uncommon", "rare", "epic"] | None
    tags: Annotated[list[NamespacedKey], Field(max_length=32)]
    more_tags: Count32
    recipes_making: Count32
    recipes_using: Count32


class FactsItemResult(WireModel):
    query: GameQuery
    facts: ItemTypeView | None

    @model_validator(mode="after")
    def _facts_exactly_when_exact(self) -> FactsItemResult:
        _field_exactly_when("facts", self.query.match, "exact", self.facts)
        return self


# ---- bridge to plugin, minor version 1.4: server knowledge (feature "server_knowledge")

KnowledgeChars = Annotated[int, Field(ge=256, le=24576)]
DeclaredText = Annotated[str, Field(min_length=1, max_length=256)]
PluginName = Annotated[str, Field(min_length=1, max_length=64)]


class ServerPlugins(WireModel):
    max_chars: KnowledgeChars


class PluginView(WireModel):
    name: PluginName
    version: Version | None
    enabled: bool
    description: DeclaredText | None


class ServerPluginsResult(WireModel):
    plugins: Annotated[list[PluginView], Field(max_length=256)]
    total: Count32
    truncated: bool


class ServerCommands(WireModel):
    """The commands ``player`` may run (every command for ``None``: the console), only
    ``plugin``'s when given."""

    player: Uuid | None
    plugin: PluginName | None
    max_chars: KnowledgeChars


class CommandView(WireModel):
    name: CommandName
    plugin: PluginName | None
    aliases: Annotated[list[CommandName], Field(max_length=16)]
    permission: DeclaredText | None
    usage: DeclaredText | None
    description: DeclaredText | None


class ServerCommandsResult(WireModel):
    commands: Annotated[list[CommandView], Field(max_length=512)]
    total: Count32
    truncated: bool


class OutputBook(WireModel):
    """A written book opened on ``player``'s screen (feature ``books``); no item is given."""

    player: Uuid
    title: Annotated[str, Field(min_length=1, max_length=32)]
    pages: Annotated[list[Text], Field(min_length=1, max_length=100)]


class OutputBookResult(WireModel):
    shown: bool


class ErrorData(WireModel):
    code: SentErrorCode
    message: Annotated[str, Field(max_length=512)]


# ---- the registry


class Direction(StrEnum):
    PLUGIN_TO_BRIDGE = "plugin_to_bridge"
    BRIDGE_TO_PLUGIN = "bridge_to_plugin"


class Kind(StrEnum):
    REQUEST = "request"
    EVENT = "event"
    ANSWER = "answer"
    ERROR = "error"


@dataclass(frozen=True)
class MessageType:
    """One type as a receiver sees it: who sends it, what kind it is, the model of its data."""

    name: str
    kind: Kind
    sender: Direction
    data: type[WireModel]


def _types(
    sender: Direction, rows: Sequence[tuple[str, Kind, type[WireModel]]]
) -> dict[str, MessageType]:
    return {name: MessageType(name, kind, sender, model) for name, kind, model in rows}


_P, _B = Direction.PLUGIN_TO_BRIDGE, Direction.BRIDGE_TO_PLUGIN
_R, _E, _A = Kind.REQUEST, Kind.EVENT, Kind.ANSWER

MESSAGE_TYPES: dict[Direction, dict[str, MessageType]] = {
    _P: _types(
        _P,
        [
            ("hello", _R, Hello),
            ("chat", _R, ChatRequest),
            ("command", _R, CommandRequest),
            ("player.join", _E, PlayerEvent),
            ("player.quit", _E, PlayerEvent),
            ("chat.expired", _E, ChatExpired),
            ("output.chat.result", _A, OutputChatResult),
            ("players.list.result", _A, PlayersListResult),
            ("command.dispatch.result", _A, CommandDispatchResult),
            ("command.resolve.result", _A, CommandResolveResult),
            ("snapshot.player.result", _A, SnapshotPlayerResult),
            ("snapshot.item.result", _A, SnapshotItemResult),
            ("snapshot.block.result", _A, SnapshotBlockResult),
            ("approval.show.result", _A, ApprovalShowResult),
            ("facts.recipes.result", _A, FactsRecipesResult),
            ("facts.item.result", _A, FactsItemResult),
            ("server.plugins.result", _A, ServerPluginsResult),
            ("server.commands.result", _A, ServerCommandsResult),
            ("output.book.result", _A, OutputBookResult),
            ("error", Kind.ERROR, ErrorData),
        ],
    ),
    _B: _types(
        _B,
        [
            ("hello.challenge", _E, HelloChallenge),
            ("link.state", _E, LinkState),
            ("ask.done", _E, AskDone),
            ("output.chat", _R, OutputChat),
            ("output.actionbar", _E, OutputActionbar),
            ("players.list", _R, PlayersList),
            ("command.dispatch", _R, CommandDispatch),
            ("command.resolve", _R, CommandResolve),
            ("snapshot.player", _R, SnapshotPlayer),
            ("snapshot.item", _R, SnapshotItem),
            ("snapshot.block", _R, SnapshotBlock),
            ("approval.show", _R, ApprovalShow),
            ("facts.recipes", _R, FactsRecipes),
            ("facts.item", _R, FactsItem),
            ("server.plugins", _R, ServerPlugins),
            ("server.commands", _R, ServerCommands),
            ("output.book", _R, OutputBook),
            ("hello.result", _A, HelloResult),
            ("chat.result", _A, ChatVerdict),
            ("command.result", _A, CommandReply),
            ("error", Kind.ERROR, ErrorData),
        ],
    ),
}
"""Every type of protocol v1, by the direction it travels in."""


def message_type(sender: Direction, name: str) -> MessageType | None:
    """The type ``name`` as sent by ``sender``, or None when that side never sends it."""
    return MESSAGE_TYPES[sender].get(name)


def answer_type(sender: Direction, request: str) -> MessageType:
    """The ``*.result`` type that answers ``request`` (sent in the opposite direction)."""
    answerer = _B if sender is _P else _P
    found = MESSAGE_TYPES[answerer].get(f"{request}.result")
    if found is None:  # pragma: no cover - the registry above pairs every request
        raise KeyError(request)
    return found
