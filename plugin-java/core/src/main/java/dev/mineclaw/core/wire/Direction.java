package dev.mineclaw.core.wire;

/** Who sent a frame. */
public enum Direction {
    PLUGIN_TO_BRIDGE,
    BRIDGE_TO_PLUGIN;

    /** The other direction: answers travel opposite to their requests. */
    public Direction reverse() {
        return this == PLUGIN_TO_BRIDGE ? BRIDGE_TO_PLUGIN : PLUGIN_TO_BRIDGE;
    }
}
