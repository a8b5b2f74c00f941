"""Provider clients and their settings, built from the control plane's ``providers.yml`` entries.

The control plane validates (header names, managed body keys, URL shape); this module only
copies what the clients need into their own value classes.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from bridge.control.providers import ModelConfig, ProviderConfig, ResolvedModel
from bridge.providers.client import ProviderClient
from bridge.providers.identity import IdentitySettings
from bridge.providers.settings import (
    ModelSettings,
    ProviderSettings,
    RetryPolicy,
    Timeouts,
)


def provider_settings(provider_id: str, config: ProviderConfig) -> ProviderSettings:
    """Raises ``ConfigError`` when the key refers to an unset environment variable."""
    config.require_api_key()
    return ProviderSettings(
        provider_id=provider_id,
        api_type=config.api.type,
        base_url=config.api.base_url,
        api_key=config.api_key,
        extra_headers=dict(config.extra_headers),
        user_agent=config.user_agent,
        timeouts=Timeouts(connect_s=config.timeout.connect_s, read_s=config.timeout.read_s),
        retry=RetryPolicy(
            max_attempts=config.retry.max_attempts,
            initial_backoff_ms=config.retry.initial_backoff_ms,
            max_backoff_ms=config.retry.max_backoff_ms,
            max_retry_after_ms=config.retry.max_retry_after_ms,
        ),
        native_tools=tuple(config.native_tools),
        compat=config.compat,
    )


def model_settings(wire_model: str, config: ModelConfig) -> ModelSettings:
    return ModelSettings(
        wire_model=wire_model,
        max_output_tokens=config.limits.max_output_tokens,
        interleaved_field=config.interleaved.field if config.interleaved is not None else None,
        # None only for a model not resolved through ProvidersFile.resolve: then not sent.
        prompt_cache_key=bool(config.request.prompt_cache_key),
        extra_body=dict(config.request.extra_body),
        tool_choice=config.request.tool_choice,
    )


def client_for(
    resolved: ResolvedModel,
    *,
    identity: IdentitySettings | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    redact: Callable[[str], str] | None = None,
) -> tuple[ProviderClient, ModelSettings]:
    """A client for the model's provider and the settings of the model itself; ``redact`` (the
    plane's) is applied to failure texts before they are clipped."""
    client = ProviderClient(
        provider_settings(resolved.provider_id, resolved.provider),
        identity=identity,
        transport=transport,
        redact=redact,
    )
    return client, model_settings(resolved.model_name, resolved.model)
