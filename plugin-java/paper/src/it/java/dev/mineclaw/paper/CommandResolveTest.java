package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import java.util.List;
import org.bukkit.command.FormattedCommandAlias;
import org.junit.jupiter.api.Test;

/**
 * {@code command.resolve} on MockBukkit's real command map: a plugin's command found by its name,
 * its alias and its namespaced alias, with its owner and permission node; a commands.yml alias
 * script marked as such; an unknown label answered as unknown.
 */
class CommandResolveTest {
    @Test
    void aliasesResolveToTheirCommandWithOwnerAndPermission() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.server.getCommandMap().register("essentials",
                    new OwnedCommand("sudo", "", "/sudo", List.of("esudo"), "essentials.sudo",
                            harness.plugin));
            harness.server.getCommandMap().register("bukkit",
                    new FormattedCommandAlias("healall", new String[] {"effect give @a instant_health"}));
            JsonObject request = new JsonObject();
            JsonArray labels = new JsonArray();
            for (String label : List.of("esudo", "essentials:esudo", "sudo", "nosuch", "healall")) {
                labels.add(label);
            }
            request.add("labels", labels);
            harness.bridge.latest().send(TestBridge.frame("b-60", "command.resolve", null, request));
            JsonArray commands = harness.next("command.resolve.result").frame().getAsJsonObject("data")
                    .getAsJsonArray("commands");
            assertEquals(5, commands.size());
            for (int i = 0; i < 3; i++) {
                JsonObject sudo = commands.get(i).getAsJsonObject();
                assertTrue(sudo.get("known").getAsBoolean(), sudo.toString());
                assertEquals("sudo", sudo.get("name").getAsString());
                assertEquals(harness.plugin.getName(), sudo.get("plugin").getAsString());
                assertEquals("essentials.sudo", sudo.get("permission").getAsString());
                assertEquals("esudo", sudo.getAsJsonArray("aliases").get(0).getAsString());
                assertFalse(sudo.get("script").getAsBoolean());
            }
            JsonObject unknown = commands.get(3).getAsJsonObject();
            assertFalse(unknown.get("known").getAsBoolean());
            assertTrue(unknown.get("name").isJsonNull());
            JsonObject script = commands.get(4).getAsJsonObject();
            assertTrue(script.get("known").getAsBoolean() && script.get("script").getAsBoolean(), script.toString());
        }
    }
}
