package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.java_websocket.WebSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable testkit in its own JVM against a loopback bridge, through the CONTROL.md interface. */
class TestkitProcessTest {
    private static final String TOKEN = "testkit-token";
    private static final String STEVE = "{\"op\":\"player.add\",\"name\":\"Steve\","
            + "\"uuid\":\"3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f\",\"permissions\":[\"mineclaw.command.chat\"]}";

    private static void answer(WebSocket connection, JsonObject frame) {
        String type = frame.get("type").getAsString();
        String id = frame.get("id").getAsString();
        if (type.equals("chat")) {
            String text = frame.getAsJsonObject("data").get("text").getAsString();
            JsonObject verdict = new JsonObject();
            verdict.addProperty("decision", text.startsWith("@ai") ? "accept" : "refuse");
            verdict.addProperty("ai_prefix", true);
            if (text.startsWith("@ai")) {
                verdict.add("notice", JsonNull.INSTANCE);
            } else {
                JsonObject notice = new JsonObject();
                notice.addProperty("template", "<red>slow down</red>");
                verdict.add("notice", notice);
            }
            connection.send(TestBridge.frame("b-" + id, "chat.result", id, verdict));
        } else if (type.equals("command")) {
            JsonObject line = new JsonObject();
            line.addProperty("template", "status: <state>");
            JsonObject values = new JsonObject();
            values.addProperty("state", "<b>fine</b>");
            line.add("values", values);
            JsonArray lines = new JsonArray();
            lines.add(line);
            JsonObject data = new JsonObject();
            data.add("lines", lines);
            connection.send(TestBridge.frame("b-" + id, "command.result", id, data));
        }
    }

    @Test
    void drivesTheWholeFlowOverStdinAndStdout(@TempDir Path dir) throws Exception {
        Path tokenFile = dir.resolve("link.token");
        Files.writeString(tokenFile, TOKEN + "\n");
        try (TestBridge bridge = new TestBridge(TOKEN).begin()) {
            bridge.forwardAll();
            bridge.onFrame(TestkitProcessTest::answer);
            try (TestkitProcess testkit = TestkitProcess.start("--url", bridge.url().toString(), "--token-file",
                    tokenFile.toString(), "--verdict-timeout-ms", "5000")) {
                testkit.await("ready");
                assertTrue(testkit.await("link.up").get("session_id").getAsString().startsWith("s"));
                assertEquals("all", testkit.await("link.state").get("forward").getAsString());

                // A bench needs no player online: it measures the link.
                testkit.send("{\"op\":\"bench.chat\",\"rate\":20,\"seconds\":0.5,\"player\":\"Alex\",\"ref\":\"b0\"}");
                JsonObject offlineBench = testkit.await("bench.result");
                assertEquals("b0", offlineBench.get("ref").getAsString());
                assertAccounted(10, offlineBench);
                assertEquals("hello", bridge.next().frame().getAsJsonObject("data").get("text").getAsString());

                testkit.send(STEVE);
                JsonObject join = bridge.next().frame();
                while (join.get("type").getAsString().equals("chat")) {
                    join = bridge.next().frame();
                }
                assertEquals("player.join", join.get("type").getAsString());

                testkit.send("{\"op\":\"chat\",\"player\":\"Steve\",\"text\":\"@ai hi\",\"ref\":\"c1\"}");
                JsonObject woken = testkit.await(event -> event.get("event").getAsString().equals("chat.outcome"),
                        "chat.outcome c1");
                assertEquals("c1", woken.get("ref").getAsString());
                assertEquals("public", woken.get("outcome").getAsString());
                assertEquals("[AI] <Steve> @ai hi", woken.get("shown").getAsString());

                testkit.send("{\"op\":\"chat\",\"player\":\"Steve\",\"text\":\"spam\",\"ref\":\"c2\"}");
                JsonObject notice = testkit.await("message");
                assertEquals("Steve", notice.get("to").getAsString());
                assertEquals("slow down", notice.get("text").getAsString());
                JsonObject refused = testkit.await("chat.outcome");
                assertEquals("cancelled", refused.get("outcome").getAsString());
                assertTrue(refused.get("shown").isJsonNull());

                testkit.send("{\"op\":\"command\",\"sender\":\"Steve\",\"args\":[\"status\"],\"ref\":\"m1\"}");
                assertEquals("status: <b>fine</b>", testkit.await("message").get("text").getAsString());
                assertEquals("m1", testkit.await("command.done").get("ref").getAsString());

                bridgeRequests(bridge, testkit);

                testkit.send("this is not json");
                assertTrue(testkit.await("error").get("message").getAsString().contains("unparseable"));
                testkit.send("{\"op\":\"chat\",\"player\":\"Nobody\",\"text\":\"x\",\"ref\":\"c9\"}");
                JsonObject unknown = testkit.await("error");
                assertEquals("c9", unknown.get("ref").getAsString());
                assertTrue(unknown.get("message").getAsString().contains("Nobody"));

                testkit.send("{\"op\":\"bench.chat\",\"rate\":100,\"seconds\":0.5,\"player\":\"Steve\","
                        + "\"text\":\"@ai bench\",\"ref\":\"b\"}");
                JsonObject bench = testkit.await("bench.result");
                assertAccounted(50, bench);
                long p50 = bench.get("p50_us").getAsLong();
                long p99 = bench.get("p99_us").getAsLong();
                assertTrue(0 < p50 && p50 <= p99 && p99 <= bench.get("max_us").getAsLong(), bench.toString());

                testkit.send("{\"op\":\"player.remove\",\"name\":\"Steve\"}");
                testkit.send("{\"op\":\"shutdown\"}");
                assertEquals(0, testkit.waitForExit());
                assertTrue(testkit.seen().stream().noneMatch(
                        event -> event.get("event").getAsString().equals("thread.violation")), testkit.seen().toString());
            }
        }
    }

