"""``config.yml``: chat, limits, identity, tool limits and the plugin link.

Every section and every field has a default, so an empty ``schema: 1`` file is a working
configuration; ranges are checked so a typo cannot switch a limit off.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from bridge.control.base import StrictModel
from bridge.control.budgets_config import BudgetsConfig
from bridge.control.concurrency_config import ConcurrencyConfig
from bridge.control.console_config import ConsoleConfig, checked_host
from bridge.control.conversations_config import ConversationsConfig
from bridge.control.function_limits import FunctionLimits
from bridge.control.mcp_config import McpConfig
from bridge.control.memory_config import MemoryConfig
from bridge.control.metrics_config import MetricsConfig
from bridge.control.persona_config import PersonaConfig
from bridge.control.storage_config import StorageConfig
from bridge.control.wake_pattern import compile_wake_pattern
from bridge.control.web_config import WebConfig
from bridge.control.whitelist_rules import InvalidRule, check_rule
from bridge.redaction import RedactionRule

_VISIBLE_TEXT = re.compile(r"[^\x00-\x1f\x7f§]+")


def _plain_text(value: str) -> str:
    if not _VISIBLE_TEXT.fullmatch(value) or not value.isprintable():
        raise ValueError("must be printable text without control characters or §")
    return value


class ChatConfig(StrictModel):
    """How players address the agent and how long its chat output may be."""

    public_prefix: str = Field(default="@ai", min_length=1, max_length=32)
    wake_pattern: str | None = Field(default=None, min_length=1, max_length=512)
    reply_max_chars: int = Field(default=1000, ge=16, le=16_384)
    action_bar_max_chars: int = Field(default=120, ge=8, le=512)
    # The bridge lays replies out itself: every line carries the reply prefix (docs/security.md).
    reply_line_max_chars: int = Field(default=60, ge=20, le=256)
    reply_max_lines: int = Field(default=8, ge=1, le=32)
    reply_wrap: Literal["words", "anywhere"] = "words"

    @field_validator("public_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        _plain_text(value)
        if " " in value:
            raise ValueError("must not contain spaces")
        return value

    @field_validator("wake_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            check_rule(value)
        except InvalidRule as exc:
            raise ValueError(str(exc)) from None
        compile_wake_pattern(value)  # the wake rules' own check: serve and reload agree
        return value


class RateLimitConfig(StrictModel):
    """Cooldowns between turns, in milliseconds."""

    player_cooldown_ms: int = Field(default=5000, ge=0, le=3_600_000)
    global_cooldown_ms: int = Field(default=1000, ge=0, le=3_600_000)


class TurnConfig(StrictModel):
    """How much tool work one turn may do."""

    max_tool_rounds: int = Field(default=8, ge=1, le=64)
    max_tool_calls: int = Field(default=16, ge=1, le=256)
    # The loop breaker: a turn going round in circles is stopped with an honest message.
    max_failing_rounds: int = Field(default=3, ge=1, le=64)
    max_repeated_calls: int = Field(default=3, ge=2, le=64)


class ContextConfig(StrictModel):
    """How much of the session is replayed to the model."""

    max_messages: int = Field(default=240, ge=2, le=10_000)


class IdentityConfig(StrictModel):
    """How the agent appears and how player identity reaches the model."""

    name: str = Field(default="Mineclaw", min_length=1, max_length=32)
    include_player_name_field: bool = True
    include_player_content_prefix: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _plain_text(value)


class WorkspaceConfig(StrictModel):
    """Limits of the workspace file tools (list, read, grep)."""

    max_read_chars: int = Field(default=20_000, ge=256, le=1_000_000)
    max_results: int = Field(default=100, ge=1, le=10_000)
    max_depth: int = Field(default=8, ge=1, le=64)
    timeout_ms: int = Field(default=2000, ge=10, le=60_000)


class EnvironmentToolsConfig(StrictModel):
    """Limits of the snapshot tools (player, held item, looked-at block)."""

    look_distance: int = Field(default=16, ge=1, le=128)
    item_summary_max_slots: int = Field(default=36, ge=1, le=256)
    item_summary_max_chars: int = Field(default=2000, ge=64, le=65_536)
    tool_cooldown_ms: int = Field(default=500, ge=0, le=600_000)
    # How long the asking player has to answer an ask_player question.
    ask_timeout_ms: int = Field(default=60_000, ge=1_000, le=600_000)


class ListenConfig(StrictModel):
    """Listen mode: what happens to public lines that do not start a turn of their own."""

    # Lines said while a turn or compaction runs (or refused by a cooldown) are carried into
    # the next turn as overheard conversation, bounded so a busy chat cannot fill the context.
    carry_lines: int = Field(default=20, ge=0, le=200)
    carry_chars: int = Field(default=2000, ge=0, le=20_000)
    # keep: a refused implicit line stays public, silently; cancel: Mineclaw's behaviour, the
    # line is cancelled and only its sender is told why.
    when_refused: Literal["keep", "cancel"] = "keep"
    # Which lines start a turn (bridge.decisions): the embedded classifier by default; a cheap
    # decision model when one is named (the classifier is its fallback); or every line.
    decision_model: str | None = Field(default=None, min_length=3, max_length=200)
    decision_threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    answer_every_line: bool = False
    # Names the classifier also takes as addressing the assistant, besides identity.name.
    aliases: list[str] = Field(default_factory=list, max_length=16)
    # A player's line this soon after the assistant answered them may be a follow-up.
    reply_window_ms: int = Field(default=30_000, ge=0, le=600_000)

    @field_validator("decision_model")
    @classmethod
    def _decision_model(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[^/\s]+/\S+", value):
            raise ValueError("must be provider/model as in providers.yml")
        return value

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, value: list[str]) -> list[str]:
        for alias in value:
            if not 1 <= len(alias.strip()) <= 32:
                raise ValueError("each alias must be 1-32 characters")
            _plain_text(alias)
        return value

    @model_validator(mode="after")
    def _one_decider(self) -> ListenConfig:
        if self.decision_model and self.answer_every_line:
            raise ValueError("decision_model and answer_every_line: true exclude each other")
        return self


class LoggingConfig(StrictModel):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


class LinkConfig(StrictModel):
    """The WebSocket server the plugin connects to."""

    host: str = Field(default="127.0.0.1", min_length=1, max_length=253)
    port: int = Field(default=25580, ge=1, le=65_535)
    max_frame_bytes: int = Field(default=65_536, ge=1024, le=16 * 1024 * 1024)
    handshake_timeout_ms: int = Field(default=5000, ge=100, le=60_000)
    max_unauthenticated: int = Field(default=512, ge=1, le=4096)
    max_unauthenticated_per_address: int = Field(default=256, ge=1, le=4096)
    tls_cert: str | None = Field(default=None, min_length=1, max_length=4096)
    """PEM certificate chain for ``wss://`` (relative to the configuration folder)."""
    tls_key: str | None = Field(default=None, min_length=1, max_length=4096)
    """Its PEM private key (relative to the configuration folder)."""

    _host = field_validator("host")(checked_host)

    @model_validator(mode="after")
    def _tls_pair(self) -> LinkConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: set both for wss://, or neither")
        return self


