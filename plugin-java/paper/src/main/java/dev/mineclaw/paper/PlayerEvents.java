package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerQuitEvent;

/** Joins and quits, told to the bridge (a quit invalidates that player's pending confirmations). */
final class PlayerEvents implements Listener {
    private final MineclawCore core;

    PlayerEvents(MineclawCore core) {
        this.core = core;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onJoin(PlayerJoinEvent event) {
        this.core.playerJoined(PaperPlatform.ref(event.getPlayer()));
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onQuit(PlayerQuitEvent event) {
        this.core.playerQuit(PaperPlatform.ref(event.getPlayer()));
    }
}
