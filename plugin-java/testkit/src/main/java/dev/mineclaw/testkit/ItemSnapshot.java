package dev.mineclaw.testkit;

/**
 * The item a test player holds when {@code player.add} puts them online ({@code held_item}); it
 * becomes the first slot of their inventory facts. {@code material} is e.g. "minecraft:stone".
 */
record ItemSnapshot(String material, int count, String displayName) {
    /** An empty hand. */
    public static final ItemSnapshot EMPTY = new ItemSnapshot("minecraft:air", 0, null);
}
