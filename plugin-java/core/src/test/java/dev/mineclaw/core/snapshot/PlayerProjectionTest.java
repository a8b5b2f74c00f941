package dev.mineclaw.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerRef;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PlayerProjectionTest {
    private static final PlayerRef STEVE = new PlayerRef(UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"),
            "Steve");
    private static final PlayerFacts.Movement STILL =
            new PlayerFacts.Movement(true, false, false, false, false, false, false, false, false);

    static PlayerFacts facts(PlayerFacts.Location location, PlayerFacts.Vitals vitals, long time, String biome,
            List<PlayerFacts.Effect> effects) {
        return new PlayerFacts(location, vitals, PlayerFacts.GameMode.ADVENTURE, STILL,
                new PlayerFacts.Surroundings(time, PlayerFacts.Weather.THUNDER, biome, 7), effects);
    }

    private static PlayerFacts.Location at(double x, double y, double z, float yaw, float pitch) {
        return new PlayerFacts.Location("world_nether", PlayerFacts.Dimension.NETHER, x, y, z, yaw, pitch);
    }

    @Test
    void roundsToHundredthsAndNamesEveryField() {
        JsonObject answer = WireCheck.answer("snapshot.player", PlayerProjection.project(STEVE, facts(
                at(12.345678, 64.0049, -30.255, 90.123f, -12.3456f),
                new PlayerFacts.Vitals(17.3333333, 20, 18, 4.19999f, 31), 6000, "minecraft:crimson_forest",
                List.of())));
        JsonObject position = answer.getAsJsonObject("position");
        assertEquals(12.35, position.get("x").getAsDouble());
        assertEquals(64.0, position.get("y").getAsDouble());
        assertEquals(-30.25, position.get("z").getAsDouble(), 0.011);
        assertEquals(90.12, answer.getAsJsonObject("facing").get("yaw").getAsDouble());
        assertEquals(-12.35, answer.getAsJsonObject("facing").get("pitch").getAsDouble());
        assertEquals(17.33, answer.get("health").getAsDouble());
        assertEquals(4.2, answer.get("saturation").getAsDouble());
        assertEquals("nether", answer.get("dimension").getAsString());
        assertEquals("world_nether", answer.get("world").getAsString());
        assertEquals("adventure", answer.get("game_mode").getAsString());
        assertEquals("thunder", answer.getAsJsonObject("environment").get("weather").getAsString());
        assertEquals("Steve", answer.getAsJsonObject("player").get("name").getAsString());
        assertTrue(answer.getAsJsonObject("state").get("on_ground").getAsBoolean());
        assertFalse(answer.getAsJsonObject("state").get("sleeping").getAsBoolean());
    }

    @Test
    void brokenNumbersBecomeValuesTheWireAccepts() {
        JsonObject answer = WireCheck.answer("snapshot.player", PlayerProjection.project(STEVE, facts(
                at(Double.POSITIVE_INFINITY, Double.NaN, -5e12, 540.5f, 135f),
                new PlayerFacts.Vitals(Double.NaN, -4, 25, -1f, -3), -1, "minecraft:plains", List.of())));
        JsonObject position = answer.getAsJsonObject("position");
        assertEquals(1e9, position.get("x").getAsDouble());
        assertEquals(0.0, position.get("y").getAsDouble());
        assertEquals(-1e9, position.get("z").getAsDouble());
        assertEquals(-179.5, answer.getAsJsonObject("facing").get("yaw").getAsDouble());
        assertEquals(90.0, answer.getAsJsonObject("facing").get("pitch").getAsDouble());
        assertEquals(0.0, answer.get("health").getAsDouble());
        assertEquals(0.0, answer.get("max_health").getAsDouble());
        assertEquals(20, answer.get("food").getAsInt());
        assertEquals(0, answer.get("level").getAsInt());
        assertEquals(23999, answer.getAsJsonObject("environment").get("time_of_day").getAsInt());
    }

    @Test
    void timeOfDayWrapsTheFullTimeIntoADay() {
        JsonObject answer = PlayerProjection.project(STEVE, facts(at(0, 0, 0, 0, 0),
                new PlayerFacts.Vitals(20, 20, 20, 5, 0), 3 * 24000L + 13000, "minecraft:plains", List.of()));
        assertEquals(13000, answer.getAsJsonObject("environment").get("time_of_day").getAsInt());
    }

    @Test
    void effectsAreSortedCappedAndInfiniteIsMinusOne() {
        List<PlayerFacts.Effect> effects = new ArrayList<>();
        for (int i = 40; i > 0; i--) {
            effects.add(new PlayerFacts.Effect(String.format("minecraft:effect_%02d", i), i % 3, i * 20));
        }
        effects.add(new PlayerFacts.Effect("minecraft:effect_00", 0, -1234));
        effects.add(new PlayerFacts.Effect("Not A Key", 0, 10));
        JsonArray listed = WireCheck.answer("snapshot.player", PlayerProjection.project(STEVE, facts(at(0, 0, 0, 0, 0),
                new PlayerFacts.Vitals(20, 20, 20, 5, 0), 0, "minecraft:plains", effects))).getAsJsonArray("effects");
        assertEquals(PlayerProjection.EFFECTS_MAX, listed.size());
        assertEquals("minecraft:effect_00", listed.get(0).getAsJsonObject().get("type").getAsString());
        assertEquals(-1, listed.get(0).getAsJsonObject().get("duration_ticks").getAsInt());
        assertEquals("minecraft:effect_31", listed.get(31).getAsJsonObject().get("type").getAsString());
        for (int i = 1; i < listed.size(); i++) {
            assertTrue(listed.get(i - 1).getAsJsonObject().get("type").getAsString()
                    .compareTo(listed.get(i).getAsJsonObject().get("type").getAsString()) < 0);
        }
    }

    @Test
    void aBiomeThatIsNotAKeyIsAPlatformBugNotAnAnswer() {
        PlayerFacts broken = facts(at(0, 0, 0, 0, 0), new PlayerFacts.Vitals(20, 20, 20, 5, 0), 0, "Plains",
                List.of());
        IllegalStateException failure = assertThrows(IllegalStateException.class,
                () -> PlayerProjection.project(STEVE, broken));
        assertTrue(failure.getMessage().contains("biome"), failure.getMessage());
    }

    @Test
    void aLongWorldNameIsCutToSixtyFourCodePoints() {
        PlayerFacts.Location location = new PlayerFacts.Location("\uD83C\uDF0D".repeat(70),
                PlayerFacts.Dimension.CUSTOM, 0, 0, 0, 0, 0);
        JsonObject answer = WireCheck.answer("snapshot.player", PlayerProjection.project(STEVE, facts(location,
                new PlayerFacts.Vitals(20, 20, 20, 5, 0), 0, "minecraft:plains", List.of())));
        String world = answer.get("world").getAsString();
        assertEquals(64, world.codePointCount(0, world.length()));
        assertEquals("custom", answer.get("dimension").getAsString());
    }
}
