package dev.mineclaw.core.wire;

/** The stable error codes of the link protocol (docs/protocol.md, "Error frames"). */
public enum ErrorCode {
    /** Not UTF-8 JSON, not an object, or a binary frame. */
    MALFORMED_FRAME(true),
    /** An envelope field is missing, of the wrong type, out of its pattern, or unknown. */
    INVALID_ENVELOPE(true),
    /** {@code v} is not 1. */
    UNSUPPORTED_VERSION(true),
    /** The type is not in the specification, or not valid in this direction. */
    UNKNOWN_TYPE(true),
    /** {@code data} does not match the type's schema. */
    INVALID_DATA(true),
    /** The id is already used by a request of this sender in flight. */
    DUPLICATE_ID(true),
    /** An answer whose {@code re} names no request in flight. */
    UNEXPECTED_ANSWER(true),
    /** A frame other than {@code hello} before the handshake completed. */
    NOT_READY(true),
    /** The handshake MAC is wrong or the nonce is not the one issued. */
    AUTH_FAILED(true),
    /** The request names a player who is not online. */
    PLAYER_OFFLINE(true),
    /** The answering side cannot serve the request now. */
    UNAVAILABLE(true),
    /** The handler failed; details are in the answering side's log only. */
    INTERNAL(true),
    /** Local only: the peer did not answer in time. */
    TIMEOUT(false),
    /** Local only: the link dropped with the request in flight, or was down when it was made. */
    DISCONNECTED(false);

    private final boolean sendable;

    ErrorCode(boolean sendable) {
        this.sendable = sendable;
    }

    /** Whether the code may appear in an error frame on the wire (TIMEOUT and DISCONNECTED may not). */
    public boolean sendable() {
        return this.sendable;
    }

    /** The code with this wire name among the sendable ones, or {@code null}. */
    public static ErrorCode fromWire(String name) {
        for (ErrorCode code : values()) {
            if (code.sendable && code.name().equals(name)) {
                return code;
            }
        }
        return null;
    }
}
