package dev.mineclaw.paper;

import java.util.UUID;
import org.bukkit.Server;
import org.bukkit.entity.Player;
import org.bukkit.plugin.Plugin;

/**
 * The one place the adapter schedules work. Paper implements Folia's global region and entity
 * schedulers too (running them on its main thread), so a single code path is right on both:
 * console work goes to the global region scheduler, work for a player to that player's entity
 * scheduler, whose retired callback tells the core the player is gone.
 */
final class RegionSchedulers {
    private final Plugin plugin;
    private final Server server;

    RegionSchedulers(Plugin plugin) {
        this.plugin = plugin;
        this.server = plugin.getServer();
    }

    /** Runs {@code task} on the global region (Paper: the main thread). Any thread. */
    void global(Runnable task) {
        // A disabled plugin may not schedule; the core's own timeout then answers the bridge.
        if (this.plugin.isEnabled()) {
            this.server.getGlobalRegionScheduler().execute(this.plugin, task);
        }
    }

    /** Runs {@code task} where {@code uuid}'s player is ticked, or {@code whenGone}. Any thread. */
    void forPlayer(UUID uuid, Runnable task, Runnable whenGone) {
        Player player = this.server.getPlayer(uuid);
        if (player == null || !this.plugin.isEnabled()) {
            whenGone.run();
            return;
        }
        // run() answers null when the entity is already retired; then the retired callback never fires.
        if (player.getScheduler().run(this.plugin, scheduled -> task.run(), whenGone) == null) {
            whenGone.run();
        }
    }
}