    /**
     * Every request of a bench run is either answered or counted as failed, most are answered, and
     * a failure says why. A single request may miss the bench's 10 s timeout on a starved machine,
     * and that is a measurement, not a broken bench. (CI once saw 49 of 50: the test bridge's
     * library had stranded the last answer, which its flusher now sends; see TestBridge.)
     */
    private static void assertAccounted(int sent, JsonObject bench) {
        int count = bench.get("count").getAsInt();
        int errors = bench.get("errors").getAsInt();
        assertEquals(sent, count + errors, bench.toString());
        assertTrue(count > sent / 2, bench.toString());
        assertEquals(errors == 0, bench.get("first_error").isJsonNull(), bench.toString());
        if (errors > 0) {
            System.err.println("bench " + bench.get("ref").getAsString() + ": " + bench);
        }
    }

    /** What the bridge asks of the plugin, each answered from the right thread. */
    private static void bridgeRequests(TestBridge bridge, TestkitProcess testkit) throws Exception {
        WebSocket connection = bridge.latest();
        JsonObject text = new JsonObject();
        text.addProperty("template", "<green>hello <who>");
        JsonObject model = new JsonObject();
        model.addProperty("who", "<click:run_command:/op Steve>everyone");
        text.add("model", model);
        JsonObject output = new JsonObject();
        output.addProperty("target", "broadcast");
        output.add("text", text);
        connection.send(TestBridge.frame("b-out", "output.chat", null, output));
        JsonObject broadcast = testkit.await("message");
        assertEquals("*", broadcast.get("to").getAsString());
        assertEquals("hello <click:run_command:/op Steve>everyone", broadcast.get("text").getAsString());
        assertEquals(1, answerTo(bridge, "b-out").getAsJsonObject("data").get("delivered").getAsInt());

        JsonObject console = new JsonObject();
        console.addProperty("executor", "console");
        console.addProperty("command", "say hi");
        connection.send(TestBridge.frame("b-d1", "command.dispatch", null, console));
        JsonObject dispatched = testkit.await("dispatch");
        assertEquals("console", dispatched.get("executor").getAsString());
        assertEquals("say hi", dispatched.get("command").getAsString());
        JsonObject consoleResult = answerTo(bridge, "b-d1").getAsJsonObject("data");
        assertEquals("dispatched", consoleResult.get("dispatch_status").getAsString());
        assertEquals("Ran: say hi", consoleResult.getAsJsonArray("feedback").get(0).getAsString());

        JsonObject asPlayer = new JsonObject();
        asPlayer.addProperty("executor", "player");
        asPlayer.addProperty("player", "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");
        asPlayer.addProperty("command", "me waves");
        connection.send(TestBridge.frame("b-d2", "command.dispatch", null, asPlayer));
        assertEquals("Steve", testkit.await("dispatch").get("executor").getAsString());
        assertTrue(answerTo(bridge, "b-d2").getAsJsonObject("data").get("feedback").isJsonNull());

        connection.send(TestBridge.frame("b-list", "players.list", null, new JsonObject()));
        JsonArray players = answerTo(bridge, "b-list").getAsJsonObject("data").getAsJsonArray("players");
        assertEquals("Steve", players.get(0).getAsJsonObject().get("name").getAsString());

        JsonObject bar = new JsonObject();
        bar.addProperty("player", "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");
        bar.add("text", text);
        connection.send(TestBridge.frame("b-bar", "output.actionbar", null, bar));
        JsonObject actionbar = testkit.await("actionbar");
        assertEquals("Steve", actionbar.get("to").getAsString());

        JsonObject offline = new JsonObject();
        offline.addProperty("target", "player");
        offline.addProperty("player", "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b");
        offline.add("text", text);
        connection.send(TestBridge.frame("b-off", "output.chat", null, offline));
        JsonObject error = answerTo(bridge, "b-off");
        assertEquals("error", error.get("type").getAsString());
        assertEquals("PLAYER_OFFLINE", error.getAsJsonObject("data").get("code").getAsString());
    }

    private static JsonObject answerTo(TestBridge bridge, String re) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            JsonObject frame = bridge.next().frame();
            if (frame.has("re") && frame.get("re").getAsString().equals(re)) {
                return frame;
            }
        }
        throw new AssertionError("no answer to " + re + " among 100 frames");
    }

}
