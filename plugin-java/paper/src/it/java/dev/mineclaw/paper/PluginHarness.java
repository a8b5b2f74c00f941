package dev.mineclaw.paper;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.LogLines;
import dev.mineclaw.core.support.TestBridge;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.mockbukkit.mockbukkit.MockBukkit;
import org.mockbukkit.mockbukkit.ServerMock;

/**
 * The real plugin jar loaded into MockBukkit, linked to a real WebSocket bridge on loopback
 * ({@link TestBridge}, the core's test bridge, which checks the handshake as the bridge does).
 * The plugin's folder is MockBukkit's temporary one, written before the plugin is enabled.
 */
final class PluginHarness implements AutoCloseable {
    static final String TOKEN = "mockbukkit-harness-token-0123456789";
    // A bound on waits for events, not a timing check: generous because the machines that run
    // the suites are shared and often loaded (10 s was seen to run out while linking).
    private static final long WAIT_SECONDS = 60;
    private static final Logger ROOT_LOGGER = Logger.getLogger("");

    final ServerMock server;
    final TestBridge bridge;
    final MineclawPlugin plugin;
    private final LogLines log;

    private PluginHarness(ServerMock server, TestBridge bridge, String linkYaml) throws IOException {
        this.server = server;
        this.bridge = bridge;
        Path folder = dataFolder(server);
        Files.createDirectories(folder);
        Files.writeString(folder.resolve("plugin-link.yml"), linkYaml, StandardCharsets.UTF_8);
        // Listen before the plugin is loaded: enabling it starts the link on its own thread,
        // which could log "linked" before a handler on the plugin's logger was attached (the
        // line was then missed and the wait ran out on an idle machine). The plugin's records
        // reach the root logger through its parents.
        this.log = LogLines.on(ROOT_LOGGER);
        try {
            this.plugin = MockBukkit.load(MineclawPlugin.class);
        } catch (RuntimeException | Error e) {
            ROOT_LOGGER.removeHandler(this.log);
            throw e;
        }
    }

    /** A server with the plugin linked to a fresh bridge (waits until the link is up). */
    static PluginHarness linked(String extraYaml) throws Exception {
        TestBridge bridge = new TestBridge(TOKEN).begin();
        ServerMock server = MockBukkit.mock();
        // A long verdict wait unless the test sets its own, so a verdict is never late by accident.
        String verdict = extraYaml.contains("verdict-timeout-ms") ? "" : "verdict-timeout-ms: 2000\n";
        PluginHarness harness;
        try {
            harness = new PluginHarness(server, bridge, "bridge-url: " + bridge.url() + "\n"
                    + "token: " + TOKEN + "\n" + verdict + extraYaml);
        } catch (Exception | Error e) {
            // Unmock here, or every later test of the run fails with "Already mocking".
            MockBukkit.unmock();
            bridge.close();
            throw e;
        }
        try {
            bridge.nextHello();
            harness.awaitLog("linked to the bridge");
        } catch (Exception | Error e) {
            harness.close();
            throw e;
        }
        return harness;
    }

    /** A server with the plugin given {@code linkYaml} as its settings file, and no bridge. */
    static PluginHarness unlinked(String linkYaml) throws Exception {
        return new PluginHarness(MockBukkit.mock(), null, linkYaml);
    }

    static Path dataFolder(ServerMock server) throws IOException {
        // MockBukkit gives each plugin <its temporary folder>/<name>-<version>.
        return server.getPluginManager().getParentTemporaryDirectory().toPath().resolve("Mineclaw-0.1.0");
    }

    /** Waits for a log line of the plugin containing {@code part} (lines before it are dropped). */
    String awaitLog(String part) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (System.nanoTime() < end) {
            LogRecord line = this.log.poll(100);
            if (line != null && line.getMessage().contains(part)) {
                return line.getMessage();
            }
            // The link's callbacks log from its own thread; ticks let scheduled work run.
            this.server.getScheduler().performOneTick();
        }
        throw new AssertionError("no log line containing '" + part + "' within " + WAIT_SECONDS + " s");
    }

    /** The next frame the plugin sent of {@code type}, skipping others (joins, quits, results). */
    TestBridge.Received next(String type) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (System.nanoTime() < end) {
            TestBridge.Received received = this.bridge.poll(100);
            if (received != null && type.equals(received.frame().get("type").getAsString())) {
                return received;
            }
            this.server.getScheduler().performOneTick();
        }
        throw new AssertionError("no '" + type + "' frame within " + WAIT_SECONDS + " s");
    }

    /** A chat verdict's data. */
    static JsonObject verdict(String decision, boolean aiPrefix) {
        JsonObject data = new JsonObject();
        data.addProperty("decision", decision);
        data.addProperty("ai_prefix", aiPrefix);
        data.add("notice", JsonNull.INSTANCE);
        return data;
    }

    /** Answers every chat request with {@code data}. */
    void answerChat(JsonObject data) {
        this.bridge.onFrame((connection, frame) -> {
            if ("chat".equals(frame.get("type").getAsString())) {
                connection.send(TestBridge.frame("b-" + frame.get("id").getAsString(), "chat.result",
                        frame.get("id").getAsString(), data));
            }
        });
    }

    @Override
    public void close() {
        ROOT_LOGGER.removeHandler(this.log);
        try {
            MockBukkit.unmock();
        } finally {
            if (this.bridge != null) {
                this.bridge.close();
            }
        }
    }
}
