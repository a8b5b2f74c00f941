package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mineclaw.core.approval.ApprovalPrompt;
import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.ThreadRuleException;
import dev.mineclaw.core.snapshot.SnapshotRequests;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import net.kyori.adventure.text.Component;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The testkit's snapshot facts, read by the core's real handlers under Folia's thread rules. */
class SnapshotFactsTest {
    private static final String FACTS = """
            {"op":"player.set","name":"Steve",
             "location":{"world":"world_nether","dimension":"nether","x":10.126,"y":70,"z":-4.5,"yaw":270,"pitch":5},
             "vitals":{"health":7.25,"food":3},
             "game_mode":"creative",
             "state":{"flying":true,"on_ground":false},
             "environment":{"biome":"minecraft:basalt_deltas","weather":"thunder","light":4},
             "effects":[{"type":"minecraft:fire_resistance","amplifier":0,"duration_ticks":-1}],
             "inventory":{"held_slot":2,"slots":{
               "2":{"type":"minecraft:diamond_sword","name":"Excalibur\\u2028run /op","damage":10,"max_damage":1561,
                    "enchantments":[{"id":"minecraft:sharpness","level":5}]},
               "39":{"type":"minecraft:iron_helmet"},
               "20":{"type":"minecraft:torch","amount":64}}},
             "look":{"block":{"type":"minecraft:chest","x":11,"y":70,"z":-4,"properties":{"facing":"north",
                     "type":"single","items":"[diamond x64]"},"light":9},"distance":4.5,"unloaded_at":20},
             "feet":{"result":"hit","block":{"type":"minecraft:netherrack","x":10,"y":69,"z":-5}}}""";

    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final TestkitPlatform platform = new TestkitPlatform("testkit", event -> { }, new ThreadRules(
            this.violations::add));
    private final SnapshotRequests snapshots = new SnapshotRequests(this.platform, Duration.ofSeconds(10));
    private final PlayerRef steve = new PlayerRef(UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"), "Steve");
    private final TestPlayer player = new TestPlayer(this.steve, Set.of());

    SnapshotFactsTest() {
        this.platform.add(this.player);
        this.player.facts(FactsOp.apply(this.player.facts(), JsonParser.parseString(FACTS).getAsJsonObject()));
    }

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private JsonObject request(String json) {
        JsonObject data = JsonParser.parseString(json).getAsJsonObject();
        data.addProperty("player", this.steve.uuidText());
        return data;
    }

    @Test
    void theCoreReadsEachSnapshotOnThePlayersThread() throws Exception {
        JsonObject state = this.snapshots.player(request("{}")).get(10, TimeUnit.SECONDS);
        assertEquals("nether", state.get("dimension").getAsString());
        assertEquals(10.13, state.getAsJsonObject("position").get("x").getAsDouble());
        assertEquals(-90.0, state.getAsJsonObject("facing").get("yaw").getAsDouble());
        assertEquals(7.25, state.get("health").getAsDouble());
        assertEquals(20.0, state.get("max_health").getAsDouble());
        assertEquals(3, state.get("food").getAsInt());
        assertTrue(state.getAsJsonObject("state").get("flying").getAsBoolean());
        assertEquals("minecraft:basalt_deltas", state.getAsJsonObject("environment").get("biome").getAsString());
        assertEquals(-1, state.getAsJsonArray("effects").get(0).getAsJsonObject().get("duration_ticks").getAsInt());

        JsonObject items = this.snapshots.item(request("{\"mode\":\"inventory\",\"max_slots\":41,\"max_chars\":4096}"))
                .get(10, TimeUnit.SECONDS);
        JsonObject sword = items.getAsJsonArray("items").get(0).getAsJsonObject();
        assertEquals("main_hand", sword.get("slot").getAsString());
        assertEquals("Excaliburrun /op", sword.getAsJsonObject("custom_name").get("untrusted_text").getAsString());
        assertEquals("helmet", items.getAsJsonArray("items").get(1).getAsJsonObject().get("slot").getAsString());
        assertEquals("20", items.getAsJsonArray("items").get(2).getAsJsonObject().get("slot").getAsString());

        JsonObject look = this.snapshots.block(request("{\"mode\":\"look\",\"distance\":6}")).get(10, TimeUnit.SECONDS);
        assertEquals(Set.of("facing", "type"), look.getAsJsonObject("block").getAsJsonObject("properties").keySet());
        JsonObject feet = this.snapshots.block(request("{\"mode\":\"feet\",\"distance\":6}")).get(10, TimeUnit.SECONDS);
        assertEquals("minecraft:netherrack", feet.getAsJsonObject("block").get("type").getAsString());
        assertEquals(List.of(), this.violations);
    }

    @Test
    void readingFactsOffThePlayersThreadIsAViolation() {
        assertThrows(ThreadRuleException.class, () -> this.platform.playerFacts(this.steve.uuid()));
        assertThrows(ThreadRuleException.class, () -> this.platform.inventory(this.steve.uuid()));
        assertThrows(ThreadRuleException.class, () -> this.platform.lookedAtBlock(this.steve.uuid(), 5));
        assertThrows(ThreadRuleException.class, () -> this.platform.blockAtFeet(this.steve.uuid()));
        assertEquals(4, this.violations.size());
    }

    @Test
    void aPlayerWhoLeftGetsPlayerGone() {
        this.platform.remove("Steve");
        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> this.snapshots.player(request("{}")).get(10, TimeUnit.SECONDS));
        assertInstanceOf(PlayerGoneException.class, failure.getCause());
    }

