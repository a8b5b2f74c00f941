package dev.mineclaw.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.CommandListing;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.PluginFacts;
import dev.mineclaw.core.platform.ServerCatalogue;
import dev.mineclaw.core.support.FakePlatform;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ServerKnowledgeTest {
    private final FakePlatform platform = new FakePlatform();
    private final Catalogue catalogue = new Catalogue();
    private final ServerKnowledge knowledge = new ServerKnowledge(this.platform, this.catalogue, Duration.ofSeconds(10));

    /** A command map that counts its readings and names the thread each ran on. */
    private static final class Catalogue implements ServerCatalogue {
        volatile List<CommandListing> commands = new ArrayList<>(List.of(
                command("time", "minecraft", "minecraft.command.time", "/<command> set <time>"),
                command("op", "minecraft", "minecraft.command.op", null),
                command("warp", "Warps", "warps.use", "/<command> <name>"),
                command("spawn", "Essentials", null, null),
                command("sethome", "Essentials", "essentials.sethome;essentials.home.admin", null),
                new CommandListing(new CommandFacts("heal-all", null, List.of(), null, true), null, null)));
        volatile List<PluginFacts> plugins = List.of(
                new PluginFacts("Warps", "1.0", true, "Named §cplaces\nto go"),
                new PluginFacts("Essentials", "2.21.0", false, null));
        final AtomicInteger reads = new AtomicInteger();
        final List<String> threads = new CopyOnWriteArrayList<>();

        @Override
        public List<PluginFacts> plugins() {
            this.threads.add(Thread.currentThread().getName());
            return this.plugins;
        }

        @Override
        public List<CommandListing> commands() {
            this.reads.incrementAndGet();
            this.threads.add(Thread.currentThread().getName());
            return this.commands;
        }
    }

    private static CommandListing command(String name, String plugin, String permission, String usage) {
        return new CommandListing(new CommandFacts(name, plugin, List.of(), permission, false), usage, "Does " + name);
    }

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private JsonObject commands(PlayerRef player, String plugin, int maxChars) throws Exception {
        JsonObject data = new JsonObject();
        data.add("player", player == null ? JsonNull.INSTANCE : new com.google.gson.JsonPrimitive(player.uuid().toString()));
        data.add("plugin", plugin == null ? JsonNull.INSTANCE : new com.google.gson.JsonPrimitive(plugin));
        data.addProperty("max_chars", maxChars);
        return this.knowledge.commands(data).get(30, TimeUnit.SECONDS);
    }

    private static List<String> names(JsonObject answer) {
        List<String> names = new ArrayList<>();
        for (JsonElement command : answer.getAsJsonArray("commands")) {
            names.add(command.getAsJsonObject().get("name").getAsString());
        }
        return names;
    }

    @Test
    void aPlayerSeesTheCommandsTheirPermissionsAllow() throws Exception {
        PlayerRef steve = this.platform.join("Steve", "warps.use", "essentials.home.admin");
        JsonObject answer = commands(steve, null, 8000);
        // spawn needs no node; sethome needs either of its two; op and time need nodes Steve lacks.
        assertEquals(List.of("sethome", "spawn", "warp"), names(answer));
        assertEquals(3, answer.get("total").getAsInt());
        assertFalse(answer.get("truncated").getAsBoolean());
        JsonObject warp = answer.getAsJsonArray("commands").get(2).getAsJsonObject();
        assertEquals("/warp <name>", warp.get("usage").getAsString());
        assertEquals("Warps", warp.get("plugin").getAsString());
    }

    @Test
    void theConsoleSeesEveryCommandButNoScript() throws Exception {
        assertEquals(List.of("op", "sethome", "spawn", "time", "warp"), names(commands(null, null, 8000)));
    }

    @Test
    void aPluginFilterKeepsThatPluginsCommandsWhateverItsCase() throws Exception {
        assertEquals(List.of("sethome", "spawn"), names(commands(null, "essentials", 8000)));
    }

    @Test
    void theAnswerStopsAtItsSizeAndSaysSo() throws Exception {
        JsonObject answer = commands(null, null, 256);
        assertTrue(answer.get("truncated").getAsBoolean());
        assertEquals(5, answer.get("total").getAsInt());
        assertTrue(answer.getAsJsonArray("commands").size() < 5);
        assertTrue(answer.getAsJsonArray("commands").toString().length() <= 256);
    }

    @Test
    void answersAreKeptPerPermissionSetUntilTheMapChanges() throws Exception {
        PlayerRef steve = this.platform.join("Steve", "warps.use");
        PlayerRef alex = this.platform.join("Alex", "warps.use");
        PlayerRef op = this.platform.join("Op", "warps.use", "minecraft.command.op", "minecraft.command.time");
        JsonObject first = commands(steve, null, 8000);
        JsonObject shared = commands(alex, null, 8000);
        assertEquals(first, shared);
        assertNotSame(first, shared); // a copy each time: the link owns what it is handed
        assertEquals(1, this.knowledge.projected()); // Alex holds what Steve holds: Steve's answer
        assertEquals(List.of("op", "spawn", "time", "warp"), names(commands(op, null, 8000)));
        assertEquals(2, this.knowledge.projected());
        this.catalogue.commands = new ArrayList<>(this.catalogue.commands);
        this.catalogue.commands.add(command("home", "Essentials", "warps.use", null));
        assertEquals(List.of("home", "spawn", "warp"), names(commands(alex, null, 8000)));
        assertEquals(3, this.knowledge.projected());
        // Every request reads the map on the global executor (a change shows at once).
        assertEquals(4, this.catalogue.reads.get());
        java.util.concurrent.CompletableFuture<String> thread = new java.util.concurrent.CompletableFuture<>();
        this.platform.runGlobal(() -> thread.complete(Thread.currentThread().getName()));
        String global = thread.get(30, TimeUnit.SECONDS);
        assertTrue(this.catalogue.threads.stream().allMatch(global::equals), this.catalogue.threads.toString());
    }

    @Test
    void pluginsAreListedByNameWithTheirTextOnOneLine() throws Exception {
        JsonObject data = new JsonObject();
        data.addProperty("max_chars", 4000);
        JsonObject answer = this.knowledge.plugins(data).get(30, TimeUnit.SECONDS);
        JsonArray plugins = answer.getAsJsonArray("plugins");
        assertEquals(2, answer.get("total").getAsInt());
        assertEquals("Essentials", plugins.get(0).getAsJsonObject().get("name").getAsString());
        assertFalse(plugins.get(0).getAsJsonObject().get("enabled").getAsBoolean());
        assertTrue(plugins.get(0).getAsJsonObject().get("description").isJsonNull());
        assertEquals("Named places to go", plugins.get(1).getAsJsonObject().get("description").getAsString());
    }

    @Test
    void longDeclaredTextIsCutWithoutSplittingACharacter() {
        String emoji = "\uD83D\uDE00";
        String usage = "x".repeat(255) + emoji;
        JsonObject answer = ServerKnowledge.projectCommands(List.of(new CommandListing(
                new CommandFacts("long", null, List.of(), null, false), usage, null)), "", null, 8000);
        String shown = answer.getAsJsonArray("commands").get(0).getAsJsonObject().get("usage").getAsString();
        assertEquals("x".repeat(255), shown);
    }
}
