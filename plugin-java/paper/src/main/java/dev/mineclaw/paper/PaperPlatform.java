package dev.mineclaw.paper;

import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.FeedbackCollector;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.TextRenderer;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.logging.Logger;
import net.kyori.adventure.inventory.Book;
import net.kyori.adventure.text.Component;
import org.bukkit.Server;
import org.bukkit.command.CommandSender;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;

/**
 * The core's {@link Platform} over the Bukkit API. Each method is one read or one call; the
 * thread each may run on is the {@link Platform} contract's, which {@link RegionSchedulers} keeps.
 */
final class PaperPlatform implements Platform {
    private final Plugin plugin;
    private final Server server;
    private final RegionSchedulers schedulers;
    private final boolean folia;
    private final SnapshotReads snapshots;
    private final PaperRegistry registry;
    private final PaperCatalogue catalogue;

    PaperPlatform(Plugin plugin, RegionSchedulers schedulers, boolean folia) {
        this.plugin = plugin;
        this.server = plugin.getServer();
        this.schedulers = schedulers;
        this.folia = folia;
        this.snapshots = new SnapshotReads(this.server);
        this.registry = new PaperRegistry(this.server, plugin.getLogger());
        this.catalogue = new PaperCatalogue(this.server);
    }

    @Override
    public String platformName() {
        return this.folia ? "folia" : "paper";
    }

    @Override
    public String pluginVersion() {
        return this.plugin.getPluginMeta().getVersion();
    }

    @Override
    public String minecraftVersion() {
        return this.server.getMinecraftVersion();
    }

    @Override
    public PaperCatalogue serverCatalogue() {
        return this.catalogue;
    }

    /** Also a listener: the plugin registers it so reloads move the registry's stamp. */
    @Override
    public PaperRegistry gameRegistry() {
        return this.registry;
    }

    @Override
    @SuppressWarnings("deprecation") // UnsafeValues is the one place every Paper version states it
    public int dataVersion() {
        try {
            return Math.max(0, this.server.getUnsafe().getDataVersion());
        } catch (RuntimeException | LinkageError exc) {
            return 0; // not stated: the hello leaves it out
        }
    }

    @Override
    public Logger logger() {
        return this.plugin.getLogger();
    }

    @Override
    public void runGlobal(Runnable task) {
        this.schedulers.global(task);
    }

    @Override
    public void runForPlayer(UUID player, Runnable task, Runnable whenGone) {
        this.schedulers.forPlayer(player, task, whenGone);
    }

    @Override
    public List<PlayerRef> onlinePlayers() {
        // Paper's online-player collection is safe to copy from any thread.
        return this.server.getOnlinePlayers().stream().map(PaperPlatform::ref).toList();
    }

    @Override
    public boolean hasPermission(UUID player, String node) {
        return online(player).hasPermission(node);
    }

    @Override
    public PlayerFacts playerFacts(UUID player) {
        return this.snapshots.player(online(player));
    }

    @Override
    public InventoryFacts inventory(UUID player) {
        return this.snapshots.inventory(online(player));
    }

    @Override
    public BlockLookup lookedAtBlock(UUID player, int maxDistance) {
        return this.snapshots.lookedAt(online(player), maxDistance);
    }

    @Override
    public BlockLookup blockAtFeet(UUID player) {
        return this.snapshots.atFeet(online(player));
    }

    @Override
    public void sendMessage(UUID player, Component text) {
        online(player).sendMessage(text);
    }

    @Override
    public void sendActionBar(UUID player, Component text) {
        online(player).sendActionBar(text);
    }

    @Override
    public boolean opensBooks() {
        return true;
    }

    /** Adventure's book view: shown on the player's screen, no item given. */
    @Override
    public void openBook(UUID player, String title, List<Component> pages) {
        online(player).openBook(Book.book(Component.text(title), Component.text(this.plugin.getName()), pages));
    }

    @Override
    public boolean dispatchAsPlayer(UUID player, String command) {
        return this.server.dispatchCommand(online(player), command);
    }

    @Override
    public int broadcast(Component text) {
        this.server.getConsoleSender().sendMessage(text);
        int players = 0;
        for (Player online : this.server.getOnlinePlayers()) {
            online.sendMessage(text);
            players++;
        }
        return players;
    }

    @Override
    public void sendConsole(Component text) {
        this.server.getConsoleSender().sendMessage(text);
    }

    @Override
    public Optional<CommandFacts> resolveCommand(String label) {
        return CommandLookup.facts(this.server.getCommandMap(), label);
    }

    @Override
    public ConsoleDispatch dispatchConsole(String command) {
        FeedbackCollector feedback = new FeedbackCollector();
        return feedback.result(dispatchConsole(command, feedback));
    }

    /**
     * Paper's feedback sender: it has the console's permissions, vanilla commands accept it as a
     * command source, and it hands over what it is told, also later (the core collects for a
     * bounded window). Each line is also written to the server log, as the console would show it.
     * Paper offers no way to capture the real {@code ConsoleCommandSender}'s output, so a plugin
     * command that insists on {@code instanceof ConsoleCommandSender} refuses this sender.
     */
    @Override
    public boolean dispatchConsole(String command, FeedbackCollector feedback) {
        CommandSender sender = this.server.createCommandSender(line -> {
            String plain = TextRenderer.plain(line);
            feedback.add(plain);
            this.plugin.getLogger().info("[/" + command + "] " + plain);
        });
        return this.server.dispatchCommand(sender, command);
    }

    static PlayerRef ref(Player player) {
        return new PlayerRef(player.getUniqueId(), player.getName());
    }

    private Player online(UUID uuid) {
        Player player = this.server.getPlayer(uuid);
        if (player == null) {
            throw new PlayerGoneException(uuid);
        }
        return player;
    }
}
