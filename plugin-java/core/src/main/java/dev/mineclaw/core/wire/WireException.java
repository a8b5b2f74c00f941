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
    private final boolean fromErrorFrame;
    private final String answeredId;

    public WireException(ErrorCode code, String message) {
        this(code, message, null, null);
    }

    public WireException(ErrorCode code, String message, String offendingId, Throwable cause) {
        this(code, message, offendingId, false, null, cause);
    }

    private WireException(ErrorCode code, String message, String offendingId, boolean fromErrorFrame,
            String answeredId, Throwable cause) {
        super(code.name() + ": " + message, cause);
        this.code = code;
        this.offendingId = offendingId;
        this.fromErrorFrame = fromErrorFrame;
        this.answeredId = answeredId;
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

    /**
     * Whether the offending frame said it was an {@code error} frame: such frames are logged and
     * never answered, so two confused peers cannot answer each other's errors forever.
     */
    public boolean fromErrorFrame() {
        return this.fromErrorFrame;
    }

    /**
     * The readable {@code re} of an offending answer ({@code *.result} or {@code error}), or null:
     * the request it meant to answer can fail at once instead of waiting for its timeout.
     */
    public String answeredId() {
        return this.answeredId;
    }

    /** The same failure attributed to a frame with this id, kind and {@code re} (each may be null/false). */
    public WireException about(String id, boolean errorFrame, String answered) {
        return new WireException(this.code, detail(), id, errorFrame, answered, getCause());
    }
}
