package dev.mineclaw.testkit;

import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.CommandListing;
import dev.mineclaw.core.platform.PluginFacts;
import dev.mineclaw.core.platform.ServerCatalogue;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.TextRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import net.kyori.adventure.text.Component;

/**
 * An in-memory server: players with names, UUIDs, permissions, held items and looked-at blocks;
 * a global thread and one thread per player, with Folia's thread rules enforced on every access.
 * Everything it shows or runs is reported as an event.
 */
final class TestkitPlatform implements Platform {
    /** Console commands the stand-in server knows; anything else is "Unknown or incomplete command". */
    private static final Set<String> KNOWN_COMMANDS = Set.of("say", "give", "tp", "time", "weather", "gamemode",
            "kill", "effect", "list", "msg", "tell", "me", "summon", "setblock", "xp", "clear", "difficulty",
            "gamerule", "title", "tellraw", "playsound", "particle", "enchant", "spawnpoint", "teleport");

    private final String name;
    private final Consumer<JsonObject> events;
    private final ThreadRules rules;
    private final Logger logger = Logger.getLogger("mineclaw-testkit");
    private final Map<UUID, TestPlayer> players = new ConcurrentHashMap<>();
    private final ExecutorService global;
    private final DispatchScripts scripts = new DispatchScripts();
    private final TestkitRegistry registry;
    private final TestCommandMap commands = new TestCommandMap();

