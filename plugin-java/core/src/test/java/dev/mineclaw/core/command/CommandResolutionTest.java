package dev.mineclaw.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.support.FakePlatform;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CommandResolutionTest {
    private final FakePlatform platform = new FakePlatform();
    private final CommandResolution resolution = new CommandResolution(this.platform, Duration.ofSeconds(10));

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private JsonArray resolve(String... labels) throws Exception {
        JsonObject data = new JsonObject();
        JsonArray list = new JsonArray();
        for (String label : labels) {
            list.add(label);
        }
        data.add("labels", list);
        return this.resolution.resolve(data).get(10, TimeUnit.SECONDS).getAsJsonArray("commands");
    }

    @Test
    void anAliasIsAnsweredWithItsCommandAndAnUnknownLabelAsUnknown() throws Exception {
        CommandFacts sudo = new CommandFacts("sudo", "Essentials", List.of("esudo"), "essentials.sudo", false);
        this.platform.command(sudo, "sudo", "esudo", "essentials:esudo");
        JsonArray commands = resolve("esudo", "nosuch", "essentials:esudo");
        JsonObject esudo = commands.get(0).getAsJsonObject();
        assertEquals("esudo", esudo.get("label").getAsString());
        assertTrue(esudo.get("known").getAsBoolean());
        assertEquals("sudo", esudo.get("name").getAsString());
        assertEquals("Essentials", esudo.get("plugin").getAsString());
        assertEquals("essentials.sudo", esudo.get("permission").getAsString());
        assertEquals("esudo", esudo.getAsJsonArray("aliases").get(0).getAsString());
        JsonObject unknown = commands.get(1).getAsJsonObject();
        assertFalse(unknown.get("known").getAsBoolean());
        assertTrue(unknown.get("name").isJsonNull() && unknown.get("permission").isJsonNull());
        assertEquals("sudo", commands.get(2).getAsJsonObject().get("name").getAsString());
    }

    @Test
    void factsOutsideTheProtocolAreBoundedNotSent() {
        List<String> aliases = new java.util.ArrayList<>(List.of("has space", ""));
        for (int i = 0; i < 70; i++) {
            aliases.add("a" + i);
        }
        CommandFacts odd = new CommandFacts("bad name", "P".repeat(80), aliases, "", true);
        JsonObject answer = CommandResolution.project("odd", Optional.of(odd));
        assertEquals("odd", answer.get("name").getAsString());
        assertEquals(64, answer.get("plugin").getAsString().length());
        assertEquals(64, answer.getAsJsonArray("aliases").size());
        assertEquals("a0", answer.getAsJsonArray("aliases").get(0).getAsString());
        assertTrue(answer.get("permission").isJsonNull());
        assertTrue(answer.get("script").getAsBoolean());
    }
}
