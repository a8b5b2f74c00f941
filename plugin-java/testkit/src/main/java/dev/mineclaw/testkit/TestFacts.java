package dev.mineclaw.testkit;

import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.PlayerFacts;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the stand-in server knows about one player for the snapshots: replaced whole by {@code
 * player.set}, never edited, so a snapshot reads one consistent state.
 *
 * @param player position, vitals and the rest of {@code snapshot.player}
 * @param inventory the slots {@code snapshot.item} reads
 * @param look what lies along the line of sight
 * @param feet what {@code blockAtFeet} answers
 */
record TestFacts(PlayerFacts player, InventoryFacts inventory, Sight look, BlockLookup feet) {
    TestFacts {
        Objects.requireNonNull(player, "player");
        Objects.requireNonNull(inventory, "inventory");
        Objects.requireNonNull(look, "look");
        Objects.requireNonNull(feet, "feet");
    }

    /**
     * The line of sight: the first solid block and its distance from the eyes (none: {@code block}
     * null), and the distance at which the ray enters an unloaded chunk (none: null).
     */
    record Sight(BlockFacts block, double distance, Double unloadedAt) {
        /** A ray trace bounded by {@code maxDistance} that stops at an unloaded chunk. */
        BlockLookup trace(int maxDistance) {
            boolean blockInReach = this.block != null && this.distance <= maxDistance;
            if (this.unloadedAt != null && this.unloadedAt <= maxDistance
                    && (!blockInReach || this.unloadedAt < this.distance)) {
                return BlockLookup.unloaded();
            }
            return blockInReach ? BlockLookup.hit(this.block) : BlockLookup.miss();
        }
    }

    /** A player standing on grass at the world's origin in daylight, with nothing in hand. */
    static TestFacts defaults() {
        PlayerFacts player = new PlayerFacts(
                new PlayerFacts.Location("world", PlayerFacts.Dimension.OVERWORLD, 0.5, 64, 0.5, 0, 0),
                new PlayerFacts.Vitals(20, 20, 20, 5, 0),
                PlayerFacts.GameMode.SURVIVAL,
                new PlayerFacts.Movement(true, false, false, false, false, false, false, false, false),
                new PlayerFacts.Surroundings(6000, PlayerFacts.Weather.CLEAR, "minecraft:plains", 15),
                List.of());
        BlockFacts grass = new BlockFacts("minecraft:grass_block", "world", 0, 63, 0, Map.of("snowy", "false"), 0);
        return new TestFacts(player, InventoryFacts.empty(), new Sight(null, 0, null), BlockLookup.hit(grass));
    }
}