    TestkitPlatform(String name, Consumer<JsonObject> events, ThreadRules rules) {
        this.name = name;
        this.events = events;
        this.rules = rules;
        this.registry = new TestkitRegistry(rules);
        this.global = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(() -> {
                rules.globalThread(Thread.currentThread());
                runnable.run();
            }, "testkit-global");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Adds an online player; false if the name or UUID is taken. */
    boolean add(TestPlayer player) {
        for (TestPlayer existing : this.players.values()) {
            if (existing.ref().name().equalsIgnoreCase(player.ref().name())) {
                return false;
            }
        }
        return this.players.putIfAbsent(player.ref().uuid(), player) == null;
    }

    /** Removes the player with {@code playerName}; empty if none is online. */
    Optional<PlayerRef> remove(String playerName) {
        Optional<TestPlayer> player = byName(playerName);
        player.ifPresent(found -> {
            this.players.remove(found.ref().uuid());
            found.leave();
        });
        return player.map(TestPlayer::ref);
    }

    /** The item and recipe registries ({@code recipe.add}, {@code registry.reload}). */
    TestkitRegistry registry() {
        return this.registry;
    }

    @Override
    public TestkitRegistry gameRegistry() {
        return this.registry;
    }

    /** The scripted command outcomes ({@code dispatch.script}). */
    DispatchScripts scripts() {
        return this.scripts;
    }

    /** The command map ({@code command.register}). */
    TestCommandMap commands() {
        return this.commands;
    }

    @Override
    public ServerCatalogue serverCatalogue() {
        return new ServerCatalogue() {
            @Override
            public List<PluginFacts> plugins() {
                TestkitPlatform.this.rules.requireGlobal("plugins");
                return TestkitPlatform.this.commands.plugins();
            }

            @Override
            public List<CommandListing> commands() {
                TestkitPlatform.this.rules.requireGlobal("commands");
                return TestkitPlatform.this.commands.all();
            }
        };
    }

    @Override
    public Optional<CommandFacts> resolveCommand(String label) {
        this.rules.requireGlobal("resolveCommand");
        return this.commands.resolve(label);
    }

    Optional<TestPlayer> byName(String playerName) {
        return this.players.values().stream()
                .filter(player -> player.ref().name().equals(playerName))
                .findFirst();
    }

    void shutdown() {
        this.global.shutdownNow();
        this.players.values().forEach(TestPlayer::leave);
    }

    boolean awaitGlobalIdle() throws InterruptedException {
        java.util.concurrent.CountDownLatch idle = new java.util.concurrent.CountDownLatch(1);
        this.global.execute(idle::countDown);
        return idle.await(5, TimeUnit.SECONDS);
    }

    @Override
    public String platformName() {
        return this.name;
    }

    @Override
    public String pluginVersion() {
        return TestkitMain.PLUGIN_VERSION;
    }

    @Override
    public String minecraftVersion() {
        return TestkitMain.MINECRAFT_VERSION;
    }

    @Override
    public int dataVersion() {
        return TestkitMain.DATA_VERSION;
    }

    @Override
    public Logger logger() {
        return this.logger;
    }

    @Override
    public void runGlobal(Runnable task) {
        this.global.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException exc) {
                this.logger.log(Level.WARNING, "global task failed", exc);
            }
        });
    }

    @Override
    public void runForPlayer(UUID player, Runnable task, Runnable whenGone) {
        TestPlayer found = this.players.get(player);
        if (found == null) {
            whenGone.run();
        } else {
            found.run(task, whenGone);
        }
    }

    @Override
    public List<PlayerRef> onlinePlayers() {
        List<PlayerRef> refs = new ArrayList<>();
        this.players.values().forEach(player -> refs.add(player.ref()));
        return List.copyOf(refs);
    }

    @Override
    public boolean hasPermission(UUID player, String node) {
        TestPlayer found = owned(player, "hasPermission");
        return found.permissions().contains(node);
    }

    @Override
    public PlayerFacts playerFacts(UUID player) {
        return owned(player, "playerFacts").facts().player();
    }

    @Override
    public InventoryFacts inventory(UUID player) {
        return owned(player, "inventory").facts().inventory();
    }

    @Override
    public BlockLookup lookedAtBlock(UUID player, int maxDistance) {
        return owned(player, "lookedAtBlock").facts().look().trace(maxDistance);
    }

    @Override
    public BlockLookup blockAtFeet(UUID player) {
        return owned(player, "blockAtFeet").facts().feet();
    }

    @Override
    public void sendMessage(UUID player, Component text) {
        TestPlayer found = owned(player, "sendMessage");
        JsonObject approval = PromptEvents.approval(found.ref().name(), text);
        if (approval != null) {
            this.events.accept(approval);
        } else {
            shown("message", found.ref().name(), text);
        }
    }

    @Override
    public void sendActionBar(UUID player, Component text) {
        TestPlayer found = owned(player, "sendActionBar");
        shown("actionbar", found.ref().name(), text);
    }

    @Override
    public boolean opensBooks() {
        return true;
    }

    /** A book opened on the player's screen: one {@code book} event with each page as plain text. */
    @Override
    public void openBook(UUID player, String title, List<Component> pages) {
        TestPlayer found = owned(player, "openBook");
        JsonObject event = new JsonObject();
        event.addProperty("event", "book");
        event.addProperty("to", found.ref().name());
        event.addProperty("title", title);
        com.google.gson.JsonArray shown = new com.google.gson.JsonArray();
        for (Component page : pages) {
            shown.add(TextRenderer.plain(page));
        }
        event.add("pages", shown);
        this.events.accept(event);
    }

    @Override
    public boolean dispatchAsPlayer(UUID player, String command) {
        TestPlayer found = owned(player, "dispatchAsPlayer");
        dispatched(found.ref().name(), command);
        Optional<DispatchScripts.Script> script = this.scripts.find(command);
        if (script.isPresent()) {
            return DispatchScripts.player(script.get(), command);
        }
        return isKnown(command);
    }

    @Override
    public int broadcast(Component text) {
        this.rules.requireGlobal("broadcast");
        shown("message", "*", text);
        return this.players.size();
    }

    @Override
    public void sendConsole(Component text) {
        this.rules.requireGlobal("sendConsole");
        shown("message", "console", text);
    }

    @Override
    public ConsoleDispatch dispatchConsole(String command) {
        this.rules.requireGlobal("dispatchConsole");
        dispatched("console", command);
        Optional<DispatchScripts.Script> script = this.scripts.find(command);
        if (script.isPresent()) {
            return DispatchScripts.console(script.get(), command);
        }
        if (!isKnown(command)) {
            return new ConsoleDispatch(false, List.of("Unknown or incomplete command: " + firstWord(command)));
        }
        return new ConsoleDispatch(true, List.of("Ran: " + command));
    }

    /** The player, after checking the caller is on that player's thread. */
    private TestPlayer owned(UUID player, String what) {
        TestPlayer found = this.players.get(player);
        if (found == null) {
            throw new IllegalStateException(what + ": player " + player + " is not online");
        }
        this.rules.requirePlayer(found, what);
        return found;
    }

    private void shown(String kind, String to, Component text) {
        JsonObject event = EventOut.event(kind);
        event.addProperty("to", to);
        event.addProperty("text", TextRenderer.plain(text));
        this.events.accept(event);
    }

    private void dispatched(String executor, String command) {
        JsonObject event = EventOut.event("dispatch");
        event.addProperty("executor", executor);
        event.addProperty("command", command);
        this.events.accept(event);
    }

    private static boolean isKnown(String command) {
        return KNOWN_COMMANDS.contains(firstWord(command).toLowerCase(Locale.ROOT));
    }

    private static String firstWord(String command) {
        int space = command.indexOf(' ');
        return space < 0 ? command : command.substring(0, space);
    }
}