class RedactionConfig(StrictModel):
    """The owner's redaction rules, applied together with the built-in ones (which cannot be
    switched off) to everything that leaves the bridge.

    Each rule is a ``kind`` (shown in the placeholder, ``[redacted: <kind>]``) and an RE2
    ``pattern``; a group named ``secret`` limits the replacement to that group.
    """

    rules: list[RedactionRule] = Field(default_factory=list, max_length=64)


class ConfigFile(StrictModel):
    """The whole of ``config.yml``."""

    schema_: Literal[1] = Field(alias="schema")
    locale: Literal["en", "zh_CN"] = "en"
    chat: ChatConfig = Field(default_factory=ChatConfig)
    rate_limits: RateLimitConfig = Field(default_factory=RateLimitConfig)
    listen: ListenConfig = Field(default_factory=ListenConfig)
    turn: TurnConfig = Field(default_factory=TurnConfig)
    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    identity: IdentityConfig = Field(default_factory=IdentityConfig)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    environment: EnvironmentToolsConfig = Field(default_factory=EnvironmentToolsConfig)
    functions: FunctionLimits = Field(default_factory=FunctionLimits)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    link: LinkConfig = Field(default_factory=LinkConfig)
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    persona: PersonaConfig = Field(default_factory=PersonaConfig)
    conversations: ConversationsConfig = Field(default_factory=ConversationsConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
