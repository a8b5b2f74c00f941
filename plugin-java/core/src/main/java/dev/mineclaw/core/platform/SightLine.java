package dev.mineclaw.core.platform;

import java.util.Set;

/**
 * Finds the block a player looks at, or stands on, one block at a time so that no chunk is ever
 * loaded: before each block is read, its chunk must be readable (loaded, and on Folia owned by the
 * current region), otherwise the search stops with {@link BlockLookup#unloaded()}. Platforms
 * supply the world through {@link Blocks}; everything else, including which blocks the sight
 * passes through, is decided here.
 */
public final class SightLine {
    /** The largest look distance, the protocol's bound for {@code snapshot.block}. */
    public static final int MAX_DISTANCE = 128;
    /** How far below the feet the standing block is looked for, so a slab or a carpet counts. */
    public static final double FEET_DEPTH = 0.01;

    /** Air and fluids: the sight passes through them. */
    private static final Set<String> SEE_THROUGH = Set.of("minecraft:air", "minecraft:cave_air",
            "minecraft:void_air", "minecraft:water", "minecraft:lava", "minecraft:bubble_column");

    /** The world as the search reads it. Called on the player's executor only. */
    public interface Blocks {
        /** Whether blocks of chunk ({@code chunkX}, {@code chunkZ}) may be read now without loading it. */
        boolean readable(int chunkX, int chunkZ);

        /** The namespaced type of the block at the coordinates (in a readable chunk). */
        String type(int x, int y, int z);

        /** The facts of the block at the coordinates (in a readable chunk). */
        BlockFacts facts(int x, int y, int z);
    }

    private SightLine() {}

    /**
     * The first block that is not air or fluid along the ray from the eyes ({@code ox, oy, oz}) in
     * direction ({@code dx, dy, dz}), visiting every block the ray enters, up to {@code maxDistance}.
     *
     * @param maxDistance 1-{@value #MAX_DISTANCE} blocks
     */
    public static BlockLookup look(double ox, double oy, double oz, double dx, double dy, double dz, int maxDistance,
            Blocks world) {
        if (maxDistance < 1 || maxDistance > MAX_DISTANCE) {
            throw new IllegalArgumentException("the look distance must be 1-" + MAX_DISTANCE + ", got " + maxDistance);
        }
        double length = Math.sqrt(dx * dx + dy * dy + dz * dz);
        if (!(length > 0) || !Double.isFinite(length) || !Double.isFinite(ox + oy + oz)) {
            return BlockLookup.miss();
        }
        Axis ax = new Axis(ox, dx / length);
        Axis ay = new Axis(oy, dy / length);
        Axis az = new Axis(oz, dz / length);
        double travelled = 0;
        // Each step enters one face-adjacent block, so the loop ends after at most 3 * maxDistance + 3 blocks.
        while (travelled <= maxDistance) {
            if (!world.readable(ax.cell >> 4, az.cell >> 4)) {
                return BlockLookup.unloaded();
            }
            if (!SEE_THROUGH.contains(world.type(ax.cell, ay.cell, az.cell))) {
                return BlockLookup.hit(world.facts(ax.cell, ay.cell, az.cell));
            }
            Axis next = ax.boundary <= ay.boundary && ax.boundary <= az.boundary ? ax
                    : ay.boundary <= az.boundary ? ay : az;
            travelled = next.step();
        }
        return BlockLookup.miss();
    }

    /** The block holding the point {@value #FEET_DEPTH} below the feet at ({@code x, y, z}). */
    public static BlockLookup feet(double x, double y, double z, Blocks world) {
        int bx = (int) Math.floor(x);
        int by = (int) Math.floor(y - FEET_DEPTH);
        int bz = (int) Math.floor(z);
        if (!world.readable(bx >> 4, bz >> 4)) {
            return BlockLookup.unloaded();
        }
        return BlockLookup.hit(world.facts(bx, by, bz));
    }

    /** Whether the sight passes through a block of {@code type}. */
    public static boolean seeThrough(String type) {
        return SEE_THROUGH.contains(type);
    }

    /** One coordinate of the walk: the current block, and the ray distance to its next boundary. */
    private static final class Axis {
        private final int direction;
        private final double delta;
        private int cell;
        private double boundary;

        Axis(double origin, double unit) {
            this.cell = (int) Math.floor(origin);
            this.direction = unit > 0 ? 1 : unit < 0 ? -1 : 0;
            this.delta = unit == 0 ? Double.POSITIVE_INFINITY : 1 / Math.abs(unit);
            if (unit > 0) {
                this.boundary = (this.cell + 1 - origin) * this.delta;
            } else if (unit < 0) {
                this.boundary = (origin - this.cell) * this.delta;
            } else {
                this.boundary = Double.POSITIVE_INFINITY;
            }
        }

        /** Enters the next block along this axis; returns the distance travelled to get there. */
        double step() {
            double reached = this.boundary;
            this.cell += this.direction;
            this.boundary += this.delta;
            return reached;
        }
    }
}
