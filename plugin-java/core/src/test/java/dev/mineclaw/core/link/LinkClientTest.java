package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.RecordingListener;
import dev.mineclaw.core.support.TestBridge;
import dev.mineclaw.core.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.java_websocket.WebSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The LinkClient against a real WebSocket server on loopback. */
class LinkClientTest {
    private static final String TOKEN = "test-token";
    private static final UUID INSTANCE = UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");

    private final RecordingListener listener = new RecordingListener();
    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : this.cleanup) {
            closeable.close();
        }
    }

    private TestBridge bridge() throws InterruptedException {
        TestBridge bridge = new TestBridge(TOKEN).begin();
        this.cleanup.add(bridge);
        return bridge;
    }

    private LinkClient client(TestBridge bridge, String token, Duration requestTimeout) {
        LinkSettings settings = LinkSettings.defaults(bridge.url())
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .withRequestTimeout(requestTimeout);
        Handshake.Identity identity = new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of("chat"));
        LinkClient client = new LinkClient(settings, identity, () -> token, this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        return client;
    }

    private LinkClient failover(List<java.net.URI> urls) {
        LinkSettings settings = LinkSettings.defaults(urls).withBackoff(Duration.ofMillis(20), Duration.ofMillis(200));
        Handshake.Identity identity = new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of("chat"));
        LinkClient client = new LinkClient(settings, identity, () -> TOKEN, this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        return client;
    }

    @Test
    void whenTheBridgeInUseGoesAwayTheNextOneIsUsed() throws Exception {
        TestBridge first = bridge();
        TestBridge second = bridge();
        LinkClient client = failover(List.of(first.url(), second.url()));
        client.start();
        this.listener.await("up:");
        assertEquals(first.url(), client.currentUrl());
        first.close();
        this.listener.await("down:");
        this.listener.await("up:");
        assertEquals(second.url(), client.currentUrl());
        assertTrue(client.isUp());
        assertEquals(1, second.hellosSeen());
    }

    @Test
    void aBridgeThatFallsSilentIsGivenUpAndTheNextOneIsUsed() throws Exception {
        // A paused bridge: the socket stays open, pings go unanswered. Without the pings and the
        // silence limit the client stayed on it for good (issue 39).
        TestBridge paused = bridge();
        TestBridge second = bridge();
        LinkSettings settings = LinkSettings.defaults(List.of(paused.url(), second.url()))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).withSilenceTimeout(Duration.ofMillis(900));
        Handshake.Identity identity = new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of("chat"));
        LinkClient client = new LinkClient(settings, identity, () -> TOKEN, this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        client.start();
        this.listener.await("up:");
        paused.mute();
        String down = this.listener.await("down:");
        assertTrue(down.contains("sent nothing"), down);
        this.listener.await("up:");
        assertEquals(second.url(), client.currentUrl());
    }

    @Test
    void whileTheNextBridgeTakesTheServerOverTheSilentOneIsNotTriedAgain() throws Exception {
        // Issue 50: after giving a paused holder up, the client went back to it between the
        // standby's refusals and waited out a handshake there each time (a failover 2 s longer).
        TestBridge paused = bridge();
        TestBridge standby = bridge();
        LinkSettings settings = LinkSettings.defaults(List.of(paused.url(), standby.url()))
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).withSilenceTimeout(Duration.ofMillis(900))
                .withHandshakeTimeout(Duration.ofMillis(900));
        Handshake.Identity identity = new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of("chat"));
        LinkClient client = new LinkClient(settings, identity, () -> TOKEN, this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        client.start();
        this.listener.await("up:");
        standby.refuseWith(4005);  // its lease is not free yet
        paused.mute();
        this.listener.await("down:");
        for (int refusal = 0; refusal < 3; refusal++) {
            assertEquals(4005, standby.nextClose());
        }
        assertEquals(1, paused.connections(), "the silent bridge was tried again");
        standby.refuseWith(0);  // the lease expired: the standby serves the server now
        this.listener.await("up:");
        assertEquals(standby.url(), client.currentUrl());
    }

    @Test
    void aBridgeThatDoesNotServeThisServerIsPassedOverForTheNext() throws Exception {
        TestBridge refusing = bridge();
        refusing.refuseWith(4005);
        TestBridge serving = bridge();
        LinkClient client = failover(List.of(refusing.url(), serving.url()));
        client.start();
        assertEquals(4005, refusing.nextClose());
        this.listener.await("up:");
        assertEquals(serving.url(), client.currentUrl());
        assertEquals(1, refusing.hellosSeen());
    }

    @Test
    void aRefusedHelloWaitsForTheBridgesCloseFrame() throws Exception {
        // The close frame comes a moment after the error reply: cutting the socket on the reply
        // would show the bridge 1006 and lose the code that steers the next attempt.
        TestBridge refusing = bridge();
        refusing.refuseWith(4005);
        refusing.delayRefusalClose(Duration.ofMillis(300));
        TestBridge serving = bridge();
        LinkClient client = failover(List.of(refusing.url(), serving.url()));
        client.start();
        assertEquals(4005, refusing.nextClose());
        this.listener.await("up:");
        assertEquals(serving.url(), client.currentUrl());
    }

    @Test
    void anAddressNobodyListensOnIsSkipped() throws Exception {
        TestBridge serving = bridge();  // first, so the dead one's port cannot be handed to it
        TestBridge dead = bridge();
        java.net.URI deadUrl = dead.url();
        dead.close();
        LinkClient client = failover(List.of(deadUrl, serving.url()));
        client.start();
        this.listener.await("up:");
        assertEquals(serving.url(), client.currentUrl());
    }

    @Test
    void whenEveryBridgeRefusesTheClientKeepsGoingRoundWithoutComingUp() throws Exception {
        TestBridge first = bridge();
        TestBridge second = bridge();
        first.refuseWith(4005);
        second.refuseWith(4005);
        LinkClient client = failover(List.of(first.url(), second.url()));
        client.start();
        for (int round = 0; round < 2; round++) {
            assertEquals(4005, first.nextClose());
            assertEquals(4005, second.nextClose());
        }
        assertFalse(client.isUp());
        // The first to serve it again gets the server.
        first.refuseWith(0);
        this.listener.await("up:");
        assertEquals(first.url(), client.currentUrl());
    }

    @Test
    void settingsRefuseAnEmptyOrRepeatedBridgeList() {
        assertThrows(IllegalArgumentException.class, () -> LinkSettings.defaults(List.of()));
        java.net.URI url = java.net.URI.create("ws://127.0.0.1:1/link");
        assertThrows(IllegalArgumentException.class, () -> LinkSettings.defaults(List.of(url, url)));
    }

    private LinkClient connected(TestBridge bridge) throws InterruptedException {
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        client.start();
        this.listener.await("up:");
        return client;
    }

    /** A chat request's data from Steve; shared with the other link tests. */
    static JsonObject chatData(String text) {
        JsonObject player = new JsonObject();
        player.addProperty("uuid", "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b");
        player.addProperty("name", "Steve");
        JsonObject data = new JsonObject();
        data.add("player", player);
        data.add("granted", new JsonArray());
        data.addProperty("text", text);
        return data;
    }

    /** A passing verdict's data. */
    static JsonObject verdict() {
        JsonObject data = new JsonObject();
        data.addProperty("decision", "pass");
        data.addProperty("ai_prefix", false);
        data.add("notice", com.google.gson.JsonNull.INSTANCE);
        return data;
    }

    private static LinkException failure(CompletableFuture<?> future) {
        ExecutionException thrown = assertThrows(ExecutionException.class, () -> future.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(LinkException.class, thrown.getCause());
    }

    @Test
    void handshakeProvesTheTokenAndDeliversTheLinkState() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        client.start();
        assertEquals("up:s1", this.listener.await("up:"));
        assertEquals("state:prefixed:@ai", this.listener.await("state:"));
        assertTrue(client.isUp());
    }

    @Test
    void wrongTokenNeverComesUpAndKeepsRetryingWithBackoff() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, "not-the-token", Duration.ofSeconds(10));
        client.start();
        String first = bridge.nextHello();
        assertEquals(4001, bridge.nextClose());
        String down = this.listener.await("down:");
        assertTrue(down.contains("AUTH_FAILED") || down.contains("4001"), down);
        String second = bridge.nextHello();
        assertNotEquals(first, second, "each attempt answers a fresh nonce");
        assertTrue(!client.isUp());
    }

    @Test
    void requestGetsItsAnswer() throws Exception {
        TestBridge bridge = bridge();
        bridge.onFrame((connection, frame) -> connection.send(TestBridge.frame("b-1", "chat.result",
                frame.get("id").getAsString(), verdict())));
        LinkClient client = connected(bridge);
        JsonObject answer = client.request("chat", chatData("@ai hi")).get(10, TimeUnit.SECONDS);
        assertEquals("pass", answer.get("decision").getAsString());
    }

    @Test
    void manyConcurrentRequestsAreSentOneAtATimeAndAllAnswered() throws Exception {
        TestBridge bridge = bridge();
        bridge.onFrame((connection, frame) -> connection.send(TestBridge.frame("b-" + frame.get("id").getAsString(),
                "chat.result", frame.get("id").getAsString(), verdict())));
        LinkClient client = connected(bridge);
        List<CompletableFuture<JsonObject>> answers = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 50; i++) {
                    answers.add(client.request("chat", chatData("@ai " + i)));
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join(10_000);
        }
        CompletableFuture.allOf(answers.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
        assertEquals(400, answers.size());
    }

    @Test
    void fragmentedMessagesAreReassembled() throws Exception {
        TestBridge bridge = bridge();
        bridge.onFrame((connection, frame) -> {
            if (!"command".equals(frame.get("type").getAsString())) {
                return;
            }
            JsonObject text = new JsonObject();
            text.addProperty("template", "h\u00e9llo \uD83D\uDE00 " + "x".repeat(2000));
            JsonArray lines = new JsonArray();
            lines.add(text);
            JsonObject data = new JsonObject();
            data.add("lines", lines);
            // 7-byte fragments split the multi-byte characters across frames too.
            TestBridge.sendFragmented(connection, TestBridge.frame("b-1", "command.result",
                    frame.get("id").getAsString(), data), 7);
        });
        LinkClient client = connected(bridge);
        JsonObject command = new JsonObject();
        JsonObject sender = new JsonObject();
        sender.addProperty("kind", "console");
        sender.add("granted", new JsonArray());
        command.add("sender", sender);
        command.add("args", new JsonArray());
        JsonObject answer = client.request("command", command).get(10, TimeUnit.SECONDS);
        String template = answer.getAsJsonArray("lines").get(0).getAsJsonObject().get("template").getAsString();
        assertTrue(template.startsWith("h\u00e9llo \uD83D\uDE00 x"), template.substring(0, 12));
        assertEquals(2000 + 9, template.length());
    }

    @Test
    void requestsInFlightFailWhenTheLinkDrops() throws Exception {
        TestBridge bridge = bridge();
        bridge.onFrame((connection, frame) -> connection.close(1001, "going away"));
        LinkClient client = connected(bridge);
        LinkException dropped = failure(client.request("chat", chatData("@ai hi")));
        assertEquals(ErrorCode.DISCONNECTED, dropped.code());
        this.listener.await("down:");
    }

    @Test
    void requestsWhileDownFailAtOnce() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        CompletableFuture<JsonObject> before = client.request("chat", chatData("@ai hi"));
        assertTrue(before.isCompletedExceptionally(), "a request while down must fail without waiting");
        assertEquals(ErrorCode.DISCONNECTED, failure(before).code());
        assertTrue(!client.sendEvent("player.join", new JsonObject()));
    }

    @Test
    void unansweredRequestTimesOut() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofMillis(100));
        client.start();
        this.listener.await("up:");
        assertEquals(ErrorCode.TIMEOUT, failure(client.request("chat", chatData("@ai hi"))).code());
    }

    @Test
    void reconnectsAfterTheBridgeDropsAndAnswersAFreshChallenge() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = connected(bridge);
        String firstNonce = bridge.nextHello();
        bridge.latest().close(1001, "bridge restarting");
        this.listener.await("down:");
        assertEquals("up:s2", this.listener.await("up:"));
        assertNotEquals(firstNonce, bridge.nextHello());
        assertEquals(2, bridge.connections());
        assertTrue(client.isUp());
    }

    @Test
    void aReplacedConnectionPausesBeforeRetryingInsteadOfTakingTheLinkBack() throws Exception {
        assertEquals(LinkClient.REPLACED_PAUSE, LinkClient.delayAfter(4004, Duration.ofMillis(20)));
        assertEquals(Duration.ofMinutes(5), LinkClient.delayAfter(4004, Duration.ofMinutes(5)));
        assertEquals(Duration.ofMillis(20), LinkClient.delayAfter(1001, Duration.ofMillis(20)));
        assertEquals(Duration.ofMillis(20), LinkClient.delayAfter(-1, Duration.ofMillis(20)));

        TestBridge bridge = bridge();
        LinkClient client = connected(bridge);
        bridge.latest().close(4004, "replaced by a newer connection");
        this.listener.await("down:");
        // With a 20-200 ms backoff a plain drop reconnects at once (see the test above); after a
        // replacement the client waits a minute, so no second connection arrives meanwhile.
        Thread.sleep(1000);
        assertEquals(1, bridge.connections());
        assertFalse(client.isUp());
    }

    @Test
    void servesBridgeRequestsThroughHandlers() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        client.onRequest("players.list", data -> {
            JsonObject answer = new JsonObject();
            answer.add("players", new JsonArray());
            return CompletableFuture.completedFuture(answer);
        });
        client.start();
        this.listener.await("up:");
        bridge.latest().send(TestBridge.frame("b-9", "players.list", null, new JsonObject()));
        JsonObject answer = bridge.next().frame();
        assertEquals("players.list.result", answer.get("type").getAsString());
        assertEquals("b-9", answer.get("re").getAsString());
    }

    @Test
    void badFramesFromTheBridgeGetErrorFramesAndTheLinkStaysUp() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = connected(bridge);
        WebSocket connection = bridge.latest();
        connection.send("{not json");
        assertEquals("MALFORMED_FRAME", errorCode(bridge.next().frame(), null));
        connection.send(TestBridge.frame("b-2", "chat.shout", null, new JsonObject()));
        assertEquals("UNKNOWN_TYPE", errorCode(bridge.next().frame(), "b-2"));
        // players.list is the bridge's own request, so its result cannot come from the bridge.
        connection.send(TestBridge.frame("b-3", "players.list.result", "p-nothing", players()));
        assertEquals("UNKNOWN_TYPE", errorCode(bridge.next().frame(), "b-3"));
        connection.send(TestBridge.frame("b-4", "chat.result", "p-nothing", verdict()));
        assertEquals("UNEXPECTED_ANSWER", errorCode(bridge.next().frame(), "b-4"));
        connection.send(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertEquals("MALFORMED_FRAME", errorCode(bridge.next().frame(), null));
        assertTrue(client.isUp());
    }

    @Test
    void errorFramesAreNeverAnswered() throws Exception {
        TestBridge bridge = bridge();
        connected(bridge);
        WebSocket connection = bridge.latest();
        JsonObject bogus = new JsonObject();
        bogus.addProperty("code", "NO_SUCH_CODE");
        bogus.addProperty("message", "");
        connection.send(TestBridge.frame("b-1", "error", "p-1", bogus));
        JsonObject valid = new JsonObject();
        valid.addProperty("code", "INTERNAL");
        valid.addProperty("message", "about nothing in flight");
        connection.send(TestBridge.frame("b-2", "error", "p-nothing", valid));
        // A marker the plugin does answer: whatever arrives first must be its answer.
        connection.send(TestBridge.frame("b-3", "chat.shout", null, new JsonObject()));
        JsonObject first = bridge.next().frame();
        assertEquals("b-3", first.get("re").getAsString());
        assertNull(bridge.poll(100));
    }

    @Test
    void duplicateRequestIdInFlightIsRefused() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        CompletableFuture<JsonObject> never = new CompletableFuture<>();
        client.onRequest("players.list", data -> never);
        client.start();
        this.listener.await("up:");
        bridge.latest().send(TestBridge.frame("b-5", "players.list", null, new JsonObject()));
        bridge.latest().send(TestBridge.frame("b-5", "players.list", null, new JsonObject()));
        assertEquals("DUPLICATE_ID", errorCode(bridge.next().frame(), "b-5"));
        never.complete(players());
        assertEquals("players.list.result", bridge.next().frame().get("type").getAsString());
    }

    @Test
    void handlerFailureBecomesAnErrorFrame() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = client(bridge, TOKEN, Duration.ofSeconds(10));
        client.onRequest("players.list", data -> {
            throw new IllegalStateException("boom");
        });
        client.onRequest("output.chat", data -> CompletableFuture.failedFuture(
                new dev.mineclaw.core.platform.PlayerGoneException(UUID.randomUUID())));
        client.start();
        this.listener.await("up:");
        bridge.latest().send(TestBridge.frame("b-6", "players.list", null, new JsonObject()));
        assertEquals("INTERNAL", errorCode(bridge.next().frame(), "b-6"));
        JsonObject text = new JsonObject();
        text.addProperty("template", "hi");
        JsonObject output = new JsonObject();
        output.addProperty("target", "player");
        output.addProperty("player", "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b");
        output.add("text", text);
        bridge.latest().send(TestBridge.frame("b-7", "output.chat", null, output));
        assertEquals("PLAYER_OFFLINE", errorCode(bridge.next().frame(), "b-7"));
        bridge.latest().send(TestBridge.frame("b-8", "command.dispatch", null, dispatch()));
        assertEquals("UNAVAILABLE", errorCode(bridge.next().frame(), "b-8"));
    }

    @Test
    void oversizedFrameClosesWith1009AndTheClientReconnects() throws Exception {
        TestBridge bridge = bridge();
        LinkSettings settings = LinkSettings.defaults(bridge.url())
                .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .withMaxFrameBytes(1024);
        LinkClient client = new LinkClient(settings,
                new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of()), () -> TOKEN,
                this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        client.start();
        this.listener.await("up:");
        bridge.latest().send("{\"pad\":\"" + "x".repeat(4000) + "\"}");
        assertTrue(this.listener.await("down:").contains("1024"));
        this.listener.await("up:");
    }

    @Test
    void invalidAnswerFailsItsRequestAtOnceAndIsReported() throws Exception {
        TestBridge bridge = bridge();
        bridge.onFrame((connection, frame) -> {
            if (frame.get("type").getAsString().equals("chat")) {
                JsonObject bad = verdict();
                bad.addProperty("decision", "maybe");
                connection.send(TestBridge.frame("b-bad", "chat.result", frame.get("id").getAsString(), bad));
            }
        });
        // A timeout far beyond the bounded wait, so only the invalid answer can end the request.
        LinkClient client = client(bridge, TOKEN, Duration.ofMinutes(5));
        client.start();
        this.listener.await("up:");
        LinkException failed = failure(client.request("chat", chatData("@ai hi")));
        assertEquals(ErrorCode.INVALID_DATA, failed.code());
        bridge.next();
        assertEquals("INVALID_DATA", errorCode(bridge.next().frame(), "b-bad"));
    }

    @Test
    void framesOverTheCapAreNeverSent() throws Exception {
        TestBridge bridge = bridge();
        LinkSettings settings = LinkSettings.defaults(bridge.url()).withMaxFrameBytes(1024);
        LinkClient client = new LinkClient(settings,
                new Handshake.Identity(INSTANCE, "0.1.0", "1.21.8", "testkit", List.of()), () -> TOKEN,
                this.listener, Logger.getLogger("test"));
        this.cleanup.add(0, client::close);
        client.onRequest("players.list", data -> {
            JsonArray many = new JsonArray();
            for (int i = 0; i < 100; i++) {
                JsonObject player = new JsonObject();
                player.addProperty("uuid", "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b");
                player.addProperty("name", "Player" + i);
                many.add(player);
            }
            JsonObject answer = new JsonObject();
            answer.add("players", many);
            return CompletableFuture.completedFuture(answer);
        });
        client.start();
        this.listener.await("up:");
        // Multi-byte text: under the cap in characters, over it in bytes.
        LinkException tooBig = failure(client.request("chat", chatData("\u00e9".repeat(600))));
        assertEquals(ErrorCode.INVALID_DATA, tooBig.code());
        bridge.latest().send(TestBridge.frame("b-big", "players.list", null, new JsonObject()));
        assertEquals("UNAVAILABLE", errorCode(bridge.next().frame(), "b-big"));
        assertTrue(client.isUp());
    }

    @Test
    void closeStopsReconnectingAndFailsRequests() throws Exception {
        TestBridge bridge = bridge();
        LinkClient client = connected(bridge);
        client.close();
        assertEquals(1000, bridge.nextClose());
        assertEquals(ErrorCode.DISCONNECTED, failure(client.request("chat", chatData("@ai hi"))).code());
        assertNull(bridge.poll(200));
        assertEquals(1, bridge.connections());
    }

    private static JsonObject players() {
        JsonObject data = new JsonObject();
        data.add("players", new JsonArray());
        return data;
    }

    private static JsonObject dispatch() {
        JsonObject data = new JsonObject();
        data.addProperty("executor", "console");
        data.addProperty("command", "say hi");
        return data;
    }

    private static String errorCode(JsonObject frame, String re) {
        assertEquals("error", frame.get("type").getAsString(), frame.toString());
        if (re == null) {
            assertTrue(!frame.has("re"), frame.toString());
        } else {
            assertEquals(re, frame.get("re").getAsString(), frame.toString());
        }
        return frame.getAsJsonObject("data").get("code").getAsString();
    }
}
