package dev.mineclaw.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.chat.KeptAsks;
import dev.mineclaw.core.link.LinkException;
import dev.mineclaw.core.platform.Permissions;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakeLink;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import dev.mineclaw.core.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CommandForwarderTest {
    private final FakePlatform platform = new FakePlatform();
    private final FakeLink link = new FakeLink();
    private final TextRenderer renderer = new TextRenderer();
    private final CommandForwarder forwarder = new CommandForwarder(this.platform, this.link,
            Messages.defaults(this.renderer), this.renderer, Duration.ofSeconds(5));

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private void run(CommandSender sender, String... args) throws Exception {
        this.forwarder.handle(sender, List.of(args)).get(10, TimeUnit.SECONDS);
    }

    private static CompletableFuture<JsonObject> lines(String... templates) {
        JsonArray lines = new JsonArray();
        for (String template : templates) {
            JsonObject text = new JsonObject();
            text.addProperty("template", template);
            lines.add(text);
        }
        JsonObject answer = new JsonObject();
        answer.add("lines", lines);
        return CompletableFuture.completedFuture(answer);
    }

    @Test
    void playerCommandCarriesFactsAndRepliesToThePlayer() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        this.link.answer(request -> lines("<green>all good", "line two"));
        run(CommandSender.player(steve), "status");
        JsonObject data = this.link.sent().get(0).data();
        JsonObject sender = data.getAsJsonObject("sender");
        assertEquals("player", sender.get("kind").getAsString());
        assertEquals("Steve", sender.getAsJsonObject("player").get("name").getAsString());
        assertEquals(List.of(Permissions.CHAT), strings(sender.getAsJsonArray("granted")));
        assertEquals(List.of("status"), strings(data.getAsJsonArray("args")));
        assertEquals(List.of(new FakePlatform.Shown("Steve", "all good"), new FakePlatform.Shown("Steve", "line two")),
                this.platform.shown());
    }

    @Test
    void anAiQuestionAskedBeforeTheNewLinksStateWaitsForItAndGoesWithAnId() throws Exception {
        // As a wake does (KeptAsksTest): without an id, the question would not be kept.
        KeptAsks asks = new KeptAsks(this.link, this.platform, Messages.defaults(this.renderer), this.renderer,
                Duration.ofSeconds(60), Duration.ofSeconds(5), System::nanoTime);
        this.forwarder.keep(asks);
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT, Permissions.PRIVATE);
        asks.linkUp(); // linked; its link.state not here yet
        this.link.answer(request -> lines());
        CompletableFuture<Void> done = this.forwarder.handle(CommandSender.player(steve), List.of("ai", "where?"));
        assertTrue(this.link.sent().isEmpty(), "nothing sent before the bridge said whether it takes ids");
        asks.linkState(true);
        done.get(10, TimeUnit.SECONDS);
        assertNotNull(this.link.sent().get(0).data().get("ask"));
        assertEquals(1, asks.size());
    }

    @Test
    void knownNodeIsRecheckedBeforeForwarding() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        run(CommandSender.player(steve), "reload");
        assertTrue(this.link.sent().isEmpty(), "a refused subcommand must not reach the bridge");
        assertEquals(1, this.platform.shown().size());
        assertTrue(this.platform.shown().get(0).text().contains("mineclaw.command.reload"));
    }

    @Test
    void stopIsLeftToTheBridgeSinceTheAskerMayStopTheirOwnTurn() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        this.link.answer(request -> lines("Stopped the current answer."));
        run(CommandSender.player(steve), "stop");
        assertEquals(List.of("stop"), strings(this.link.sent().get(0).data().getAsJsonArray("args")));
    }

    @Test
    void ownLaneCommandsNeedThePrivateNodeAndThePublicClearStillNeedsItsOwn() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        PlayerRef alex = this.platform.join("Alex", Permissions.PRIVATE);
        run(CommandSender.player(steve), "ai", "where is my house?");
        run(CommandSender.player(steve), "clear", "private");
        run(CommandSender.player(alex), "clear");
        assertTrue(this.link.sent().isEmpty(), "refused subcommands must not reach the bridge");
        List<String> shown = this.platform.shown().stream().map(FakePlatform.Shown::text).toList();
        assertTrue(shown.get(0).contains(Permissions.PRIVATE), shown.get(0));
        assertTrue(shown.get(1).contains(Permissions.PRIVATE), shown.get(1));
        assertTrue(shown.get(2).contains("mineclaw.command.clear"), shown.get(2));

        this.link.answer(request -> lines("ok"));
        run(CommandSender.player(alex), "clear", "private");
        run(CommandSender.player(alex), "ai", "where is my house?");
        assertEquals(List.of("clear", "private"), strings(this.link.sent().get(0).data().getAsJsonArray("args")));
        assertEquals(List.of("ai", "where is my house?"),
                strings(this.link.sent().get(1).data().getAsJsonArray("args")));
    }

    @Test
    void everyPlayerMayOptOutOfListenModeWithoutTheNode() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        this.link.answer(request -> lines("opted out"));
        run(CommandSender.player(steve), "listen", "ignore-me");
        run(CommandSender.player(steve), "LISTEN", "Include-Me");
        assertEquals(2, this.link.sent().size(), "ignore-me and include-me reach the bridge");
        run(CommandSender.player(steve), "listen", "on");
        assertEquals(2, this.link.sent().size(), "listen on still needs mineclaw.command.listen");
        assertTrue(this.platform.shown().get(2).text().contains("mineclaw.command.listen"));
        assertEquals(java.util.Optional.empty(), Permissions.nodeFor(List.of("help")));
    }

    @Test
    void theLocalesLinesAreShown() throws Exception {
        CommandForwarder chinese = new CommandForwarder(this.platform, this.link,
                new Messages(Messages.SIMPLIFIED_CHINESE, java.util.Map.of(), this.renderer), this.renderer,
                Duration.ofSeconds(5));
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        chinese.handle(CommandSender.player(steve), List.of("reload")).get(10, TimeUnit.SECONDS);
        chinese.handle(CommandSender.player(steve), List.of("x".repeat(257))).get(10, TimeUnit.SECONDS);
        assertEquals("你没有权限执行此操作（mineclaw.command.reload）。", this.platform.shown().get(0).text());
        assertEquals("命令太长：每个参数须为 1-256 个字符。", this.platform.shown().get(1).text());
    }

    @Test
    void consoleHoldsEveryNodeAndGetsRepliesOnTheConsole() throws Exception {
        this.link.answer(request -> lines("reloaded"));
        // Every node, the ones the bridge named in link.state too (the console holds them all).
        Permissions.reportNodes(List.of("mineclaw.command.history"));
        try {
            run(CommandSender.CONSOLE, "reload");
        } finally {
            Permissions.reportNodes(List.of());
        }
        JsonObject sender = this.link.sent().get(0).data().getAsJsonObject("sender");
        assertEquals("console", sender.get("kind").getAsString());
        assertFalse(sender.has("player"));
        List<String> expected = new java.util.ArrayList<>(Permissions.REPORTED);
        expected.add("mineclaw.command.history");
        assertEquals(expected, strings(sender.getAsJsonArray("granted")));
        assertEquals(List.of(new FakePlatform.Shown("console", "reloaded")), this.platform.shown());
    }

    @Test
    void linkDownTimeoutAndRemoteErrorEachGetTheirOwnLine() throws Exception {
        List<String> seen = new ArrayList<>();
        this.link.setUp(false);
        run(CommandSender.CONSOLE, "status");
        this.link.setUp(true);
        this.link.answer(request -> CompletableFuture.failedFuture(LinkException.timeout("slow")));
        run(CommandSender.CONSOLE, "status");
        this.link.answer(request -> CompletableFuture.failedFuture(
                new LinkException(ErrorCode.UNAVAILABLE, "busy", true)));
        run(CommandSender.CONSOLE, "status");
        this.platform.shown().forEach(line -> seen.add(line.text()));
        assertEquals(3, seen.size());
        assertTrue(seen.get(0).contains("offline"), seen.get(0));
        assertTrue(seen.get(1).contains("in time"), seen.get(1));
        assertTrue(seen.get(2).contains("UNAVAILABLE"), seen.get(2));
    }

    @Test
    void argumentsTheProtocolCannotCarryAreRefusedLocally() throws Exception {
        String[] tooMany = Collections.nCopies(17, "a").toArray(new String[0]);
        run(CommandSender.CONSOLE, tooMany);
        run(CommandSender.CONSOLE, "x".repeat(257));
        assertTrue(this.link.sent().isEmpty());
        assertEquals(2, this.platform.shown().size());
    }

    @Test
    void playerWhoLeftCompletesQuietly() throws Exception {
        PlayerRef steve = this.platform.join("Steve", Permissions.CHAT);
        this.platform.leave(steve);
        run(CommandSender.player(steve), "status");
        assertTrue(this.link.sent().isEmpty());
        assertTrue(this.platform.shown().isEmpty());
    }

    private static List<String> strings(JsonArray array) {
        List<String> out = new ArrayList<>();
        for (JsonElement element : array) {
            out.add(element.getAsString());
        }
        return out;
    }
}
