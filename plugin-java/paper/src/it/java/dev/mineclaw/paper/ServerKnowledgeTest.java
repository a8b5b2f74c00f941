package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.mineclaw.core.support.TestBridge;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bukkit.command.FormattedCommandAlias;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * {@code server.commands} and {@code server.plugins} on MockBukkit's real command map and plugin
 * manager: a plugin's command listed once (not once per alias) with its owner, usage and
 * description, shown to a player only with its node, to the console always; a commands.yml
 * alias script left out; the installed plugins with their declared meta.
 */
class ServerKnowledgeTest {
    private static JsonObject commands(PluginHarness harness, String id, JsonElement player) throws Exception {
        JsonObject request = new JsonObject();
        request.add("player", player);
        request.add("plugin", JsonNull.INSTANCE);
        request.addProperty("max_chars", 24576);
        harness.bridge.latest().send(TestBridge.frame(id, "server.commands", null, request));
        return harness.next("server.commands.result").frame().getAsJsonObject("data");
    }

    private static Map<String, JsonObject> byName(JsonObject answer) {
        Map<String, JsonObject> named = new HashMap<>();
        for (JsonElement command : answer.getAsJsonArray("commands")) {
            named.put(command.getAsJsonObject().get("name").getAsString(), command.getAsJsonObject());
        }
        return named;
    }

    @Test
    void theCommandMapIsListedByWhatTheAskerMayRun() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.server.getCommandMap().register("warps",
                    new OwnedCommand("warp", "Teleports you to a warp.", "/<command> <name>", List.of("go"),
                            "warps.use", harness.plugin));
            harness.server.getCommandMap().register("bukkit",
                    new FormattedCommandAlias("healall", new String[] {"effect give @a instant_health"}));
            PlayerMock steve = harness.server.addPlayer("Steve");
            PlayerMock alex = harness.server.addPlayer("Alex");
            alex.addAttachment(harness.plugin, "warps.use", true);

            Map<String, JsonObject> console = byName(commands(harness, "b-70", JsonNull.INSTANCE));
            JsonObject warp = console.get("warp");
            assertEquals(harness.plugin.getName(), warp.get("plugin").getAsString(), warp.toString());
            assertEquals("/warp <name>", warp.get("usage").getAsString());
            assertEquals("Teleports you to a warp.", warp.get("description").getAsString());
            assertEquals("go", warp.getAsJsonArray("aliases").get(0).getAsString());
            assertFalse(console.containsKey("go"), "an alias is no command of its own");
            assertFalse(console.containsKey("healall"), "a commands.yml script is left out");
            assertTrue(console.containsKey("reload"), console.keySet().toString()); // the server's own

            assertTrue(byName(commands(harness, "b-71", new JsonPrimitive(alex.getUniqueId().toString())))
                    .containsKey("warp"));
            assertFalse(byName(commands(harness, "b-72", new JsonPrimitive(steve.getUniqueId().toString())))
                    .containsKey("warp"));
        }
    }

    @Test
    void theInstalledPluginsAreListedWithTheirMeta() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            JsonObject request = new JsonObject();
            request.addProperty("max_chars", 4096);
            harness.bridge.latest().send(TestBridge.frame("b-73", "server.plugins", null, request));
            JsonObject answer = harness.next("server.plugins.result").frame().getAsJsonObject("data");
            JsonObject mineclaw = answer.getAsJsonArray("plugins").get(0).getAsJsonObject();
            assertEquals("Mineclaw", mineclaw.get("name").getAsString(), answer.toString());
            assertEquals(harness.plugin.getPluginMeta().getVersion(), mineclaw.get("version").getAsString());
            assertTrue(mineclaw.get("enabled").getAsBoolean());
            assertEquals(1, answer.get("total").getAsInt());
        }
    }
}
