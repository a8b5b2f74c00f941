package dev.mineclaw.core.managed;

import dev.mineclaw.core.MineclawException;

/** A step of starting the managed bridge failed; the message is the one console line saying why. */
public final class ManagedBridgeException extends MineclawException {
    private static final long serialVersionUID = 1L;

    public ManagedBridgeException(String line) {
        super(line);
    }
}
