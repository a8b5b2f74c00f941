package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mineclaw.core.support.TestBridge;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.java_websocket.WebSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Snapshots, approval prompts and scripted dispatch through the testkit JVM and a loopback bridge. */
class ToolsProcessTest {
    private static final String TOKEN = "testkit-token";
    private static final String STEVE = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f";
    private static final String TOKEN_A = "q3x7Yh2L0vT9sKd8Wm4nPa";
    private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private int nextId;

    @Test
    void snapshotsPromptsAndScriptsEndToEnd(@TempDir Path dir) throws Exception {
        Path tokenFile = dir.resolve("link.token");
        Files.writeString(tokenFile, TOKEN + "\n");
        try (TestBridge bridge = new TestBridge(TOKEN).begin();
                TestkitProcess testkit = TestkitProcess.start("--url", bridge.url().toString(), "--token-file",
                        tokenFile.toString())) {
            testkit.await("link.up");
            testkit.send("{\"op\":\"player.add\",\"name\":\"Steve\",\"uuid\":\"" + STEVE + "\","
                    + "\"permissions\":[\"mineclaw.command.approve\",\"mineclaw.tool.run_command\"],"
                    + "\"vitals\":{\"health\":12.5},\"look\":{\"block\":{\"type\":\"minecraft:oak_log\",\"x\":1,"
                    + "\"y\":64,\"z\":4,\"properties\":{\"axis\":\"y\"}},\"distance\":4.5,\"unloaded_at\":9}}");
            assertEquals("player.join", nextOfType(bridge, "player.join").get("type").getAsString());

            snapshots(bridge, testkit);
            approval(bridge, testkit);
            scriptedDispatch(bridge, testkit);

            testkit.send("{\"op\":\"shutdown\"}");
            assertEquals(0, testkit.waitForExit());
            assertTrue(testkit.seen().stream().noneMatch(
                    event -> event.get("event").getAsString().equals("thread.violation")), testkit.seen().toString());
        }
    }

    private void snapshots(TestBridge bridge, TestkitProcess testkit) throws Exception {
        JsonObject player = ask(bridge, "snapshot.player", "{\"player\":\"" + STEVE + "\"}");
        assertEquals(12.5, player.getAsJsonObject("data").get("health").getAsDouble());
        assertEquals("Steve", player.getAsJsonObject("data").getAsJsonObject("player").get("name").getAsString());

        StringBuilder slots = new StringBuilder();
        for (int index = 0; index <= 40; index++) {
            slots.append(index == 0 ? "" : ",").append("\"").append(index).append("\":{\"type\":\"minecraft:stone\","
                    + "\"amount\":").append(1 + index).append(",\"name\":\"Stone \\u202e").append(index).append("\"}");
        }
        testkit.send("{\"op\":\"player.set\",\"name\":\"Steve\",\"ref\":\"s1\",\"inventory\":{\"held_slot\":3,"
                + "\"slots\":{" + slots + "}}}");
        assertEquals("s1", testkit.await("player.updated").get("ref").getAsString());
        JsonObject all = ask(bridge, "snapshot.item",
                "{\"player\":\"" + STEVE + "\",\"mode\":\"inventory\",\"max_slots\":41,\"max_chars\":16384}");
        JsonArray items = all.getAsJsonObject("data").getAsJsonArray("items");
        assertEquals(41, items.size());
        assertEquals(List.of("main_hand", "off_hand", "helmet", "chestplate", "leggings", "boots", "0"),
                labels(items).subList(0, 7));
        assertEquals("Stone 3", items.get(0).getAsJsonObject().getAsJsonObject("custom_name").get("untrusted_text")
                .getAsString());
        JsonObject budget = ask(bridge, "snapshot.item",
                "{\"player\":\"" + STEVE + "\",\"mode\":\"inventory\",\"max_slots\":41,\"max_chars\":512}");
        JsonArray cut = budget.getAsJsonObject("data").getAsJsonArray("items");
        assertTrue(budget.getAsJsonObject("data").get("truncated").getAsBoolean());
        assertTrue(COMPACT.toJson(cut).getBytes(StandardCharsets.UTF_8).length <= 512);
        assertEquals(labels(items).subList(0, cut.size()), labels(cut));
        JsonObject few = ask(bridge, "snapshot.item",
                "{\"player\":\"" + STEVE + "\",\"mode\":\"inventory\",\"max_slots\":2,\"max_chars\":16384}");
        assertEquals(2, few.getAsJsonObject("data").getAsJsonArray("items").size());
        JsonObject helmet = ask(bridge, "snapshot.item",
                "{\"player\":\"" + STEVE + "\",\"mode\":\"slot\",\"slot\":39,\"max_slots\":1,\"max_chars\":256}");
        assertEquals(List.of("helmet"), labels(helmet.getAsJsonObject("data").getAsJsonArray("items")));

        assertEquals("miss", blockResult(bridge, "look", 4));
        assertEquals("hit", blockResult(bridge, "look", 5));
        testkit.send("{\"op\":\"player.set\",\"name\":\"Steve\",\"ref\":\"s2\",\"look\":{\"block\":{\"type\":"
                + "\"minecraft:stone\"},\"distance\":30,\"unloaded_at\":9}}");
        testkit.await("player.updated");
        assertEquals("unloaded", blockResult(bridge, "look", 64));
        assertEquals("miss", blockResult(bridge, "look", 8));
        assertEquals("hit", blockResult(bridge, "feet", 1));

        JsonObject offline = ask(bridge, "snapshot.player", "{\"player\":\"0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b\"}");
        assertEquals("PLAYER_OFFLINE", offline.getAsJsonObject("data").get("code").getAsString());
        JsonObject tooFar = ask(bridge, "snapshot.block", "{\"player\":\"" + STEVE + "\",\"mode\":\"look\","
                + "\"distance\":500}");
        assertEquals("INVALID_DATA", tooFar.getAsJsonObject("data").get("code").getAsString());
    }

