package dev.mineclaw.core.platform;

import dev.mineclaw.core.MineclawException;

/**
 * Work touched a player or the world from a thread that does not own it. On Folia this corrupts
 * the server, so platforms that can detect it (the testkit does, always) throw this instead.
 */
public final class ThreadRuleException extends MineclawException {
    private static final long serialVersionUID = 1L;

    public ThreadRuleException(String message) {
        super(message);
    }
}
