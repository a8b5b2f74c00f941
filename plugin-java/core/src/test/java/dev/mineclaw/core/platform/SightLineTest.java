package dev.mineclaw.core.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SightLineTest {
    /** A world of air with placed blocks and a set of unloaded chunks; it records every read. */
    private static final class FakeBlocks implements SightLine.Blocks {
        final Map<List<Integer>, String> placed = new HashMap<>();
        final Set<List<Integer>> unloaded = new HashSet<>();
        final List<List<Integer>> visited = new ArrayList<>();

        FakeBlocks place(int x, int y, int z, String type) {
            this.placed.put(List.of(x, y, z), type);
            return this;
        }

        @Override
        public boolean readable(int chunkX, int chunkZ) {
            return !this.unloaded.contains(List.of(chunkX, chunkZ));
        }

        @Override
        public String type(int x, int y, int z) {
            this.visited.add(List.of(x, y, z));
            return this.placed.getOrDefault(List.of(x, y, z), "minecraft:air");
        }

        @Override
        public BlockFacts facts(int x, int y, int z) {
            return new BlockFacts(this.placed.getOrDefault(List.of(x, y, z), "minecraft:air"), "world", x, y, z,
                    Map.of(), 7);
        }
    }

    @Test
    void aBlockStraightAheadIsHit() {
        FakeBlocks world = new FakeBlocks().place(5, 64, 0, "minecraft:stone");
        BlockLookup lookup = SightLine.look(0.5, 64.5, 0.5, 1, 0, 0, 16, world);
        assertEquals(BlockLookup.Result.HIT, lookup.result());
        assertEquals(List.of(5, 64, 0), List.of(lookup.block().x(), lookup.block().y(), lookup.block().z()));
        assertEquals("minecraft:stone", lookup.block().type());
    }

    @Test
    void airAndFluidsAreLookedThroughButAnyOtherBlockStopsTheSight() {
        FakeBlocks world = new FakeBlocks()
                .place(1, 64, 0, "minecraft:water")
                .place(2, 64, 0, "minecraft:cave_air")
                .place(3, 64, 0, "minecraft:lava")
                .place(4, 64, 0, "minecraft:short_grass")
                .place(6, 64, 0, "minecraft:stone");
        BlockLookup lookup = SightLine.look(0.5, 64.5, 0.5, 1, 0, 0, 16, world);
        assertEquals("minecraft:short_grass", lookup.block().type());
        assertTrue(SightLine.seeThrough("minecraft:void_air"));
    }

    @Test
    void nothingWithinReachIsAMiss() {
        FakeBlocks world = new FakeBlocks().place(10, 64, 0, "minecraft:stone");
        BlockLookup lookup = SightLine.look(0.5, 64.5, 0.5, 1, 0, 0, 8, world);
        assertEquals(BlockLookup.Result.MISS, lookup.result());
        assertNull(lookup.block());
        // From x = 0.5, 8 blocks of reach end at x = 8.5: blocks 0..8 are read, block 9 is not.
        assertEquals(List.of(8, 64, 0), world.visited.get(world.visited.size() - 1));
    }

    @Test
    void theSearchStopsAtAnUnloadedChunkWithoutReadingIt() {
        FakeBlocks world = new FakeBlocks().place(20, 64, 0, "minecraft:stone");
        world.unloaded.add(List.of(1, 0));
        BlockLookup lookup = SightLine.look(10.5, 64.5, 0.5, 1, 0, 0, 32, world);
        assertEquals(BlockLookup.Result.UNLOADED, lookup.result());
        assertTrue(world.visited.stream().allMatch(block -> block.get(0) < 16), world.visited.toString());
    }

    @Test
    void negativeCoordinatesFallInTheRightChunk() {
        FakeBlocks world = new FakeBlocks();
        world.unloaded.add(List.of(-1, -1));
        // From x = 0.5 looking towards -x, block -1 (chunk -1) is the second one read.
        BlockLookup lookup = SightLine.look(0.5, 64.5, -0.5, -1, 0, 0, 8, world);
        assertEquals(BlockLookup.Result.UNLOADED, lookup.result());
        assertEquals(List.of(List.of(0, 64, -1)), world.visited);
    }

    @Test
    void aDiagonalRayEntersEveryBlockThroughAFace() {
        FakeBlocks world = new FakeBlocks();
        SightLine.look(0.5, 64.2, 0.5, 1, 0.7, 0.3, 12, world);
        assertTrue(world.visited.size() > 12, "a diagonal ray crosses more blocks than its length");
        for (int i = 1; i < world.visited.size(); i++) {
            List<Integer> a = world.visited.get(i - 1);
            List<Integer> b = world.visited.get(i);
            int moved = Math.abs(a.get(0) - b.get(0)) + Math.abs(a.get(1) - b.get(1)) + Math.abs(a.get(2) - b.get(2));
            assertEquals(1, moved, a + " -> " + b);
        }
    }

    @Test
    void lookingStraightDownFindsTheFloor() {
        FakeBlocks world = new FakeBlocks().place(3, 60, -7, "minecraft:dirt");
        BlockLookup lookup = SightLine.look(3.3, 65.62, -6.8, 0, -1, 0, 16, world);
        assertEquals(List.of(3, 60, -7), List.of(lookup.block().x(), lookup.block().y(), lookup.block().z()));
    }

    @Test
    void aDegenerateDirectionIsAMissAndADistanceOutOfRangeIsRefused() {
        FakeBlocks world = new FakeBlocks();
        assertEquals(BlockLookup.Result.MISS, SightLine.look(0, 64, 0, 0, 0, 0, 8, world).result());
        assertEquals(BlockLookup.Result.MISS, SightLine.look(0, 64, 0, Double.NaN, 1, 0, 8, world).result());
        assertEquals(List.of(), world.visited);
        assertThrows(IllegalArgumentException.class, () -> SightLine.look(0, 64, 0, 1, 0, 0, 0, world));
        assertThrows(IllegalArgumentException.class, () -> SightLine.look(0, 64, 0, 1, 0, 0, 129, world));
    }

    @Test
    void theLongestReachEndsAfterBoundedReads() {
        FakeBlocks world = new FakeBlocks();
        assertEquals(BlockLookup.Result.MISS, SightLine.look(0.5, 64.5, 0.5, 1, 1, 1, 128, world).result());
        assertTrue(world.visited.size() <= 3 * 128 + 3, "read " + world.visited.size() + " blocks");
    }

    @Test
    void theFeetBlockIsTheOneJustBelowSoASlabCounts() {
        FakeBlocks world = new FakeBlocks();
        BlockLookup onFullBlock = SightLine.feet(2.5, 64.0, -3.5, world);
        assertEquals(List.of(2, 63, -4), List.of(onFullBlock.block().x(), onFullBlock.block().y(),
                onFullBlock.block().z()));
        BlockLookup onSlab = SightLine.feet(2.5, 64.5, -3.5, world);
        assertEquals(64, onSlab.block().y());
        world.unloaded.add(List.of(0, -1));
        assertEquals(BlockLookup.Result.UNLOADED, SightLine.feet(2.5, 64.0, -3.5, world).result());
    }
}
