package dev.mineclaw.core.link;

import dev.mineclaw.core.MineclawException;
import dev.mineclaw.core.wire.ErrorCode;

/**
 * A request over the link failed. {@link #code()} is {@code DISCONNECTED} or {@code TIMEOUT} for
 * local failures, or the code of the error frame the peer answered with ({@link #remote()}).
 */
public final class LinkException extends MineclawException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final boolean remote;

    public LinkException(ErrorCode code, String message, boolean remote) {
        super(code.name() + ": " + message);
        this.code = code;
        this.remote = remote;
    }

    public static LinkException disconnected(String why) {
        return new LinkException(ErrorCode.DISCONNECTED, why, false);
    }

    public static LinkException timeout(String why) {
        return new LinkException(ErrorCode.TIMEOUT, why, false);
    }

    public ErrorCode code() {
        return this.code;
    }

    /** Whether the peer sent this failure as an error frame. */
    public boolean remote() {
        return this.remote;
    }
}
