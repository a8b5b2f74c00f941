package dev.mineclaw.core.link;

import java.util.List;
import java.util.Objects;

/**
 * Which chat the bridge wants forwarded (the {@code link.state} event), and the budget tiers
 * whose {@code mineclaw.budget.<tier>} nodes the plugin reports among a player's facts.
 * Immutable.
 */
public record LinkState(boolean forwardAll, String publicPrefix, List<String> budgetTiers) {
    public LinkState {
        Objects.requireNonNull(publicPrefix, "publicPrefix");
        budgetTiers = List.copyOf(budgetTiers);
    }

    /** A state naming no budget tiers (before the bridge names any, or from an older bridge). */
    public LinkState(boolean forwardAll, String publicPrefix) {
        this(forwardAll, publicPrefix, List.of());
    }
}
