package dev.mineclaw.core.platform;

import java.util.List;
import java.util.Objects;

/**
 * What the server knows about one player's visible state, read on that player's executor for
 * {@code snapshot.player}. Raw facts: the core rounds, bounds and checks them before anything goes
 * on the wire ({@code dev.mineclaw.core.snapshot.PlayerProjection}). Never carries permissions,
 * addresses, client brand or server internals. Immutable.
 *
 * @param location where the player is and where they look
 * @param vitals health, food and experience level
 * @param gameMode the player's game mode
 * @param movement what the player is doing (flags)
 * @param surroundings time, weather, biome and light at the player
 * @param effects active potion effects, in any order (the core keeps at most 32)
 */
public record PlayerFacts(Location location, Vitals vitals, GameMode gameMode, Movement movement,
        Surroundings surroundings, List<Effect> effects) {
    public PlayerFacts {
        Objects.requireNonNull(location, "location");
        Objects.requireNonNull(vitals, "vitals");
        Objects.requireNonNull(gameMode, "gameMode");
        Objects.requireNonNull(movement, "movement");
        Objects.requireNonNull(surroundings, "surroundings");
        effects = List.copyOf(effects);
    }

    /** The kind of world, from Bukkit's {@code World.Environment}. */
    public enum Dimension {
        OVERWORLD,
        NETHER,
        END,
        CUSTOM
    }

    /** The player's game mode. */
    public enum GameMode {
        SURVIVAL,
        CREATIVE,
        ADVENTURE,
        SPECTATOR
    }

    /** The weather the player experiences. */
    public enum Weather {
        CLEAR,
        RAIN,
        THUNDER
    }

    /**
     * @param world the world's name
     * @param x the feet position, unrounded
     * @param yaw degrees, as the server reports it
     * @param pitch degrees, -90 (up) to 90 (down)
     */
    public record Location(String world, Dimension dimension, double x, double y, double z, float yaw, float pitch) {
        public Location {
            Objects.requireNonNull(world, "world");
            Objects.requireNonNull(dimension, "dimension");
        }
    }

    /**
     * @param food the food level, 0-20
     * @param level the experience level
     */
    public record Vitals(double health, double maxHealth, int food, float saturation, int level) {}

    /** State flags, each as the server reports it. */
    public record Movement(boolean onGround, boolean sneaking, boolean sprinting, boolean swimming, boolean gliding,
            boolean flying, boolean inWater, boolean inLava, boolean sleeping) {}

    /**
     * @param timeOfDay the world's time of day, 0-23999
     * @param biome the biome's namespaced key at the player's position, e.g. {@code minecraft:plains}
     * @param light the light level at the player's eyes, 0-15
     */
    public record Surroundings(long timeOfDay, Weather weather, String biome, int light) {
        public Surroundings {
            Objects.requireNonNull(weather, "weather");
            Objects.requireNonNull(biome, "biome");
        }
    }

    /**
     * @param type the effect's namespaced key, e.g. {@code minecraft:speed}
     * @param amplifier 0 for level I
     * @param durationTicks remaining ticks, -1 for an infinite effect
     */
    public record Effect(String type, int amplifier, int durationTicks) {
        public Effect {
            Objects.requireNonNull(type, "type");
        }
    }
}
