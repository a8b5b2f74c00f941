"""Helpers shared by the provider tests: test settings and the body-validator type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from bridge.providers.items import ApiType
from bridge.providers.settings import ProviderSettings, RetryPolicy, Timeouts

BodyValidator = Callable[[ApiType, dict[str, Any]], None]


def make_settings(
    api_type: ApiType,
    base_url: str,
    *,
    provider_id: str = "test",
    max_attempts: int = 3,
    read_s: float = 30.0,
    **kwargs: Any,
) -> ProviderSettings:
    """Settings for a test provider: tiny backoff so retries do not slow the suite."""
    return ProviderSettings(
        provider_id=provider_id,
        api_type=api_type,
        base_url=base_url,
        api_key=SecretStr("sk-test-secret-key"),
        timeouts=Timeouts(connect_s=5.0, read_s=read_s),
        retry=RetryPolicy(
            max_attempts=max_attempts,
            initial_backoff_ms=1,
            max_backoff_ms=2,
            max_retry_after_ms=500,
        ),
        **kwargs,
    )
