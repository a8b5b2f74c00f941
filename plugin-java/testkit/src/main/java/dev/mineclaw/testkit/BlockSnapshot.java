package dev.mineclaw.testkit;

/**
 * The block a test player looks at when {@code player.add} puts them online ({@code target_block});
 * {@code material} null when none.
 */
record BlockSnapshot(String material, String world, int x, int y, int z) {}
