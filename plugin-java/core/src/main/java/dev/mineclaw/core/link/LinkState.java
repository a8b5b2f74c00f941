package dev.mineclaw.core.link;

import java.util.List;
import java.util.Objects;

/**
 * Which chat the bridge wants forwarded (the {@code link.state} event), the budget tiers whose
 * {@code mineclaw.budget.<tier>} nodes the plugin reports among a player's facts, and the other
 * nodes the bridge asks to be reported (its tools' permissions), and whether the bridge takes
 * question ids ({@code asks}). Immutable.
 */
public record LinkState(boolean forwardAll, String publicPrefix, List<String> budgetTiers, List<String> reportNodes,
        boolean asks) {
    public LinkState {
        Objects.requireNonNull(publicPrefix, "publicPrefix");
        budgetTiers = List.copyOf(budgetTiers);
        reportNodes = List.copyOf(reportNodes);
    }

    /** A state from a bridge that does not take question ids ({@code asks}, since 1.5). */
    public LinkState(boolean forwardAll, String publicPrefix, List<String> budgetTiers, List<String> reportNodes) {
        this(forwardAll, publicPrefix, budgetTiers, reportNodes, false);
    }

    /** A state naming budget tiers and no other node. */
    public LinkState(boolean forwardAll, String publicPrefix, List<String> budgetTiers) {
        this(forwardAll, publicPrefix, budgetTiers, List.of());
    }

    /** A state naming no budget tiers (before the bridge names any, or from an older bridge). */
    public LinkState(boolean forwardAll, String publicPrefix) {
        this(forwardAll, publicPrefix, List.of(), List.of());
    }
}
