package dev.mineclaw.core.platform;

import java.util.Objects;

/**
 * One command of the server's command map, listed: the facts {@code command.resolve} reports
 * for it (the same view of the map) and its declared usage and description (null when none).
 */
public record CommandListing(CommandFacts facts, String usage, String description) {
    public CommandListing {
        Objects.requireNonNull(facts, "facts");
    }
}
