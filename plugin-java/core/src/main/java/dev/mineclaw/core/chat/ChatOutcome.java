package dev.mineclaw.core.chat;

import net.kyori.adventure.text.Component;

/**
 * What happens to one public chat message. Immutable.
 *
 * @param shownPublicly whether the message stays in public chat (false: cancelled)
 * @param aiPrefix whether the public line gets the AI prefix
 * @param notice a line shown privately to the sender, or null
 * @param reason why, for logs and tests
 */
public record ChatOutcome(boolean shownPublicly, boolean aiPrefix, Component notice, Reason reason) {
    /** Why the outcome is what it is. */
    public enum Reason {
        /** Not a wake and not forwarded: no round trip was made. */
        NOT_FORWARDED,
        /** The bridge answered {@code pass}. */
        PASSED,
        /** The bridge answered {@code accept}. */
        ACCEPTED,
        /** The bridge answered {@code refuse}. */
        REFUSED,
        /** The link was down, the verdict late, or the request failed. */
        NO_VERDICT
    }

    static ChatOutcome untouched(Reason reason) {
        return new ChatOutcome(true, false, null, reason);
    }
}
