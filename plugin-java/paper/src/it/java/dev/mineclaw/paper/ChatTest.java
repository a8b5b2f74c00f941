package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import io.papermc.paper.chat.ChatRenderer;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.kyori.adventure.audience.Audience;
import net.kyori.adventure.chat.SignedMessage;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.event.player.PlayerCommandSendEvent;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * Public chat through the jar's listener: the event is built as Paper builds it and fired as
 * Paper fires it (on MockBukkit's async event thread, or on the main thread for a plugin's
 * Player#chat), with a real bridge deciding.
 */
class ChatTest {
    private static AsyncChatEvent event(boolean async, PlayerMock player, String text) {
        Component message = Component.text(text);
        return new AsyncChatEvent(async, player, new HashSet<Audience>(), ChatRenderer.defaultRenderer(), message,
                message, SignedMessage.system(text, message));
    }

    private static String plain(Component component) {
        return PlainTextComponentSerializer.plainText().serialize(component);
    }

    private static String rendered(AsyncChatEvent event, PlayerMock player) {
        return plain(event.renderer().render(player, player.displayName(), event.message(), player));
    }

    private static AsyncChatEvent fireAsync(PluginHarness harness, AsyncChatEvent event) throws Exception {
        harness.server.getScheduler().executeAsyncEvent(event).get(20, TimeUnit.SECONDS);
        return event;
    }

    @Test
    void anAcceptedWakeIsShownWithTheAiPrefixAndCarriesThePlayersPermissions() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.answerChat(PluginHarness.verdict("accept", true));
            PlayerMock steve = harness.server.addPlayer("Steve");
            AsyncChatEvent event = fireAsync(harness, event(true, steve, "@ai hello"));
            assertFalse(event.isCancelled());
            assertEquals("[AI] <Steve> @ai hello", rendered(event, steve));
            JsonObject request = harness.next("chat").frame().getAsJsonObject("data");
            assertEquals("@ai hello", request.get("text").getAsString());
            JsonArray granted = request.getAsJsonArray("granted");
            assertTrue(granted.toString().contains("mineclaw.command.chat"), granted.toString());
            assertFalse(granted.toString().contains("mineclaw.command.reload"), granted.toString());
        }
    }

    @Test
    void aRefusedWakeIsCancelled() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.answerChat(PluginHarness.verdict("refuse", false));
            PlayerMock steve = harness.server.addPlayer("Steve");
            assertTrue(fireAsync(harness, event(true, steve, "@ai do it")).isCancelled());
        }
    }

    @Test
    void ordinaryChatPassesWithoutARoundTrip() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            AsyncChatEvent event = fireAsync(harness, event(true, steve, "hello all"));
            assertFalse(event.isCancelled());
            assertEquals("<Steve> hello all", rendered(event, steve));
        }
    }

    @Test
    void aWakeWhileTheBridgeIsOfflineIsCancelledWithTheOfflineLine() throws Exception {
        try (PluginHarness harness = PluginHarness.unlinked("bridge-url: ws://127.0.0.1:9/link\ntoken: t\n")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            assertTrue(fireAsync(harness, event(true, steve, "@ai are you there")).isCancelled());
            harness.server.getScheduler().performTicks(2);
            Component notice = steve.nextComponentMessage();
            assertNotNull(notice);
            assertTrue(plain(notice).contains("offline"), plain(notice));
        }
    }

    @Test
    void theLocaleAndTheOwnersLinesInPluginLinkYmlAreUsed() throws Exception {
        String yaml = "bridge-url: ws://127.0.0.1:9/link\ntoken: t\nlocale: zh_CN\n";
        try (PluginHarness harness = PluginHarness.unlinked(yaml)) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            assertTrue(fireAsync(harness, event(true, steve, "@ai 你好")).isCancelled());
            harness.server.getScheduler().performTicks(2);
            assertEquals("助手当前离线，你的消息没有发送。", plain(steve.nextComponentMessage()));
        }
        // Keys are written dotted, as the core names them; Bukkit reads the dots as nesting.
        try (PluginHarness harness = PluginHarness.linked(
                "locale: zh_CN\nmessages:\n  chat.ai-prefix: \"<gold>[机器人]</gold> \"\n")) {
            harness.answerChat(PluginHarness.verdict("accept", true));
            PlayerMock steve = harness.server.addPlayer("Steve");
            AsyncChatEvent event = fireAsync(harness, event(true, steve, "@ai hello"));
            assertEquals("[机器人] <Steve> @ai hello", rendered(event, steve));
        }
    }

    /** Another plugin's Player#chat fires the event on the main thread, which must never wait. */
    @Test
    void aChatEventOnTheMainThreadIsNotHeldForTheVerdict() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            CountDownLatch released = new CountDownLatch(1);
            harness.bridge.onFrame((connection, frame) -> {
                if ("chat".equals(frame.get("type").getAsString())) {
                    try {
                        // The verdict is held until the event has returned: a listener waiting
                        // for it would run into its timeout and cancel the wake.
                        released.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException exc) {
                        Thread.currentThread().interrupt();
                    }
                    connection.send(TestBridge.frame("b-" + frame.get("id").getAsString(), "chat.result",
                            frame.get("id").getAsString(), PluginHarness.verdict("accept", true)));
                }
            });
            PlayerMock steve = harness.server.addPlayer("Steve");
            AsyncChatEvent event = event(false, steve, "@ai from a plugin");
            harness.server.getPluginManager().callEvent(event);
            released.countDown();
            assertFalse(event.isCancelled(), "the main thread waited for the verdict");
            // The bridge still heard the message.
            assertEquals("@ai from a plugin", harness.next("chat").frame().getAsJsonObject("data")
                    .get("text").getAsString());
        }
    }

    /** A chat event that outlives its player (quit while the event was in flight) must not throw. */
    @Test
    void aPlayerWhoJustQuitHasNoPermissionsAndNothingThrows() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.answerChat(PluginHarness.verdict("pass", false));
            PlayerMock steve = harness.server.addPlayer("Steve");
            steve.disconnect();
            AsyncChatEvent event = fireAsync(harness, event(true, steve, "@ai still there?"));
            assertFalse(event.isCancelled());
            assertEquals(0, harness.next("chat").frame().getAsJsonObject("data").getAsJsonArray("granted").size());
        }
    }

    /** The verdict came after the plugin gave up: the bridge is told, so it drops the message. */
    @Test
    void aLateVerdictIsReportedToTheBridgeAndTheWakeIsCancelledWithTheOfflineLine() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("verdict-timeout-ms: 50\n")) {
            // The bridge never answers, so every verdict is late.
            PlayerMock steve = harness.server.addPlayer("Steve");
            assertTrue(fireAsync(harness, event(true, steve, "@ai slow bridge")).isCancelled());
            String chatId = harness.next("chat").frame().get("id").getAsString();
            JsonObject expired = harness.next("chat.expired").frame().getAsJsonObject("data");
            assertEquals(chatId, expired.get("request").getAsString());
            harness.server.getScheduler().performTicks(2);
            Component notice = steve.nextComponentMessage();
            assertNotNull(notice);
            assertTrue(plain(notice).contains("offline"), plain(notice));
        }
    }

    /** Paper resends the command tree after a permission change (LuckPerms does the same). */
    @Test
    void permissionsAreReadAgainWhenPaperResendsTheCommandTree() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            harness.answerChat(PluginHarness.verdict("pass", false));
            PlayerMock steve = harness.server.addPlayer("Steve");
            steve.addAttachment(harness.plugin, "mineclaw.command.reload", true);
            harness.server.getPluginManager().callEvent(new PlayerCommandSendEvent(steve, new ArrayList<>()));
            fireAsync(harness, event(true, steve, "@ai reload please"));
            JsonArray granted = harness.next("chat").frame().getAsJsonObject("data").getAsJsonArray("granted");
            assertTrue(granted.toString().contains("mineclaw.command.reload"), granted.toString());
        }
    }
}