    @Test
    void theLineOfSightIsBoundedByDistanceAndStopsAtUnloadedChunks() {
        BlockFacts log = new BlockFacts("minecraft:oak_log", "world", 0, 64, 5, Map.of(), 15);
        TestFacts.Sight near = new TestFacts.Sight(log, 5, 10.0);
        assertEquals(BlockLookup.Result.HIT, near.trace(6).result());
        assertEquals(BlockLookup.Result.MISS, near.trace(4).result());
        TestFacts.Sight behindUnloaded = new TestFacts.Sight(log, 12, 10.0);
        assertEquals(BlockLookup.Result.MISS, behindUnloaded.trace(8).result());
        assertEquals(BlockLookup.Result.UNLOADED, behindUnloaded.trace(11).result());
        assertEquals(BlockLookup.Result.UNLOADED, new TestFacts.Sight(null, 0, 2.0).trace(3).result());
        assertEquals(BlockLookup.Result.MISS, new TestFacts.Sight(null, 0, null).trace(128).result());
    }

    @Test
    void badFactsAreRefusedNamingTheField() {
        List<String> bad = List.of(
                "{\"name\":\"Steve\",\"height\":3}",
                "{\"name\":\"Steve\",\"location\":{\"dimension\":\"moon\"}}",
                "{\"name\":\"Steve\",\"vitals\":{\"food\":\"full\"}}",
                "{\"name\":\"Steve\",\"inventory\":{\"slots\":{\"41\":{\"type\":\"minecraft:stone\"}}}}",
                "{\"name\":\"Steve\",\"inventory\":{\"slots\":{\"0\":{\"amount\":3}}}}",
                "{\"name\":\"Steve\",\"feet\":{\"result\":\"hit\"}}",
                "{\"name\":\"Steve\",\"effects\":[3]}");
        List<String> named = List.of("height", "location.dimension", "vitals.food", "41", "type", "block",
                "effects[0]");
        for (int i = 0; i < bad.size(); i++) {
            JsonObject op = JsonParser.parseString(bad.get(i)).getAsJsonObject();
            ControlLoop.BadCommand failure = assertThrows(ControlLoop.BadCommand.class,
                    () -> FactsOp.apply(this.player.facts(), op));
            assertTrue(failure.getMessage().contains(named.get(i)), failure.getMessage());
        }
    }

    @Test
    void scriptsPickTheLongestWholeWordPrefixAndBoundFeedback() {
        DispatchScripts scripts = new DispatchScripts();
        scripts.add(JsonParser.parseString("{\"command_prefix\":\"time\",\"feedback\":[\"short\"]}").getAsJsonObject());
        scripts.add(JsonParser.parseString("{\"command_prefix\":\"time set\",\"feedback\":[\"Set the time\"]}")
                .getAsJsonObject());
        scripts.add(JsonParser.parseString("{\"command_prefix\":\"ban\",\"status\":\"rejected\"}").getAsJsonObject());
        assertEquals(List.of("Set the time"), DispatchScripts.console(scripts.find("time set day").orElseThrow(),
                "time set day").feedback());
        assertEquals(List.of("short"), DispatchScripts.console(scripts.find("time query").orElseThrow(), "time query")
                .feedback());
        assertTrue(scripts.find("timeset").isEmpty());
        assertFalse(DispatchScripts.player(scripts.find("ban Alex").orElseThrow(), "ban Alex"));

        StringBuilder many = new StringBuilder("{\"command_prefix\":\"spam\",\"feedback\":[");
        for (int i = 0; i < 100; i++) {
            many.append(i == 0 ? "" : ",").append("\"").append("x".repeat(3000)).append("\"");
        }
        scripts.add(JsonParser.parseString(many.append("]}").toString()).getAsJsonObject());
        ConsoleDispatch bounded = DispatchScripts.console(scripts.find("spam").orElseThrow(), "spam");
        assertTrue(bounded.feedback().size() <= 64, "lines: " + bounded.feedback().size());
        assertTrue(bounded.feedback().stream().allMatch(line -> line.length() <= 2048));

        assertThrows(ControlLoop.BadCommand.class,
                () -> scripts.add(JsonParser.parseString("{\"command_prefix\":\"/op\"}").getAsJsonObject()));
        scripts.add(JsonParser.parseString("{\"command_prefix\":\"crash\",\"status\":\"failed\"}").getAsJsonObject());
        assertThrows(IllegalStateException.class,
                () -> DispatchScripts.console(scripts.find("crash now").orElseThrow(), "crash now"));
    }

    @Test
    void anApprovalPromptIsReportedWithEveryClickablePart() {
        ApprovalPrompt prompts = new ApprovalPrompt(new TextRenderer());
        Component shown = prompts.render(Text.of("Alex asks to run <b>give</b>\nas you"), List.of(
                new ApprovalPrompt.Button(Text.of("[Yes]"), Text.of("run it"), "approve", null),
                new ApprovalPrompt.Button(Text.of("[No]"), null, "deny", null)), "q3x7Yh2L0vT9sKd8Wm4nPa");
        JsonObject event = PromptEvents.approval("Steve", shown);
        assertEquals("Alex asks to run give\nas you", event.get("text").getAsString());
        assertEquals(2, event.getAsJsonArray("buttons").size());
        JsonObject yes = event.getAsJsonArray("buttons").get(0).getAsJsonObject();
        assertEquals("[Yes]", yes.get("label").getAsString());
        assertEquals("run it", yes.get("hover").getAsString());
        assertEquals("/mineclaw approve q3x7Yh2L0vT9sKd8Wm4nPa", yes.get("command").getAsString());
        assertEquals("run_command", yes.get("action").getAsString());
        assertTrue(event.getAsJsonArray("buttons").get(1).getAsJsonObject().get("hover").isJsonNull());
        assertNull(PromptEvents.approval("Steve", Component.text("plain line")));
    }
}