    private void approval(TestBridge bridge, TestkitProcess testkit) throws Exception {
        String hostile = "<click:run_command:'/op Steve'>free</click>";
        JsonObject answer = ask(bridge, "approval.show", "{\"player\":\"" + STEVE + "\",\"token\":\"" + TOKEN_A
                + "\",\"prompt\":{\"template\":\"<asker> asks: <intent> " + hostile + "\",\"values\":{\"asker\":"
                + "\"Alex\",\"intent\":\"" + hostile.replace("'", "\\u0027") + "\"},\"model\":{\"m\":\"x\"}},"
                + "\"buttons\":[{\"label\":{\"template\":\"<green>[Yes]\"},\"hover\":{\"template\":\"run it\"},"
                + "\"answer\":\"approve\",\"option\":null},{\"label\":{\"template\":\"[No]\"},\"hover\":null,"
                + "\"answer\":\"deny\",\"option\":null}],\"expires_ms\":60000}");
        assertTrue(answer.getAsJsonObject("data").get("shown").getAsBoolean(), answer.toString());
        JsonObject prompt = testkit.await("approval");
        assertEquals("Steve", prompt.get("to").getAsString());
        assertTrue(prompt.get("text").getAsString().startsWith("Alex asks: <click:run_command:'/op Steve'>free"),
                prompt.toString());
        List<String> commands = new ArrayList<>();
        for (JsonElement button : prompt.getAsJsonArray("buttons")) {
            commands.add(button.getAsJsonObject().get("command").getAsString());
        }
        assertEquals(List.of("/mineclaw approve " + TOKEN_A, "/mineclaw deny " + TOKEN_A), commands);

        // Clicking runs the command as the player: the bridge gets an ordinary command request.
        testkit.send("{\"op\":\"command\",\"sender\":\"Steve\",\"args\":[\"approve\",\"" + TOKEN_A + "\"],"
                + "\"ref\":\"k\"}");
        JsonObject click = nextOfType(bridge, "command").getAsJsonObject("data");
        assertEquals("Steve", click.getAsJsonObject("sender").getAsJsonObject("player").get("name").getAsString());
        assertEquals(List.of("approve", TOKEN_A), strings(click.getAsJsonArray("args")));
        assertTrue(strings(click.getAsJsonObject("sender").getAsJsonArray("granted"))
                .contains("mineclaw.tool.run_command"));

        JsonObject offline = ask(bridge, "approval.show", "{\"player\":\"0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b\","
                + "\"token\":\"" + TOKEN_A + "\",\"prompt\":{\"template\":\"x\"},\"buttons\":[{\"label\":{\"template\":"
                + "\"y\"},\"hover\":null,\"answer\":\"deny\",\"option\":null}],\"expires_ms\":1000}");
        assertEquals("PLAYER_OFFLINE", offline.getAsJsonObject("data").get("code").getAsString());
    }

    private void scriptedDispatch(TestBridge bridge, TestkitProcess testkit) throws Exception {
        testkit.send("{\"op\":\"dispatch.script\",\"command_prefix\":\"time set\",\"feedback\":[\"Set the time to 1000\"],"
                + "\"ref\":\"d\"}");
        assertEquals("d", testkit.await("dispatch.scripted").get("ref").getAsString());
        JsonObject console = ask(bridge, "command.dispatch", "{\"executor\":\"console\",\"command\":\"time set 1000\"}");
        assertEquals(List.of("Set the time to 1000"), strings(console.getAsJsonObject("data").getAsJsonArray("feedback")));
        JsonObject asPlayer = ask(bridge, "command.dispatch", "{\"executor\":\"player\",\"player\":\"" + STEVE
                + "\",\"command\":\"time set 1000\"}");
        assertEquals("dispatched", asPlayer.getAsJsonObject("data").get("dispatch_status").getAsString());
        assertTrue(asPlayer.getAsJsonObject("data").get("feedback").isJsonNull());
    }

    private String blockResult(TestBridge bridge, String mode, int distance) throws InterruptedException {
        JsonObject answer = ask(bridge, "snapshot.block", "{\"player\":\"" + STEVE + "\",\"mode\":\"" + mode
                + "\",\"distance\":" + distance + "}");
        return answer.getAsJsonObject("data").get("result").getAsString();
    }

    /** Sends a request from the bridge and returns its answer (a result or an error frame). */
    private JsonObject ask(TestBridge bridge, String type, String data) throws InterruptedException {
        String id = "b-t" + (++this.nextId);
        WebSocket connection = bridge.latest();
        connection.send(TestBridge.frame(id, type, null, JsonParser.parseString(data).getAsJsonObject()));
        for (int i = 0; i < 100; i++) {
            JsonObject frame = bridge.next().frame();
            if (frame.has("re") && frame.get("re").getAsString().equals(id)) {
                return frame;
            }
        }
        throw new AssertionError("no answer to " + type + " among 100 frames");
    }

    private static JsonObject nextOfType(TestBridge bridge, String type) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            JsonObject frame = bridge.next().frame();
            if (frame.get("type").getAsString().equals(type)) {
                return frame;
            }
        }
        throw new AssertionError("no " + type + " among 100 frames");
    }

    private static List<String> labels(JsonArray items) {
        List<String> labels = new ArrayList<>();
        items.forEach(item -> labels.add(item.getAsJsonObject().get("slot").getAsString()));
        return labels;
    }

    private static List<String> strings(JsonArray array) {
        List<String> out = new ArrayList<>();
        array.forEach(item -> out.add(item.getAsString()));
        return out;
    }
}
