package dev.mineclaw.core.platform;

import java.util.Map;
import java.util.Objects;

/**
 * One block as {@code snapshot.block} may describe it. {@code properties} holds the block data's
 * state properties as name to value (e.g. {@code facing=north}); the adapter may pass them all,
 * the core keeps only an allow-list. Never tile-entity data (container contents, sign text,
 * command-block commands, spawner or structure data). Immutable.
 *
 * @param type the block's namespaced key, e.g. {@code minecraft:oak_stairs}
 * @param world the world's name
 * @param light the light level at the block, 0-15
 */
public record BlockFacts(String type, String world, int x, int y, int z, Map<String, String> properties, int light) {
    public BlockFacts {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(world, "world");
        properties = Map.copyOf(properties);
    }
}
