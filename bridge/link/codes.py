"""The stable names the link uses for faults: error codes in ``error`` frames and close codes.

Both lists are part of protocol v1 (``docs/protocol.md``); the Java side has the same names, and
the shared test vectors pin which decode fault yields which code.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ErrorCode(StrEnum):
    """The ``code`` of an ``error`` frame, or of a request that failed locally."""

    MALFORMED_FRAME = "MALFORMED_FRAME"
    """Not UTF-8 JSON, not an object, a binary frame, a repeated key or nesting over 32 levels."""

    INVALID_ENVELOPE = "INVALID_ENVELOPE"
    """An envelope field is missing, mistyped, out of its pattern, unknown, or `re` misplaced."""

    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    """`v` is not 1, or the `hello` protocol major version is not 1."""

    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    """The type is not in the specification, or not valid in this direction."""

    INVALID_DATA = "INVALID_DATA"
    """`data` does not match the type's schema."""

    DUPLICATE_ID = "DUPLICATE_ID"
    """The id equals one of the sender's requests still in flight."""

    UNEXPECTED_ANSWER = "UNEXPECTED_ANSWER"
    """A `*.result` whose `re` names no request in flight."""

    NOT_READY = "NOT_READY"
    """A frame other than `hello` before the handshake completed."""

    AUTH_FAILED = "AUTH_FAILED"
    """The handshake MAC is wrong or the nonce is not the one issued on this connection."""

    PLAYER_OFFLINE = "PLAYER_OFFLINE"
    """The request names a player who is not online."""

    UNAVAILABLE = "UNAVAILABLE"
    """The answering side cannot serve the request now (shutting down, feature missing)."""

    INTERNAL = "INTERNAL"
    """The handler failed; the details are in the answering side's log only."""

    TIMEOUT = "TIMEOUT"
    """Local only, never sent: the peer did not answer in time."""

    DISCONNECTED = "DISCONNECTED"
    """Local only, never sent: the link dropped with the request in flight, or was down."""


LOCAL_ONLY_CODES: frozenset[ErrorCode] = frozenset({ErrorCode.TIMEOUT, ErrorCode.DISCONNECTED})
"""Codes that describe what happened on this side; an ``error`` frame carrying one is invalid."""


class CloseCode(IntEnum):
    """WebSocket close codes the link uses."""

    NORMAL = 1000
    """Normal shutdown of either side."""

    MESSAGE_TOO_BIG = 1009
    """A frame over the cap (the websockets library sends it)."""

    AUTH_FAILED = 4001
    """Handshake: authentication failed."""

    UNSUPPORTED_VERSION = 4002
    """Handshake: unsupported protocol major version."""

    HANDSHAKE_FAILED = 4003
    """Handshake: timeout, or a frame other than a valid `hello` first."""

    REPLACED = 4004
    """Replaced by a newer authenticated connection."""

    NOT_SERVED = 4005
    """Handshake: this bridge does not serve the server now (another bridge holds its lease);
    the plugin moves on to its next bridge address."""
