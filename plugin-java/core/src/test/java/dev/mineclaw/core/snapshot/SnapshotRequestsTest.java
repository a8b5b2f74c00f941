package dev.mineclaw.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.CoreSettings;
import dev.mineclaw.core.approval.ApprovalRequests;
import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.ItemFacts;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakePlatform;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SnapshotRequestsTest {
    private final FakePlatform platform = new FakePlatform();
    private final SnapshotRequests requests = new SnapshotRequests(this.platform, Duration.ofSeconds(10));
    private final PlayerRef steve = this.platform.join("Steve");

    SnapshotRequestsTest() {
        PlayerFacts facts = PlayerProjectionTest.facts(
                new PlayerFacts.Location("world", PlayerFacts.Dimension.OVERWORLD, 1, 2, 3, 0, 0),
                new PlayerFacts.Vitals(20, 20, 20, 5, 0), 1000, "minecraft:plains", List.of());
        BlockFacts log = new BlockFacts("minecraft:oak_log", "world", 1, 64, 2, Map.of("axis", "y"), 3);
        this.platform.facts(this.steve, facts, new InventoryFacts(0, Map.of(0, ItemFacts.of("minecraft:torch", 5))),
                BlockLookup.hit(log), BlockLookup.unloaded());
    }

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private JsonObject request(String... pairs) {
        JsonObject data = new JsonObject();
        data.addProperty("player", this.steve.uuidText());
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1].matches("-?[0-9]+")) {
                data.addProperty(pairs[i], Integer.parseInt(pairs[i + 1]));
            } else {
                data.addProperty(pairs[i], pairs[i + 1]);
            }
        }
        return data;
    }

    @Test
    void eachSnapshotAnswersFromThePlayersFacts() throws Exception {
        JsonObject player = this.requests.player(request()).get(10, TimeUnit.SECONDS);
        assertEquals("Steve", player.getAsJsonObject("player").get("name").getAsString());
        assertEquals(2.0, player.getAsJsonObject("position").get("y").getAsDouble());

        JsonObject items = this.requests.item(request("mode", "inventory", "max_slots", "41", "max_chars", "4096"))
                .get(10, TimeUnit.SECONDS);
        assertEquals("main_hand", items.getAsJsonArray("items").get(0).getAsJsonObject().get("slot").getAsString());

        JsonObject look = this.requests.block(request("mode", "look", "distance", "7")).get(10, TimeUnit.SECONDS);
        assertEquals("minecraft:oak_log", look.getAsJsonObject("block").get("type").getAsString());
        assertEquals(List.of(7), this.platform.lookDistances());

        JsonObject feet = this.requests.block(request("mode", "feet", "distance", "7")).get(10, TimeUnit.SECONDS);
        assertEquals("unloaded", feet.get("result").getAsString());
        assertEquals(List.of(7), this.platform.lookDistances());
    }

    @Test
    void thePluginAnnouncesBothFeaturesSoTheBridgeOffersTheTools() {
        assertTrue(CoreSettings.DEFAULT_FEATURES.contains(SnapshotRequests.FEATURE));
        assertTrue(CoreSettings.DEFAULT_FEATURES.contains(ApprovalRequests.FEATURE));
    }

    @Test
    void aPlayerWhoLeftIsOfflineForEverySnapshot() {
        this.platform.leave(this.steve);
        for (var pending : List.of(this.requests.player(request()),
                this.requests.item(request("mode", "main_hand", "max_slots", "1", "max_chars", "256")),
                this.requests.block(request("mode", "look", "distance", "5")))) {
            ExecutionException failure = assertThrows(ExecutionException.class, () -> pending.get(10, TimeUnit.SECONDS));
            assertInstanceOf(PlayerGoneException.class, failure.getCause());
        }
    }
}
