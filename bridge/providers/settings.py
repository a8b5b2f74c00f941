"""The settings a provider client runs with, as small frozen value classes.

They hold exactly what the clients need and nothing of YAML;
``bridge.app.serving.provider_settings`` fills them from the control plane's ``ProviderConfig``
and ``ModelConfig``. Tests build them directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from bridge.providers.compat import COMPAT, CompatName, ServerCompat
from bridge.providers.items import ApiType

ModelToolChoice = str
"""``auto``, ``required``, ``omit`` or the name of a tool (`projection.wire_tool_choice`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """Retries of one request, before any byte of its response stream was read.

    max_attempts: attempts in all, the first included (the provider's retry budget).
    initial_backoff_ms / max_backoff_ms: jittered exponential backoff between attempts.
    max_retry_after_ms: the longest ``retry-after`` the bridge waits; a server asking for more
    ends the request instead of being retried early.
    """

    max_attempts: int = 3
    initial_backoff_ms: int = 500
    max_backoff_ms: int = 8_000
    max_retry_after_ms: int = 30_000


@dataclass(frozen=True, kw_only=True, slots=True)
class Timeouts:
    """connect_s: opening the connection; read_s: the longest silence between two reads."""

    connect_s: float = 10.0
    read_s: float = 120.0


@dataclass(frozen=True, kw_only=True)
class ProviderSettings:
    """One provider of ``providers.yml``.

    extra_headers keep their ``${session_id}`` / ``${user_agent}`` templates; they are resolved
    per request. user_agent None means the bridge's default ``mineclaw-bridge/<version>``.
    native_tools are the provider's own tool payloads, passed through as written.
    """

    provider_id: str
    api_type: ApiType
    base_url: str
    api_key: SecretStr
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    user_agent: str | None = None
    timeouts: Timeouts = Timeouts()
    retry: RetryPolicy = RetryPolicy()
    native_tools: tuple[Mapping[str, Any], ...] = ()
    compat: CompatName = "auto"


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """One model of a provider.

    wire_model: the name sent as ``model``.
    max_output_tokens: ``max_completion_tokens`` / ``max_output_tokens``; None sends nothing.
    interleaved_field: Chat Completions only; the delta field whose reasoning is kept and
    replayed on the assistant message (``reasoning_content``). None: reasoning not replayed.
    prompt_cache_key: send the session id as ``prompt_cache_key``.
    extra_body: merged into the top level of every request body, as written.
    tool_choice: what is sent while tools are offered (`projection.wire_tool_choice`).
    compat: the server family's habits; the client sets it per request from the provider's
    ``compat`` (and what ``auto`` detected).
    """

    wire_model: str
    max_output_tokens: int | None = None
    interleaved_field: str | None = None
    prompt_cache_key: bool = False
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    tool_choice: ModelToolChoice = "auto"
    compat: ServerCompat = COMPAT["auto"]


def output_cap(model_cap: int | None, request_cap: int | None) -> int | None:
    """The output token cap a request is sent with: the smaller of the model's and the
    request's own (a guest's), whichever are set."""
    caps = [cap for cap in (model_cap, request_cap) if cap is not None]
    return min(caps) if caps else None
