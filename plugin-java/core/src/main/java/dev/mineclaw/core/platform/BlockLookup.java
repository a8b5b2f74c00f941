package dev.mineclaw.core.platform;

import java.util.Objects;

/**
 * The outcome of looking for a block: a hit with its facts, a miss (nothing within reach), or
 * {@code UNLOADED} (the search reached a chunk that is not loaded, or one the current thread does
 * not own on Folia, and stopped there rather than load or touch it). Immutable.
 */
public record BlockLookup(Result result, BlockFacts block) {
    public enum Result {
        HIT,
        MISS,
        UNLOADED
    }

    public BlockLookup {
        Objects.requireNonNull(result, "result");
        if ((result == Result.HIT) != (block != null)) {
            throw new IllegalArgumentException("a block goes with a hit, and only with a hit");
        }
    }

    public static BlockLookup hit(BlockFacts block) {
        return new BlockLookup(Result.HIT, Objects.requireNonNull(block, "block"));
    }

    public static BlockLookup miss() {
        return new BlockLookup(Result.MISS, null);
    }

    public static BlockLookup unloaded() {
        return new BlockLookup(Result.UNLOADED, null);
    }
}
