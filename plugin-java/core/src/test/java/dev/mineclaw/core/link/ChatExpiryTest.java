package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.gson.JsonObject;
import dev.mineclaw.core.support.RecordingListener;
import dev.mineclaw.core.support.TestBridge;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A chat request whose verdict does not come in time is reported to the bridge as
 * {@code chat.expired}, so the bridge drops a message the plugin already treated as unanswered
 * (before, the player was told "offline, not sent" while the bridge answered it anyway).
 */
class ChatExpiryTest {
    private static final String TOKEN = "expiry-token";

    private static LinkClient connected(TestBridge bridge, RecordingListener listener) throws InterruptedException {
        Handshake.Identity identity = new Handshake.Identity(UUID.randomUUID(), "0.1.0", "1.21.4", "testkit",
                List.of("chat"));
        LinkClient client = new LinkClient(LinkSettings.defaults(bridge.url()), identity, () -> TOKEN, listener,
                Logger.getLogger("chat-expiry"));
        client.start();
        listener.await("up:");
        return client;
    }

    @Test
    void aChatThatGetsNoVerdictInTimeIsReportedExpiredWithItsId() throws Exception {
        RecordingListener listener = new RecordingListener();
        try (TestBridge bridge = new TestBridge(TOKEN).begin()) {
            LinkClient client = connected(bridge, listener);
            try {
                // The bridge never answers: the verdict is late by construction.
                ExecutionException late = assertThrows(ExecutionException.class, () -> client
                        .request("chat", LinkClientTest.chatData("@ai hello"), Duration.ofMillis(50))
                        .get(10, TimeUnit.SECONDS));
                assertEquals(LinkException.class, late.getCause().getClass());
                JsonObject chat = bridge.next().frame();
                assertEquals("chat", chat.get("type").getAsString());
                JsonObject expired = bridge.next().frame();
                assertEquals("chat.expired", expired.get("type").getAsString());
                assertEquals(chat.get("id").getAsString(), expired.getAsJsonObject("data").get("request").getAsString());
            } finally {
                client.close();
            }
        }
    }

    @Test
    void aChatAnsweredInTimeIsNotReported() throws Exception {
        RecordingListener listener = new RecordingListener();
        try (TestBridge bridge = new TestBridge(TOKEN).begin()) {
            bridge.onFrame((connection, frame) -> {
                if ("chat".equals(frame.get("type").getAsString())) {
                    connection.send(TestBridge.frame("b-1", "chat.result", frame.get("id").getAsString(),
                            LinkClientTest.verdict()));
                }
            });
            LinkClient client = connected(bridge, listener);
            try {
                client.request("chat", LinkClientTest.chatData("@ai hello"), Duration.ofSeconds(10))
                        .get(10, TimeUnit.SECONDS);
                assertEquals("chat", bridge.next().frame().get("type").getAsString());
                // A join sent afterwards is the next frame: no chat.expired came in between.
                JsonObject join = new JsonObject();
                join.add("player", LinkClientTest.chatData("x").get("player"));
                client.sendEvent("player.join", join);
                assertEquals("player.join", bridge.next().frame().get("type").getAsString());
            } finally {
                client.close();
            }
        }
    }
}
