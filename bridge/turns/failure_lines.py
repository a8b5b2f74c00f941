"""What people are told when a turn's model requests failed.

The asking player gets a short line from ``message.yml`` chosen by the failure's class, never
the provider's own text (which can be long, technical, in another language, or carry links).
The provider's text goes, redacted, to the operators (see ``bridge.app.chat.operator_notices``) and,
whole, to the audit log.
"""

from __future__ import annotations

from dataclasses import dataclass

from bridge.providers.events import Failed
from bridge.providers.failures import FailureClass

PROVIDER_FAILURE = "errors.provider_failure"

FAILURE_KEYS: dict[FailureClass, str] = {
    "busy": "errors.provider_busy",
    "unreachable": "errors.provider_unreachable",
    "broken": "errors.provider_busy",
    "timed_out": "errors.provider_timeout",
    "quota": "errors.provider_quota",
    "misconfigured": "errors.provider_misconfigured",
    "too_long": PROVIDER_FAILURE,
    "incomplete": PROVIDER_FAILURE,
    "rejected": PROVIDER_FAILURE,
}
"""The ``message.yml`` line for each class."""

SHOWN_REASONS: dict[FailureClass, str] = {
    "busy": "the model provider is busy",
    "unreachable": "the model provider could not be reached",
    "broken": "the model provider's answer broke off",
    "timed_out": "the model provider did not answer in time",
    "quota": "the model provider account has no credit left",
    "misconfigured": "the model provider is not set up correctly",
    "too_long": "the conversation is too long for the model",
    "incomplete": "the answer was cut off",
    "rejected": "the model provider refused the request",
}
"""The ``<reason>`` placeholder for each class: the bridge's words, never the provider's."""


@dataclass(frozen=True, slots=True)
class PlayerLine:
    key: str
    reason: str


def player_line(failed: Failed) -> PlayerLine:
    kind = failed.failure_class
    return PlayerLine(FAILURE_KEYS[kind], SHOWN_REASONS[kind])


@dataclass(frozen=True, slots=True)
class ProviderFailureNotice:
    """A turn was dropped because its model requests failed: for the operators' line.
    ``error`` is the provider's own text as the client reported it (keys already cut out)."""

    turn_id: str
    model_ref: str
    failure_class: FailureClass
    error: str
