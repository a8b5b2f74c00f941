package dev.mineclaw.core.platform;

/** The block a player looks at, as a small immutable summary; {@code material} null when none. */
public record BlockSnapshot(String material, String world, int x, int y, int z) {}
