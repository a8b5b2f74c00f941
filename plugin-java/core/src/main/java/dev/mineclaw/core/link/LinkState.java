package dev.mineclaw.core.link;

import java.util.Objects;

/** Which chat the bridge wants forwarded (the {@code link.state} event). Immutable. */
public record LinkState(boolean forwardAll, String publicPrefix) {
    public LinkState {
        Objects.requireNonNull(publicPrefix, "publicPrefix");
    }
}
