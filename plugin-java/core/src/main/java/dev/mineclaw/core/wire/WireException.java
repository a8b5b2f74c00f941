package dev.mineclaw.core.wire;

import dev.mineclaw.core.MineclawException;

/**
 * A frame broke the protocol. Carries the code to put in the error frame and, when the offending
 * frame's id could be read, that id for the error frame's {@code re}.
 */
public final class WireException extends MineclawException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final String offendingId;

    public WireException(ErrorCode code, String message) {
        this(code, message, null, null);
    }

    public WireException(ErrorCode code, String message, String offendingId, Throwable cause) {
        super(code.name() + ": " + message, cause);
        this.code = code;
        this.offendingId = offendingId;
    }

    /** The protocol error code. */
    public ErrorCode code() {
        return this.code;
    }

    /** The id of the offending frame, or {@code null} when it could not be read. */
    public String offendingId() {
        return this.offendingId;
    }

    /** The message without the code prefix, for the error frame's {@code message}. */
    public String detail() {
        String full = getMessage();
        return full.substring(this.code.name().length() + 2);
    }

    /** The same failure attributed to the frame with this id. */
    public WireException withOffendingId(String id) {
        return new WireException(this.code, detail(), id, getCause());
    }
}
