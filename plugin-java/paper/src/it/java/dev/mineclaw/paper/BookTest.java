package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * {@code output.book} on MockBukkit: the adapter opens the book on the player's own thread
 * through Adventure's book API (no item given) and answers {@code shown}; a player who is not
 * online is answered {@code PLAYER_OFFLINE}.
 */
class BookTest {
    private static JsonObject book(String player) {
        JsonObject page = new JsonObject();
        page.addProperty("template", "<dark_aqua>Steve</dark_aqua>: <m0>");
        JsonObject model = new JsonObject();
        model.addProperty("m0", "<green>sweet berries</green>");
        page.add("model", model);
        JsonArray pages = new JsonArray();
        pages.add(page);
        JsonObject data = new JsonObject();
        data.addProperty("player", player);
        data.addProperty("title", "Mineclaw: history");
        data.add("pages", pages);
        return data;
    }

    @Test
    void aBookIsOpenedForAnOnlinePlayerWithoutAnItem() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            int items = steve.getInventory().all(org.bukkit.Material.WRITTEN_BOOK).size();
            harness.bridge.latest().send(TestBridge.frame("b-80", "output.book", null,
                    book(steve.getUniqueId().toString())));
            JsonObject answer = harness.next("output.book.result").frame().getAsJsonObject("data");
            assertTrue(answer.get("shown").getAsBoolean(), answer.toString());
            assertEquals(items, steve.getInventory().all(org.bukkit.Material.WRITTEN_BOOK).size());
        }
    }

    @Test
    void aPlayerWhoIsNotOnlineIsAnsweredOffline() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.bridge.latest().send(TestBridge.frame("b-81", "output.book", null,
                    book("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f")));
            JsonObject error = harness.next("error").frame().getAsJsonObject("data");
            assertEquals("PLAYER_OFFLINE", error.get("code").getAsString(), error.toString());
        }
    }
}
