package dev.mineclaw.core.snapshot;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerRef;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** Turns {@link PlayerFacts} into the answer of {@code snapshot.player} (docs/protocol.md, PlayerSnapshot). */
public final class PlayerProjection {
    /** The most effects an answer lists. */
    public static final int EFFECTS_MAX = 32;

    private PlayerProjection() {}

    /** The answer data for {@code player}, whose facts are {@code facts}. */
    public static JsonObject project(PlayerRef player, PlayerFacts facts) {
        PlayerFacts.Location location = facts.location();
        PlayerFacts.Vitals vitals = facts.vitals();
        JsonObject answer = new JsonObject();
        answer.add("player", player.toJson());
        answer.addProperty("world", Bounds.world(location.world()));
        answer.addProperty("dimension", lower(location.dimension()));
        JsonObject position = new JsonObject();
        position.addProperty("x", Bounds.round2(location.x(), -Bounds.COORDINATE_MAX, Bounds.COORDINATE_MAX));
        position.addProperty("y", Bounds.round2(location.y(), -Bounds.COORDINATE_MAX, Bounds.COORDINATE_MAX));
        position.addProperty("z", Bounds.round2(location.z(), -Bounds.COORDINATE_MAX, Bounds.COORDINATE_MAX));
        answer.add("position", position);
        JsonObject facing = new JsonObject();
        facing.addProperty("yaw", Bounds.yaw(location.yaw()));
        facing.addProperty("pitch", Bounds.round2(location.pitch(), -90, 90));
        answer.add("facing", facing);
        answer.addProperty("health", Bounds.round2(vitals.health(), 0, Bounds.AMOUNT_MAX));
        answer.addProperty("max_health", Bounds.round2(vitals.maxHealth(), 0, Bounds.AMOUNT_MAX));
        answer.addProperty("food", Bounds.clamp(vitals.food(), 0, 20));
        answer.addProperty("saturation", Bounds.round2(vitals.saturation(), 0, Bounds.AMOUNT_MAX));
        answer.addProperty("level", Math.max(0, vitals.level()));
        answer.addProperty("game_mode", lower(facts.gameMode()));
        answer.add("state", state(facts.movement()));
        answer.add("environment", environment(facts.surroundings()));
        answer.add("effects", effects(facts.effects()));
        return answer;
    }

    private static JsonObject state(PlayerFacts.Movement movement) {
        JsonObject state = new JsonObject();
        state.addProperty("on_ground", movement.onGround());
        state.addProperty("sneaking", movement.sneaking());
        state.addProperty("sprinting", movement.sprinting());
        state.addProperty("swimming", movement.swimming());
        state.addProperty("gliding", movement.gliding());
        state.addProperty("flying", movement.flying());
        state.addProperty("in_water", movement.inWater());
        state.addProperty("in_lava", movement.inLava());
        state.addProperty("sleeping", movement.sleeping());
        return state;
    }

    private static JsonObject environment(PlayerFacts.Surroundings surroundings) {
        JsonObject environment = new JsonObject();
        environment.addProperty("time_of_day", Math.floorMod(surroundings.timeOfDay(), 24000L));
        environment.addProperty("weather", lower(surroundings.weather()));
        environment.addProperty("biome", Bounds.requireKey(surroundings.biome(), "the biome"));
        environment.addProperty("light", Bounds.clamp(surroundings.light(), 0, 15));
        return environment;
    }

    /** Sorted by type then amplifier, so equal facts give equal answers; at most 32. */
    private static JsonArray effects(List<PlayerFacts.Effect> raw) {
        JsonArray effects = new JsonArray();
        raw.stream()
                .filter(effect -> Bounds.isKey(effect.type()))
                .sorted(Comparator.comparing(PlayerFacts.Effect::type).thenComparingInt(PlayerFacts.Effect::amplifier))
                .limit(EFFECTS_MAX)
                .forEach(effect -> {
                    JsonObject entry = new JsonObject();
                    entry.addProperty("type", effect.type());
                    entry.addProperty("amplifier", Math.max(0, effect.amplifier()));
                    entry.addProperty("duration_ticks", effect.durationTicks() < 0 ? -1 : effect.durationTicks());
                    effects.add(entry);
                });
        return effects;
    }

    private static String lower(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
