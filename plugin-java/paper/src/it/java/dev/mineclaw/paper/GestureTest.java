package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import org.bukkit.Location;
import org.bukkit.Material;
import org.bukkit.block.BlockFace;
import org.bukkit.event.block.Action;
import org.bukkit.event.player.PlayerInteractEvent;
import org.bukkit.event.player.PlayerMoveEvent;
import org.bukkit.event.player.PlayerToggleSneakEvent;
import org.bukkit.inventory.EquipmentSlot;
import org.bukkit.inventory.ItemStack;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * The gesture listener in the real plugin jar: a yes/no question shown with {@code gesture: true}
 * is approved by the asked player's sneak, look straight up or right-click in air with an inert
 * item, sent to the bridge as {@code /mineclaw approve <token> gesture} from that player. Another
 * player's gesture, or one with no question pending, sends nothing. "Nothing was sent" is seen
 * by the next command frame being a later marker command.
 */
class GestureTest {
    private static final String TOKEN = "q3x7Yh2L0vT9sKd8Wm4nPa";

    private static void ask(PluginHarness harness, PlayerMock player) throws InterruptedException {
        JsonObject prompt = new JsonObject();
        prompt.addProperty("template", "Shall I clear the weather?");
        JsonArray buttons = new JsonArray();
        for (String answer : new String[] {"approve", "deny"}) {
            JsonObject label = new JsonObject();
            label.addProperty("template", "[" + answer + "]");
            JsonObject button = new JsonObject();
            button.add("label", label);
            button.add("hover", JsonNull.INSTANCE);
            button.addProperty("answer", answer);
            button.add("option", JsonNull.INSTANCE);
            buttons.add(button);
        }
        JsonObject data = new JsonObject();
        data.addProperty("player", player.getUniqueId().toString());
        data.addProperty("token", TOKEN);
        data.add("prompt", prompt);
        data.add("buttons", buttons);
        data.addProperty("expires_ms", 60000);
        data.addProperty("gesture", true);
        harness.bridge.latest().send(TestBridge.frame("b-ask", "approval.show", null, data));
        JsonObject shown = harness.next("approval.show.result").frame().getAsJsonObject("data");
        assertEquals(true, shown.get("shown").getAsBoolean());
    }

    /** The args of the next command frame and who sent it. */
    private static String nextCommand(PluginHarness harness) throws InterruptedException {
        JsonObject data = harness.next("command").frame().getAsJsonObject("data");
        String sender = data.getAsJsonObject("sender").getAsJsonObject("player").get("name").getAsString();
        return sender + " " + data.getAsJsonArray("args");
    }

    private static void marker(PluginHarness harness, PlayerMock player) {
        harness.server.dispatchCommand(player, "mineclaw status");
    }

    @Test
    void onlyTheAskedPlayersSneakApprovesAndOnlyOnce() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            PlayerMock alex = harness.server.addPlayer("Alex");
            harness.server.getPluginManager().callEvent(new PlayerToggleSneakEvent(steve, true));
            marker(harness, steve);
            assertEquals("Steve [\"status\"]", nextCommand(harness)); // nothing pending: nothing sent

            ask(harness, steve);
            harness.server.getPluginManager().callEvent(new PlayerToggleSneakEvent(alex, true));
            harness.server.getPluginManager().callEvent(new PlayerToggleSneakEvent(steve, true));
            assertEquals("Steve [\"approve\",\"" + TOKEN + "\",\"gesture\"]", nextCommand(harness));
            harness.server.getPluginManager().callEvent(new PlayerToggleSneakEvent(steve, false));
            harness.server.getPluginManager().callEvent(new PlayerToggleSneakEvent(steve, true));
            marker(harness, alex);
            assertEquals("Alex [\"status\"]", nextCommand(harness)); // used: the second sneak sent nothing
        }
    }

    @Test
    void lookingStraightUpAndRightClickingAirWithAStickApprove() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            ask(harness, steve);
            Location ahead = steve.getLocation().clone();
            ahead.setPitch(0f);
            Location up = ahead.clone();
            up.setPitch(-90f);
            harness.server.getPluginManager().callEvent(new PlayerMoveEvent(steve, up, ahead));
            harness.server.getPluginManager().callEvent(new PlayerMoveEvent(steve, ahead, up));
            assertEquals("Steve [\"approve\",\"" + TOKEN + "\",\"gesture\"]", nextCommand(harness));

            ask(harness, steve);
            ItemStack bread = new ItemStack(Material.BREAD);
            harness.server.getPluginManager().callEvent(
                    new PlayerInteractEvent(steve, Action.RIGHT_CLICK_AIR, bread, null, BlockFace.SELF, EquipmentSlot.HAND));
            ItemStack stick = new ItemStack(Material.STICK);
            harness.server.getPluginManager().callEvent(
                    new PlayerInteractEvent(steve, Action.RIGHT_CLICK_AIR, stick, null, BlockFace.SELF, EquipmentSlot.OFF_HAND));
            marker(harness, steve);
            assertEquals("Steve [\"status\"]", nextCommand(harness)); // food is eaten; the off hand does not count
            harness.server.getPluginManager().callEvent(
                    new PlayerInteractEvent(steve, Action.RIGHT_CLICK_AIR, stick, null, BlockFace.SELF, EquipmentSlot.HAND));
            assertEquals("Steve [\"approve\",\"" + TOKEN + "\",\"gesture\"]", nextCommand(harness));
        }
    }
}
