package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.Material;
import org.bukkit.inventory.ItemStack;
import org.bukkit.inventory.meta.Damageable;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * The bridge's requests served through both of Paper's schedulers in MockBukkit: the global
 * region scheduler (broadcasts) and a player's entity scheduler (messages to one player, the
 * snapshots). Folia's regions themselves cannot be shown here (MockBukkit runs everything on one
 * main thread); the testkit's ThreadRulesTest and SightLineTest cover them below the adapter.
 */
class SchedulersAndSnapshotsTest {
    private static void send(PluginHarness harness, String id, String type, JsonObject data) {
        harness.bridge.latest().send(TestBridge.frame(id, type, null, data));
    }

    private static JsonObject text(String template) {
        JsonObject text = new JsonObject();
        text.addProperty("template", template);
        return text;
    }

    @Test
    void aBroadcastRunsOnTheGlobalSchedulerAndAMessageOnThePlayersOwn() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            harness.server.addPlayer("Alex");
            JsonObject broadcast = new JsonObject();
            broadcast.addProperty("target", "broadcast");
            broadcast.add("text", text("hello everyone"));
            send(harness, "b-20", "output.chat", broadcast);
            JsonObject delivered = harness.next("output.chat.result").frame().getAsJsonObject("data");
            assertEquals(2, delivered.get("delivered").getAsInt());
            JsonObject direct = new JsonObject();
            direct.addProperty("target", "player");
            direct.addProperty("player", steve.getUniqueId().toString());
            direct.add("text", text("just for you"));
            send(harness, "b-21", "output.chat", direct);
            assertEquals(1, harness.next("output.chat.result").frame().getAsJsonObject("data")
                    .get("delivered").getAsInt());
            assertEquals("hello everyone", plain(steve.nextComponentMessage()));
            assertEquals("just for you", plain(steve.nextComponentMessage()));
        }
    }

    /** Durability was read through ItemMeta#hasMaxDamage, which only custom items set. */
    @Test
    void aDamagedDiamondSwordReportsItsDamageAndDurability() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            ItemStack sword = new ItemStack(Material.DIAMOND_SWORD);
            sword.editMeta(Damageable.class, meta -> meta.setDamage(100));
            steve.getInventory().setItemInMainHand(sword);
            JsonObject request = new JsonObject();
            request.addProperty("player", steve.getUniqueId().toString());
            request.addProperty("mode", "main_hand");
            request.addProperty("max_slots", 41);
            request.addProperty("max_chars", 4096);
            send(harness, "b-22", "snapshot.item", request);
            JsonObject result = harness.next("snapshot.item.result").frame().getAsJsonObject("data");
            JsonObject item = result.getAsJsonArray("items").get(0).getAsJsonObject();
            assertEquals("minecraft:diamond_sword", item.get("type").getAsString());
            assertTrue(item.get("damage").isJsonObject(), "damage: " + item.get("damage"));
            assertEquals(100, item.getAsJsonObject("damage").get("current").getAsInt());
            assertEquals(Material.DIAMOND_SWORD.getMaxDurability(),
                    item.getAsJsonObject("damage").get("max").getAsInt());
        }
    }

    /**
     * MockBukkit does not implement every read of a player snapshot (EntityMock#isInLava throws
     * UnimplementedOperationException), so the full player snapshot is covered by the core's
     * PlayerProjectionTest and the testkit's SnapshotFactsTest; here: a read that fails on the
     * player's scheduler still answers the bridge, with an error, instead of leaving it waiting.
     */
    @Test
    void aSnapshotReadThatFailsStillAnswersTheBridge() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            JsonObject request = new JsonObject();
            request.addProperty("player", steve.getUniqueId().toString());
            send(harness, "b-23", "snapshot.player", request);
            JsonObject answer = harness.next("error").frame();
            assertEquals("b-23", answer.get("re").getAsString());
        }
    }

    private static String plain(Component component) {
        assertNotNull(component, "no message");
        return PlainTextComponentSerializer.plainText().serialize(component);
    }
}
