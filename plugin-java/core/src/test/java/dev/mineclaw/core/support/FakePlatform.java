package dev.mineclaw.core.support;

import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.FeedbackCollector;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.TextRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.Logger;
import net.kyori.adventure.text.Component;

/**
 * A small platform for core unit tests: one global thread, players with permissions, and a log
 * of what was shown. (The testkit module has the full stand-in server with thread checks.)
 */
public final class FakePlatform implements Platform {
    /** One line shown: to a player's name, "*" for broadcasts, or "console". */
    public record Shown(String to, String text) {}

    private final ExecutorService global = Executors.newSingleThreadExecutor();
    private final Map<UUID, PlayerRef> players = new ConcurrentHashMap<>();
    private final Map<UUID, Set<String>> permissions = new ConcurrentHashMap<>();
    private final List<Shown> shown = new CopyOnWriteArrayList<>();
    private final List<String> dispatched = new CopyOnWriteArrayList<>();
    private final List<Component> messages = new CopyOnWriteArrayList<>();
    private final Map<UUID, PlayerFacts> playerFacts = new ConcurrentHashMap<>();
    private final Map<UUID, InventoryFacts> inventories = new ConcurrentHashMap<>();
    private final Map<UUID, BlockLookup> looked = new ConcurrentHashMap<>();
    private final Map<UUID, BlockLookup> feet = new ConcurrentHashMap<>();
    private final List<Integer> lookDistances = new CopyOnWriteArrayList<>();
    private volatile String lateLine;
    private final Map<String, CommandFacts> commands = new ConcurrentHashMap<>();

    /** Makes {@code labels} resolve to {@code facts} ({@code command.resolve}). */
    public void command(CommandFacts facts, String... labels) {
        for (String label : labels) {
            this.commands.put(label, facts);
        }
    }

    @Override
    public Optional<CommandFacts> resolveCommand(String label) {
        return Optional.ofNullable(this.commands.get(label));
    }

    /** Sets what the snapshot reads of {@code player} return. */
    public void facts(PlayerRef player, PlayerFacts facts, InventoryFacts inventory, BlockLookup look,
            BlockLookup underFeet) {
        this.playerFacts.put(player.uuid(), facts);
        this.inventories.put(player.uuid(), inventory);
        this.looked.put(player.uuid(), look);
        this.feet.put(player.uuid(), underFeet);
    }

    /** The components sent to players' chat, in order. */
    public List<Component> messages() {
        return this.messages;
    }

    /** The distances {@link #lookedAtBlock} was asked for. */
    public List<Integer> lookDistances() {
        return this.lookDistances;
    }

    public PlayerRef join(String name, String... nodes) {
        PlayerRef player = new PlayerRef(UUID.nameUUIDFromBytes(name.getBytes()), name);
        this.players.put(player.uuid(), player);
        this.permissions.put(player.uuid(), Set.of(nodes));
        return player;
    }

    public void leave(PlayerRef player) {
        this.players.remove(player.uuid());
    }

    public List<Shown> shown() {
        return this.shown;
    }

    public List<String> dispatched() {
        return this.dispatched;
    }

    public void shutdown() {
        this.global.shutdownNow();
    }

    @Override
    public String platformName() {
        return "testkit";
    }

    @Override
    public String pluginVersion() {
        return "0.1.0";
    }

    @Override
    public String minecraftVersion() {
        return "1.21.8";
    }

    @Override
    public Logger logger() {
        return Logger.getLogger("fake-platform");
    }

    @Override
    public void runGlobal(Runnable task) {
        this.global.execute(task);
    }

    @Override
    public void runForPlayer(UUID player, Runnable task, Runnable whenGone) {
        this.global.execute(() -> {
            if (this.players.containsKey(player)) {
                task.run();
            } else {
                whenGone.run();
            }
        });
    }

    @Override
    public List<PlayerRef> onlinePlayers() {
        return List.copyOf(new ArrayList<>(this.players.values()));
    }

    @Override
    public boolean hasPermission(UUID player, String node) {
        return this.permissions.getOrDefault(player, Set.of()).contains(node);
    }

    @Override
    public PlayerFacts playerFacts(UUID player) {
        return required(this.playerFacts.get(player), player);
    }

    @Override
    public InventoryFacts inventory(UUID player) {
        return required(this.inventories.get(player), player);
    }

    @Override
    public BlockLookup lookedAtBlock(UUID player, int maxDistance) {
        this.lookDistances.add(maxDistance);
        return required(this.looked.get(player), player);
    }

    @Override
    public BlockLookup blockAtFeet(UUID player) {
        return required(this.feet.get(player), player);
    }

    private static <T> T required(T value, UUID player) {
        if (value == null) {
            throw new IllegalStateException("no facts set for " + player);
        }
        return value;
    }

    @Override
    public void sendMessage(UUID player, Component text) {
        this.messages.add(text);
        this.shown.add(new Shown(this.players.get(player).name(), TextRenderer.plain(text)));
    }

    @Override
    public void sendActionBar(UUID player, Component text) {
        this.shown.add(new Shown("actionbar:" + this.players.get(player).name(), TextRenderer.plain(text)));
    }

    @Override
    public boolean dispatchAsPlayer(UUID player, String command) {
        this.dispatched.add(this.players.get(player).name() + ":" + command);
        return true;
    }

    @Override
    public int broadcast(Component text) {
        this.shown.add(new Shown("*", TextRenderer.plain(text)));
        return this.players.size();
    }

    @Override
    public void sendConsole(Component text) {
        this.shown.add(new Shown("console", TextRenderer.plain(text)));
    }

    /**
     * Console commands then also answer {@code line} from another thread just after they return,
     * as a plugin command answering from a scheduled task does.
     */
    public void answerLater(String line) {
        this.lateLine = line;
    }

    @Override
    public boolean dispatchConsole(String command, FeedbackCollector feedback) {
        boolean accepted = Platform.super.dispatchConsole(command, feedback);
        String late = this.lateLine;
        if (late != null) {
            new Thread(() -> feedback.add(late), "fake-late-feedback").start();
        }
        return accepted;
    }

    @Override
    public ConsoleDispatch dispatchConsole(String command) {
        this.dispatched.add("console:" + command);
        return new ConsoleDispatch(!command.startsWith("nosuch"), List.of("ran " + command));
    }
}
