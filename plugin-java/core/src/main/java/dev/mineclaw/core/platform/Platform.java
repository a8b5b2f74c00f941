package dev.mineclaw.core.platform;

import dev.mineclaw.core.gamefacts.GameRegistry;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.logging.Logger;
import net.kyori.adventure.text.Component;

/**
 * What the core needs from a server. Implementations are thin: they schedule, read and apply, and
 * make no decision of their own.
 *
 * <p>Thread rules (Folia's, enforced by the testkit on every platform): anything that reads or
 * changes one player runs on that player's executor ({@link #runForPlayer}); console work and
 * broadcasts run on the global executor ({@link #runGlobal}). Methods marked "any thread" are
 * safe everywhere.
 */
public interface Platform {
    /** The protocol's platform name: {@code "paper"}, {@code "folia"} or {@code "testkit"}. Any thread. */
    String platformName();

    /** The plugin's version, 1-64 characters. Any thread. */
    String pluginVersion();

    /** The server's Minecraft version, 1-64 characters. Any thread. */
    String minecraftVersion();

    /** The server's data version (the number the game stamps its saves with), 0 when unknown. Any thread. */
    default int dataVersion() {
        return 0;
    }

    /** Where the core logs. Any thread. */
    Logger logger();

    /** Runs {@code task} on the global executor (Folia's global region scheduler). Any thread. */
    void runGlobal(Runnable task);

    /**
     * Runs {@code task} on the executor that owns {@code player}, or {@code whenGone} (on any
     * thread) if the player is not online or leaves before the task runs. Any thread.
     */
    void runForPlayer(UUID player, Runnable task, Runnable whenGone);

    /** The players online now, as an immutable list. Any thread. */
    List<PlayerRef> onlinePlayers();

    /** Whether {@code player} holds {@code node}. Player's executor. */
    boolean hasPermission(UUID player, String node);

    /**
     * The facts {@code snapshot.player} projects: position, vitals, game mode, movement flags,
     * surroundings and active effects, read from the live player. Player's executor.
     */
    PlayerFacts playerFacts(UUID player);

    /**
     * Every non-empty slot of {@code player}'s inventory (storage, armour, off hand) with the held
     * hotbar index, for {@code snapshot.item}. Reads type, amount, plain custom name,
     * enchantments and damage only. Player's executor.
     */
    InventoryFacts inventory(UUID player);

    /**
     * The first block that is not air (nor cave or void air) along {@code player}'s line of sight
     * from the eyes, at most {@code maxDistance} blocks away, for {@code snapshot.block} mode
     * {@code look}. Never loads a chunk: the search stops with {@link BlockLookup#unloaded()} as
     * soon as it would read a block in a chunk that is not loaded (or, on Folia, not owned by the
     * current region); {@link BlockLookup#miss()} when nothing is within reach. Fluids do not
     * stop it. Player's executor.
     *
     * @param maxDistance 1-128 blocks
     */
    BlockLookup lookedAtBlock(UUID player, int maxDistance);

    /**
     * The block the player stands on: the one holding the point 0.01 below the feet (so a slab
     * or a carpet counts), which may be air when the player is not on the ground. Its chunk is the
     * player's own, so the answer is a hit; {@link BlockLookup#unloaded()} only if the server
     * says otherwise. Player's executor.
     */
    BlockLookup blockAtFeet(UUID player);

    /** Shows {@code text} in {@code player}'s chat. Player's executor. */
    void sendMessage(UUID player, Component text);

    /** Shows {@code text} on {@code player}'s action bar. Player's executor. */
    void sendActionBar(UUID player, Component text);

    /** Runs {@code command} (no leading slash) as {@code player}; false if the server refused it. Player's executor. */
    boolean dispatchAsPlayer(UUID player, String command);

    /**
     * What the server's command map says about {@code label} (lower case, namespace kept:
     * {@code essentials:esudo}): empty when no command has that label. Global executor.
     */
    Optional<CommandFacts> resolveCommand(String label);

    /** Shows {@code text} to every online player and the console; returns the player count. Global executor. */
    int broadcast(Component text);

    /** Writes {@code text} to the server console. Global executor. */
    void sendConsole(Component text);

    /** Runs {@code command} as the console, capturing what it writes back. Global executor. */
    ConsoleDispatch dispatchConsole(String command);

    /**
     * Runs {@code command} as the console; what it writes back goes to {@code feedback}, also
     * after this returns and from any thread (a command may answer later, as many plugin
     * commands do). Global executor.
     *
     * @return whether the server accepted it as a command
     */
    default boolean dispatchConsole(String command, FeedbackCollector feedback) {
        ConsoleDispatch result = dispatchConsole(command);
        result.feedback().forEach(feedback::add);
        return result.dispatched();
    }

    /**
     * The server's item and recipe registries for the game-fact requests, or null when this
     * platform cannot read them (the plugin then does not announce {@code game_facts}). Any thread.
     */
    default GameRegistry gameRegistry() {
        return null;
    }

    /**
     * The server's installed plugins and command map for {@code server.plugins} and
     * {@code server.commands}, or null when this platform cannot list them (the plugin then does
     * not announce {@code server_knowledge}). Any thread.
     */
    default ServerCatalogue serverCatalogue() {
        return null;
    }

    /** Whether {@link #openBook} works here (the plugin then announces {@code books}). Any thread. */
    default boolean opensBooks() {
        return false;
    }

    /**
     * Opens a written book with {@code title} and {@code pages} on {@code player}'s screen,
     * without giving them an item. Player's executor.
     */
    default void openBook(UUID player, String title, List<Component> pages) {
        throw new UnsupportedOperationException("this platform opens no books");
    }
}
