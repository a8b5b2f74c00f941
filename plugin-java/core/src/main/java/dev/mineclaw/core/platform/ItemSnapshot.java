package dev.mineclaw.core.platform;

/** The item a player holds, as a small immutable summary. {@code material} is e.g. "minecraft:stone". */
public record ItemSnapshot(String material, int count, String displayName) {
    /** An empty hand. */
    public static final ItemSnapshot EMPTY = new ItemSnapshot("minecraft:air", 0, null);
}
